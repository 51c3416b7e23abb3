/**
 * How a list is read (docs/api.md, Pagination and polling): by `page` (a number from 1; its cost grows with the depth) or by
 * `after` (a record id; records with a greater id, at the same cost at any depth). Not both.
 */
export interface PageRequest {
  limit: number;
  page?: number | undefined;
  after?: number | undefined;
}

/** What every list answer says besides its items. */
export interface ListedPage {
  total: number;
  hasMore: boolean;
  /** The last item's id; null for an empty page. */
  nextAfter: number | null;
}
