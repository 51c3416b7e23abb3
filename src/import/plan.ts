import { artworkFromPost, viewsText } from '../domain/artwork.js';
import { fieldChanges, mergeNonNull } from '../domain/diff.js';
import { eventFromPost } from '../domain/event.js';
import { artworkFingerprint } from '../domain/fingerprint.js';
import { eventSlug } from '../domain/slug.js';
import { ArtworkListItem, type ViewInput } from '../schemas/artworks.js';
import { EventListItem } from '../schemas/events.js';
import { WRITABLE, type Kind } from './columns.js';
import type { Row } from './rows.js';

/**
 * Which record each row of an import file denotes, by the server's own matching rules (docs/api.md, Artworks; docs/api.md, Events),
 * computed before anything is sent: to report rows of one file that would overwrite each other, and to
 * compare the file with the records the server lists (the planner's steps, src/import/planner.ts).
 */

/** What names a record: the artwork's `external_id` when it has one, else its fingerprint or the event's slug. */
export interface Identity {
  externalId: string | null;
  /** The fingerprint of an artwork, the slug of an event. */
  match: string;
}

/** A valid row, normalized as the server would store it, with its identity. */
export interface Candidate {
  row: Row;
  input: Record<string, unknown> & { title: string };
  identity: Identity;
}

export function candidate(kind: Kind, row: Row, entitySlug: string): Candidate {
  const input = (kind === 'artworks' ? artworkFromPost(structuredClone(row.body) as never) : eventFromPost(structuredClone(row.body) as never)) as Candidate['input'];
  return { row, input, identity: identify(kind, input, entitySlug) };
}

function identify(kind: Kind, input: Candidate['input'], entitySlug: string): Identity {
  if (kind === 'events') return { externalId: null, match: eventSlug(entitySlug, input.title) };
  return {
    externalId: (input.external_id as string | null | undefined) ?? null,
    match: artworkFingerprint(input),
  };
}

/**
 * The rows that denote the same record as an earlier row, each with the reason: sent together they
 * would overwrite each other, so only the first is sent. An artwork row without `external_id` whose
 * fingerprint another row has with an `external_id` is reported too: the server could match either.
 */
export function findDuplicates(kind: Kind, candidates: Candidate[]): Map<Candidate, string> {
  const what = kind === 'artworks' ? 'artwork' : 'event';
  const duplicates = new Map<Candidate, string>();
  const byExternalId = new Map<string, Candidate>();
  const byMatch = new Map<string, Candidate>();
  const withExternalIdByMatch = new Map<string, Candidate>();
  for (const c of candidates) if (c.identity.externalId !== null && !withExternalIdByMatch.has(c.identity.match)) withExternalIdByMatch.set(c.identity.match, c);
  const sameMatch = kind === 'artworks' ? 'same artist, title and year' : 'same title';
  for (const c of candidates) {
    const { externalId, match } = c.identity;
    if (externalId !== null) {
      const first = byExternalId.get(externalId);
      if (first) duplicates.set(c, `same ${what} as ${first.row.label} (external_id "${externalId}"): not sent`);
      else byExternalId.set(externalId, c);
      continue;
    }
    const first = byMatch.get(match);
    const edition = withExternalIdByMatch.get(match);
    if (first) duplicates.set(c, `same ${what} as ${first.row.label} (${sameMatch}): not sent`);
    else if (edition) duplicates.set(c, `${sameMatch} as ${edition.row.label}, which has an external_id: give this row one too; not sent`);
    else byMatch.set(match, c);
  }
  return duplicates;
}

/** A record as the server lists it: the listed fields only (descriptions and a few URLs are not listed). */
export type Listed = { id: number; title: string } & Record<string, unknown>;

export type Match =
  | { action: 'create' }
  | { action: 'match'; record: Listed }
  | { action: 'ambiguous'; candidates: number[] };

/** The server's records of one kind, indexed the way the server matches a POST. */
export class Catalog {
  private readonly byExternalId = new Map<string, Listed>();
  private readonly byMatch = new Map<string, Listed[]>();

  readonly records: Listed[] = [];

  constructor(readonly kind: Kind, records: readonly Listed[], private readonly entitySlug: string) {
    this.add(records);
  }

  /**
   * More records (a page of the list): identifying one hashes its fingerprint, so a caller on the event
   * loop adds a large catalog a page at a time and yields between pages (src/apply/index.ts).
   */
  add(records: readonly Listed[]): void {
    for (const record of records) {
      this.records.push(record);
      const { externalId, match } = identify(this.kind, record, this.entitySlug);
      if (externalId !== null) this.byExternalId.set(externalId, record);
      const sharing = this.byMatch.get(match);
      if (sharing) sharing.push(record);
      else this.byMatch.set(match, [record]);
    }
  }

  /** docs/api.md, Artworks: `external_id` first, else the fingerprint (of an artwork without one), else a new record. */
  match({ externalId, match }: Identity): Match {
    const sharing = this.byMatch.get(match) ?? [];
    if (externalId !== null) {
      const record = this.byExternalId.get(externalId) ?? sharing.find((r) => r.external_id == null);
      return record ? { action: 'match', record } : { action: 'create' };
    }
    if (sharing.length > 1) return { action: 'ambiguous', candidates: sharing.map((r) => r.id) };
    return sharing[0] ? { action: 'match', record: sharing[0] } : { action: 'create' };
  }
}

const LISTED: Record<Kind, string[]> = { artworks: Object.keys(ArtworkListItem.properties), events: Object.keys(EventListItem.properties) };

/**
 * Whether the list answer shows every field the row gives (its body as read, not the normalized
 * input: measures the server reads from a listed `dimensions` text need no full record); otherwise
 * the full record is needed to compare.
 */
export const listShows = (kind: Kind, body: Record<string, unknown>): boolean =>
  Object.keys(body).every((field) => !WRITABLE[kind].includes(field) || LISTED[kind].includes(field));

/** The fields a POST of `input` would change on `record` (the merge rule: non-null fields win). */
export function changedFields(kind: Kind, record: Record<string, unknown>, input: Candidate['input']): string[] {
  // The record's views as the API shows them (with each image's state), compared as the input holds them.
  const views = record.additional_images;
  const compared = Array.isArray(views) ? { ...record, additional_images: viewsText(views as ViewInput[]) } : record;
  // Only the fields the record shows: a listed record lacks the measures read from its listed `dimensions`.
  const fields = WRITABLE[kind].filter((field) => field in compared);
  return Object.keys(fieldChanges(compared, mergeNonNull(compared, input), fields));
}
