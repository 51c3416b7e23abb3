import { sql } from 'kysely';
import { ApiError, notFound } from '../domain/errors.js';
import { columns } from '../db/columns.js';
import { read, transaction } from '../db/run.js';
import { statement, statementPerPageSize, type Params } from '../db/statement.js';
import { all, first, type Work } from '../db/work.js';
import type { ArtworkRow, Db, EventRow, TrashRow } from '../db/types.js';
import type { Actor } from './changelog.js';
import { dropArtworkViews, releaseImages } from './images.js';
import { DAY_MS } from '../domain/days.js';

/** The kinds of record a trash holds (docs/api.md, Trash). */
export type TrashKind = 'artworks' | 'events';
export const TRASH_KINDS: readonly TrashKind[] = ['artworks', 'events'];
export const TRASH_PAGE_MAX = 100;

/** Above every id (PostgreSQL's `serial` is a 32-bit integer). */
const ID_CEILING = 2_147_483_647;

const insertTrash = statement((db, p: Params<Omit<TrashRow, 'id'>>) => db.insertInto('trash')
  .values(columns(p, ['owner_id', 'kind', 'record_id', 'title', 'artist_name', 'image_url', 'record', 'deleted_at', 'deleted_by'])));

/**
 * A deleted record's row goes to its entity's trash, in the delete's own transaction: every delete
 * (the API, the console, push --prune, an import's or a feed's mirror, an undo) is one of
 * store/artworks.ts's or store/events.ts's, which call this.
 */
export function* moveToTrash(actor: Actor, kind: TrashKind, row: ArtworkRow | EventRow, at: string): Work<void> {
  yield* all(insertTrash, {
    owner_id: actor.entityId, kind, record_id: row.id, title: row.title,
    artist_name: 'artist_name' in row ? row.artist_name : null, image_url: row.image_url,
    record: JSON.stringify(row), deleted_at: at, deleted_by: actor.source,
  });
}

/** A delete that only a record unchanged since a time, and still a feed's own, may take (a feed run's confirmed deletes). */
export interface UnchangedSince {
  at: string;
  feedId: number;
}

/**
 * In a delete's transaction, on the row it took: a record changed after `at` or now another's is kept,
 * by a 409 `conflict` that rolls the delete back (docs/api.md, Feeds: mass deletes).
 */
export function checkUnchanged(row: { updated_at: string; feed_id: number | null }, unchanged: UnchangedSince | undefined): void {
  if (unchanged && (row.updated_at > unchanged.at || row.feed_id !== unchanged.feedId)) {
    throw new ApiError('conflict', 'The record changed since the run.');
  }
}

type TrashKey = { ownerId: number; kind: TrashKind; id: number };
const dropTrashed = statement((db, p: Params<TrashKey>) => db.deleteFrom('trash')
  .where('owner_id', '=', p.ownerId).where('kind', '=', p.kind).where('record_id', '=', p.id).returningAll());

const feedOf = statement((db, p: Params<{ entityId: number; feedId: number }>) => db.selectFrom('feeds').select('id')
  .where('entity_id', '=', p.entityId).where('id', '=', p.feedId));

/** A restored record's `feed_id`: its feed's, while that feed exists (docs/api.md, Feeds). */
export function* liveFeed(entityId: number, feedId: number | null): Work<number | null> {
  return feedId === null ? null : (yield* first(feedOf, { entityId, feedId }))?.id ?? null;
}

const trashed = statement((db, p: Params<TrashKey>) => db.selectFrom('trash').select('record')
  .where('owner_id', '=', p.ownerId).where('kind', '=', p.kind).where('record_id', '=', p.id));

/** A record of the entity's trash as it was deleted, or undefined. */
export function* trashedRecord<R>(ownerId: number, kind: TrashKind, id: number): Work<R | undefined> {
  const row = yield* first(trashed, { ownerId, kind, id });
  return row ? JSON.parse(row.record) as R : undefined;
}

/**
 * A record of the entity's trash taken out of it for its restore (store/artworks.ts, store/events.ts),
 * in one DELETE … RETURNING that locks it as a select for update would; 404 when the trash does not hold it.
 */
export function* takeFromTrash<R>(ownerId: number, kind: TrashKind, id: number): Work<R> {
  const [row] = yield* all(dropTrashed, { ownerId, kind, id });
  if (!row) throw notFound(kind === 'artworks' ? 'Artwork in the trash' : 'Event in the trash');
  return JSON.parse(row.record) as R;
}

/** What a purged record lets go: its image and its views' images, unless another record uses them. */
function* letGo(db: Db, row: Pick<TrashRow, 'kind' | 'record_id' | 'image_url' | 'record'>): Work<void> {
  const urls = row.image_url === null ? [] : [row.image_url];
  if (row.kind === 'artworks') {
    const views = (JSON.parse(row.record) as { additional_images: string | null }).additional_images;
    if (views) urls.push(...(JSON.parse(views) as Array<{ url: string }>).map((view) => view.url));
    yield* dropArtworkViews(row.record_id);
  }
  yield* releaseImages(db, urls);
}

/** Removes one record of the trash for good now (docs/api.md, Trash: Delete forever); 404 when it is not there. */
export function deleteFromTrash(db: Db, ownerId: number, kind: TrashKind, id: number): Promise<void> {
  return transaction(db, function* () {
    const [row] = yield* all(dropTrashed, { ownerId, kind, id });
    if (!row) throw notFound(kind === 'artworks' ? 'Artwork in the trash' : 'Event in the trash');
    yield* letGo(db, row);
  });
}

const PURGE_BATCH = 200;
const purgeDue = statement((db, p: Params<{ before: string }>) => db.selectFrom('trash')
  .select(['id', 'kind', 'record_id', 'image_url', 'record'])
  .where('deleted_at', '<', p.before).orderBy('deleted_at').limit(sql.lit(PURGE_BATCH)));
const purgeOne = statement((db, p: Params<{ id: number; before: string }>) => db.deleteFrom('trash')
  .where('id', '=', p.id).where('deleted_at', '<', p.before).returning('id'));

/**
 * The purge (docs/api.md, Trash): every record deleted more than `trashDays` ago is removed for good,
 * with its images when no other record uses them. It writes no changelog entry and sends no webhook.
 * A bounded batch per transaction; a record restored meanwhile is simply no longer there. Returns how
 * many records went.
 */
export async function purgeTrash(db: Db, now: number, trashDays: number): Promise<number> {
  const before = new Date(now - trashDays * DAY_MS).toISOString();
  let purged = 0;
  for (;;) {
    const due = await read(db, () => all(purgeDue, { before }));
    if (due.length === 0) return purged;
    purged += await transaction(db, function* () {
      let n = 0;
      for (const row of due) {
        if (!(yield* first(purgeOne, { id: row.id, before }))) continue;
        yield* letGo(db, row);
        n += 1;
      }
      return n;
    });
    if (due.length < PURGE_BATCH) return purged;
  }
}

export interface TrashItem {
  kind: TrashKind;
  id: number;
  title: string;
  artist_name?: string | null;
  deleted_at: string;
  deleted_by: string;
  purge_at: string;
}

export interface TrashPage { items: TrashItem[]; hasMore: boolean; nextAfter: string | null }

/** Newest first: `(deleted_at, id)` below the cursor's, over the (owner_id[, kind], deleted_at, id) index. */
interface PageParams { ownerId: number; kind: TrashKind; atBefore: string; idBefore: number }
const trashPage = (byKind: boolean) => statementPerPageSize(TRASH_PAGE_MAX + 1, (db, p: Params<PageParams>, limit) => {
  const rows = db.selectFrom('trash').select(['id', 'kind', 'record_id', 'title', 'artist_name', 'deleted_at', 'deleted_by'])
    .where('owner_id', '=', p.ownerId)
    .where((eb) => eb.or([eb('deleted_at', '<', p.atBefore), eb.and([eb('deleted_at', '=', p.atBefore), eb('id', '<', p.idBefore)])]));
  return (byKind ? rows.where('kind', '=', p.kind) : rows).orderBy('deleted_at', 'desc').orderBy('id', 'desc').limit(sql.lit(limit));
});
const pageOfKind = trashPage(true);
const pageOfAll = trashPage(false);

/** The opaque cursor of a trash page: where the next page starts. */
const cursorOf = (deletedAt: string, id: number): string => Buffer.from(`${deletedAt}|${id}`).toString('base64url');
/** The cursor's place, or undefined when it is not one this service gave out. */
export function trashCursor(after: string): { at: string; id: number } | undefined {
  const [at, id] = Buffer.from(after, 'base64url').toString().split('|');
  if (at === undefined || id === undefined || Number.isNaN(Date.parse(at)) || !/^\d{1,10}$/.test(id) || Number(id) > ID_CEILING) return undefined;
  return { at, id: Number(id) };
}

type ItemRow = Pick<TrashRow, 'kind' | 'record_id' | 'title' | 'artist_name' | 'deleted_at' | 'deleted_by'>;

/** A trash row as the API and the console show it, with the day the purge removes it. */
const itemOf = (row: ItemRow, trashDays: number): TrashItem => ({
  kind: row.kind, id: row.record_id, title: row.title,
  ...(row.kind === 'artworks' ? { artist_name: row.artist_name } : {}),
  deleted_at: row.deleted_at, deleted_by: row.deleted_by,
  purge_at: new Date(Date.parse(row.deleted_at) + trashDays * DAY_MS).toISOString(),
});

const trashedItem = statement((db, p: Params<TrashKey>) => db.selectFrom('trash')
  .select(['kind', 'record_id', 'title', 'artist_name', 'deleted_at', 'deleted_by'])
  .where('owner_id', '=', p.ownerId).where('kind', '=', p.kind).where('record_id', '=', p.id));

/** One record of the entity's trash as the list shows it, or undefined when the trash does not hold it. */
export function getTrashItem(db: Db, ownerId: number, kind: TrashKind, id: number, trashDays: number): Promise<TrashItem | undefined> {
  return read(db, function* () {
    const row = yield* first(trashedItem, { ownerId, kind, id });
    return row ? itemOf(row, trashDays) : undefined;
  });
}

/** A page of the entity's trash (`kinds`: those the key may read; one, or both), newest first. */
export function listTrash(db: Db, ownerId: number, kinds: readonly TrashKind[], limit: number, after: { at: string; id: number } | undefined, trashDays: number): Promise<TrashPage> {
  return read(db, function* () {
    if (kinds.length === 0) return { items: [], hasMore: false, nextAfter: null };
    const params = {
      ownerId, kind: kinds[0]!, atBefore: after?.at ?? '9999-12-31T23:59:59.999Z', idBefore: after?.id ?? ID_CEILING,
    };
    const rows = yield* all((kinds.length === 1 ? pageOfKind : pageOfAll)(limit + 1), params);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map((row) => itemOf(row, trashDays)),
      hasMore: rows.length > limit,
      nextAfter: rows.length > limit && last ? cursorOf(last.deleted_at, last.id) : null,
    };
  });
}
