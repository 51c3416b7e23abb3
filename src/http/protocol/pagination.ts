import type { FastifyReply, FastifyRequest } from 'fastify';
import { invalidFields } from '../../domain/errors.js';
import type { ListedPage, PageRequest } from '../../store/pages.js';

interface ListQuery {
  page?: number | undefined;
  after?: number | undefined;
  limit: number;
}

/** How a list request pages (docs/api.md, Pagination and polling): `after` and `page` exclude each other. */
export function pageRequest({ page, after, limit }: ListQuery): PageRequest {
  if (page !== undefined && after !== undefined) {
    throw invalidFields([{ field: 'after', message: 'cannot be combined with page: follow next_after, or count pages' }]);
  }
  return { limit, page, after };
}

/**
 * The members every list answer carries besides its items, and the `Link: <…>; rel="next"` header
 * when more follow: the same request with `after` set to this page's last id, or — for a request that
 * counts pages, or a list ordered by date — with the next page number.
 */
export function pageMembers(request: FastifyRequest, reply: FastifyReply, { limit, page, after }: PageRequest, listed: ListedPage, cursor = true) {
  const byCursor = cursor && page === undefined;
  if (listed.hasMore) {
    const [path, search = ''] = request.url.split('?', 2) as [string, string?];
    const query = new URLSearchParams(search);
    if (byCursor) query.set('after', String(listed.nextAfter));
    else query.set('page', String((page ?? 1) + 1));
    reply.header('link', `<${path}?${query.toString()}>; rel="next"`);
  }
  return {
    total: listed.total,
    ...(after === undefined ? { page: page ?? 1 } : {}),
    limit,
    has_more: listed.hasMore,
    next_after: listed.nextAfter,
  };
}
