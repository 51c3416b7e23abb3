import { sql, type Expression, type SqlBool } from 'kysely';
import type { ChangeEntityType, ChangelogEntryType } from '../schemas/changelog.js';
import { read } from '../db/run.js';
import { statementPerPageSize, type Params } from '../db/statement.js';
import type { ArtworkRow, ChangelogRow, Db, EventRow, ImageStatus } from '../db/types.js';
import type { FieldChanges } from '../domain/diff.js';
import { all } from '../db/work.js';
import { isPostgres } from './sql.js';
import { statsOf, type EntityStats } from './stats.js';
import { imageCountsWork, imageStatusIs, type ImageCounts } from './images.js';

/** The console's lists (docs/console.md, Artworks and events): searched, filtered, paged by cursor (`after`: ids in ascending order). */
export const CONSOLE_PAGE_MAX = 100;

/**
 * Case-insensitive containment, as cheap as each dialect makes it. SQLite's LIKE ignores the case of
 * ASCII letters (only: Ü and ü differ) without a lower() per row (2× faster); a search that matches
 * nothing reads all of a catalog's titles and artists, on the reader thread. PostgreSQL compares
 * lower(column) with a lower-cased pattern, which the trigram indexes of migration 009 answer.
 */
const like = (db: Db, column: 'title' | 'artist_name', pattern: Expression<string>): Expression<SqlBool> =>
  (isPostgres(db) ? sql<SqlBool>`lower(${sql.ref(column)}) like ${pattern} escape '\\'` : sql<SqlBool>`${sql.ref(column)} like ${pattern} escape '\\'`);
/** The LIKE pattern that finds `text` anywhere (see `like`). */
const containing = (db: Db, text: string): string => `%${(isPostgres(db) ? text.toLowerCase() : text).replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

export type ArtworkListRow = Pick<ArtworkRow, 'id' | 'title' | 'artist_name' | 'creation_year' | 'price' | 'currency' | 'availability' | 'external_id' | 'image_url'>;
const ARTWORK_COLUMNS = ['id', 'title', 'artist_name', 'creation_year', 'price', 'currency', 'availability', 'external_id', 'image_url'] as const;

interface ArtworkSearch { entityId: number; after: number; pattern: string; availability: string; imageStatus: ImageStatus | null }

/**
 * Artworks by id after a cursor. Without a search it walks the (entity_id[, availability], id) index
 * (a point statement); a search by title or artist, or a filter by image state, filters the entity's
 * artworks as it walks them, a scan (SQLite: on the reader thread) whose cost grows with how far the
 * next match lies. On PostgreSQL a search is planned with its pattern (`planPerRun`): a rare text is
 * found through the trigram indexes (a few rows whatever the catalog's size), a common one by that
 * walk, which meets a page of matches early. Other shapes, one statement each, are planned once per
 * connection: an "availability or any" condition would keep that plan from the availability index.
 */
const artworksStatement = (searching: boolean, filtered: boolean, byImage: boolean) => statementPerPageSize(CONSOLE_PAGE_MAX + 1, (db, p: Params<ArtworkSearch>, limit) => {
  let query = db.selectFrom('artworks').select(ARTWORK_COLUMNS).where('entity_id', '=', p.entityId).where('id', '>', p.after);
  if (filtered) query = query.where('availability', '=', sql<'sold'>`${p.availability}`);
  if (searching) query = query.where((eb) => eb.or([like(db, 'title', p.pattern), like(db, 'artist_name', p.pattern)]));
  if (byImage) query = query.where((eb) => imageStatusIs(db, eb, 'artworks', p.imageStatus));
  return query.orderBy('id').limit(sql.lit(limit));
}, searching || byImage ? { cost: 'scan', planPerRun: searching } : { cost: 'point' });
const shapeKey = (...flags: boolean[]): string => flags.map(Number).join('');
const artworkStatements = new Map([false, true].flatMap((searching) => [false, true].flatMap((filtered) => [false, true].map((byImage) =>
  [shapeKey(searching, filtered, byImage), artworksStatement(searching, filtered, byImage)] as const))));

export interface ConsolePage<R> {
  rows: R[];
  /** The cursor of the next page, or null at the end. */
  nextAfter: number | null;
}

function paged<R extends { id: number }>(rows: R[], limit: number): ConsolePage<R> {
  const page = rows.slice(0, limit);
  return { rows: page, nextAfter: rows.length > limit ? page.at(-1)!.id : null };
}

export interface ArtworkFilter {
  search?: string | undefined;
  availability?: 'available' | 'reserved' | 'sold' | 'not_for_sale' | undefined;
  /** Only records whose image is in this state (`image_status`, docs/api.md, Images). */
  imageStatus?: ImageStatus | undefined;
  after: number;
  limit: number;
}

export function searchArtworks(db: Db, entityId: number, { search, availability, imageStatus, after, limit }: ArtworkFilter): Promise<ConsolePage<ArtworkListRow>> {
  const text = search?.trim() ?? '';
  const params = { entityId, after, pattern: containing(db, text), availability: availability ?? '', imageStatus: imageStatus ?? null };
  const statement = artworkStatements.get(shapeKey(text !== '', availability !== undefined, imageStatus !== undefined))!;
  return read(db, () => all(statement(limit + 1), params)).then((rows) => paged(rows, limit));
}

export type EventListRow = Pick<EventRow, 'id' | 'title' | 'event_type' | 'start_date' | 'end_date' | 'location_city' | 'location_country' | 'image_url'>;
const EVENT_COLUMNS = ['id', 'title', 'event_type', 'start_date', 'end_date', 'location_city', 'location_country', 'image_url'] as const;

const eventsStatement = (searching: boolean, byImage: boolean) => statementPerPageSize(CONSOLE_PAGE_MAX + 1, (db, p: Params<{ entityId: number; after: number; pattern: string; imageStatus: ImageStatus | null }>, limit) => {
  let query = db.selectFrom('events').select(EVENT_COLUMNS).where('entity_id', '=', p.entityId).where('id', '>', p.after);
  if (searching) query = query.where(like(db, 'title', p.pattern));
  if (byImage) query = query.where((eb) => imageStatusIs(db, eb, 'events', p.imageStatus));
  return query.orderBy('id').limit(sql.lit(limit));
}, searching || byImage ? { cost: 'scan', planPerRun: searching } : { cost: 'point' });
const eventStatements = new Map([false, true].flatMap((searching) => [false, true].map((byImage) =>
  [shapeKey(searching, byImage), eventsStatement(searching, byImage)] as const)));

export function searchEvents(db: Db, entityId: number, { search, imageStatus, after, limit }: Omit<ArtworkFilter, 'availability'>): Promise<ConsolePage<EventListRow>> {
  const text = search?.trim() ?? '';
  const statement = eventStatements.get(shapeKey(text !== '', imageStatus !== undefined))!;
  return read(db, () => all(statement(limit + 1), { entityId, after, pattern: containing(db, text), imageStatus: imageStatus ?? null })).then((rows) => paged(rows, limit));
}

/** The counts and last syncs of the overview: the entity's kept counts, one point read (no scan). */
export const catalogCounts = (db: Db, entityId: number): Promise<EntityStats> => read(db, () => statsOf(entityId));

/** The overview's images by state: a scan of the entity's records with an image (off the event loop on SQLite). */
export const imageCounts = (db: Db, entityId: number): Promise<ImageCounts> => read(db, () => imageCountsWork(entityId));

export interface ChangeFilter {
  entityType?: ChangeEntityType | undefined;
  recordId?: number | undefined;
  /** Entries with a smaller id (the list runs newest first); 0 for the newest. */
  before: number;
  limit: number;
}

interface ChangeParams { ownerId: number; before: number; entityType: string; recordId: number }

/**
 * The changelog newest first, of the whole entity, one kind, or one record: each walks an index
 * backwards from the cursor ((owner_id, id), (owner_id, entity_type, id), (owner_id, entity_type,
 * record_id, id)) and stops after a page, at any depth.
 */
const changesStatement = (by: 'all' | 'kind' | 'record') => statementPerPageSize(CONSOLE_PAGE_MAX + 1, (db, p: Params<ChangeParams>, limit) => {
  let query = db.selectFrom('changelog').selectAll().where('owner_id', '=', p.ownerId).where('id', '<', p.before);
  if (by !== 'all') query = query.where('entity_type', '=', sql<ChangeEntityType>`${p.entityType}`);
  if (by === 'record') query = query.where('record_id', '=', p.recordId);
  return query.orderBy('id', 'desc').limit(sql.lit(limit));
});
const changesOfAll = changesStatement('all');
const changesOfKind = changesStatement('kind');
const changesOfRecord = changesStatement('record');

function toEntry(row: ChangelogRow): ChangelogEntryType {
  return {
    id: Number(row.id), entity_type: row.entity_type, entity_id: row.record_id, action: row.action, source: row.source,
    field_changes: JSON.parse(row.field_changes) as FieldChanges, created_at: row.created_at, run_id: row.run_id,
  };
}

/** Ids are 32- or 64-bit integers; this is above any of them that JavaScript holds exactly. */
const NEWEST = Number.MAX_SAFE_INTEGER;

export async function recentChanges(db: Db, ownerId: number, { entityType, recordId, before, limit }: ChangeFilter): Promise<{ rows: ChangelogEntryType[]; nextBefore: number | null }> {
  const statement = entityType === undefined ? changesOfAll : recordId === undefined ? changesOfKind : changesOfRecord;
  const rows = await read(db, () => all(statement(limit + 1), { ownerId, before: before || NEWEST, entityType: entityType ?? '', recordId: recordId ?? 0 }));
  const page = rows.slice(0, limit).map(toEntry);
  return { rows: page, nextBefore: rows.length > limit ? page.at(-1)!.id : null };
}
