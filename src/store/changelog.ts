import { CHANGELOG_PAGE_MAX, type ChangeAction, type ChangeEntityType } from '../schemas/changelog.js';
import type { FieldChanges } from '../domain/diff.js';
import { sql, type Insertable, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { columns } from '../db/columns.js';
import { read, readBulk } from '../db/run.js';
import { statement, statementPerPageSize, type Cost, type Param, type Params } from '../db/statement.js';
import type { ChangelogRow, ChangelogTable, Database, Db } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { applyStats, statsOf, statsUpdate, upsertStatsSlot, type StatsDelta, type StatsUpdate } from './stats.js';
import type { ListedPage, PageRequest } from './pages.js';
import { INLINE_OFFSET_MAX, isPostgres, pageOffset, rawQuery } from './sql.js';
import { IMAGE_JOB, imagesWritten, noQueuedImagesClause, queuedImagesClause } from './images.js';
import { WEBHOOK_JOB, deliveryJobsOfEntries, hasEnabledEndpoint, messagesOfEntries, noMessagesClause, recordEntryMessages } from './webhooks.js';
import { changeType } from '../domain/webhooks.js';

/** Who writes: the entity the key is bound to and the changelog `source` of the key. */
export interface Actor {
  entityId: number;
  entitySlug: string;
  source: string;
  /** The run the write belongs to (docs/api.md, Runs): a console import's Apply, a feed run, an undo. */
  runId?: number | null;
  /** The feed that writes (docs/api.md, Feeds): the records it creates or changes become its own (`feed_id`). */
  feedId?: number | null;
}

export interface Change {
  entityType: ChangeEntityType;
  recordId: number;
  action: ChangeAction;
  fieldChanges: FieldChanges;
}

const insertChange = statement((db, p: Params<Insertable<ChangelogTable> & { run_id: number | null }>) =>
  db.insertInto('changelog').values(columns(p, ['owner_id', 'entity_type', 'record_id', 'action', 'source', 'field_changes', 'created_at', 'run_id'])).returning('id'));

/** What PostgreSQL's statement records of a write: its entries as arrays (in order), its counts, the image URLs it queues. */
export interface RecordedWrite extends StatsUpdate {
  source: string;
  runId: number | null;
  at: string;
  entityTypes: string[];
  /** null: the id of the record the statement itself inserts (`written`). */
  recordIds: Array<number | null>;
  actions: string[];
  /**
   * The entries' field changes as one JSON array, each entry's object the text its row keeps: one
   * JSON.stringify instead of one per entry, each then quoted again into a text[] literal by the
   * driver (a batch's 100 creations: ~0.9 ms of the process against ~0.2; docs/performance.md,
   * Writes, lists and growth).
   */
  fieldChanges: string;
  /** The URLs the write sets, sorted (store/images.ts, `imagesWritten`); those not known yet are queued. */
  urls: string[];
}

/** The parameters of `recording` for a write's changes: everything it records but the counts' own fields. */
export function recordedWrite(actor: Actor, changes: readonly Change[], delta: StatsDelta | readonly StatsDelta[], at: string, urls: string[]): RecordedWrite {
  const update = statsUpdate(actor.entityId, Array.isArray(delta) ? delta : [delta as StatsDelta], at);
  update.changelog = changes.length;
  return {
    ...update, source: actor.source, runId: actor.runId ?? null, at, urls,
    entityTypes: changes.map((change) => change.entityType),
    recordIds: changes.map((change) => change.recordId || null),
    actions: changes.map((change) => change.action),
    fieldChanges: JSON.stringify(changes.map((change) => change.fieldChanges)),
  };
}

/**
 * PostgreSQL: the one place a write is recorded, as CTEs of the statement that records it — by
 * itself (`recordWrite`) or inside the statement that also makes the write (store/artworks.ts, a new
 * artwork's POST and a re-post): its changelog entries (in order; ids from the column's default,
 * migration 006; its run's id, docs/api.md, Runs), their webhook messages and delivery jobs
 * (docs/api.md, Webhooks), the image URLs it sets with their jobs, and the entity's counts. `written`:
 * the id of a record the statement inserts, for entries whose record id is null; `when`: a condition
 * on the rest of the statement (nothing is recorded when it is false). A statement ending in
 * `RECORDED` says which job kinds it queued (`recordedSignals`), so this process's runner looks at once.
 * `images`: false for a write that sets no image URL (`urls` empty; `recordingOf` picks the shape),
 * whose statement then has no image CTEs to start. `messages`: false for a statement that writes
 * nothing when the entity has an enabled endpoint (webhooks.ts, `noMessagesClause`), whose statement
 * then has no webhook CTEs to start.
 */
export const recording = (
  p: Params<RecordedWrite>, written: RawBuilder<unknown> = sql`null`, when: RawBuilder<unknown> = sql`true`, images = true, messages = true,
): RawBuilder<unknown> => sql`
  entries as (
    insert into changelog (owner_id, entity_type, record_id, action, source, field_changes, created_at, run_id)
    select ${p.entityId}, e.entity_type, coalesce(e.record_id, ${written}), e.action, ${p.source}, cast(e.field_changes as text), ${p.at},
      cast(${p.runId} as integer)
    from rows from (unnest(cast(${p.entityTypes} as text[])), unnest(cast(${p.recordIds} as integer[])), unnest(cast(${p.actions} as text[])),
      json_array_elements(cast(${p.fieldChanges} as json))) with ordinality as e(entity_type, record_id, action, field_changes, n)
    where ${when}
    order by e.n
    returning id, entity_type, record_id, action),
  ${messages ? sql`${messagesOfEntries(p.entityId, p.at)},
  ${deliveryJobsOfEntries(p.entityId, p.at)}` : noMessagesClause},
  ${images ? queuedImagesClause(p.urls, p.entityId, p.at, when) : noQueuedImagesClause},
  counted as (${upsertStatsSlot(p, when)})`;

/**
 * A statement with `recording` in its two shapes, `make(images)`, built once each: with the image
 * CTEs for a write that sets image URLs, without for one that sets none (`recording`, `images`).
 */
export function recordingOf<S>(make: (images: boolean) => S): (write: { urls: readonly string[] }) => S {
  const withImages = make(true);
  const withoutImages = make(false);
  return ({ urls }) => (urls.length > 0 ? withImages : withoutImages);
}

/** The last columns of a statement with `recording`: how many messages and image jobs it queued. */
export const RECORDED = sql`(select count(*) from hooks) as messages, (select count(*) from queued) as images`;

/** The signal of a statement ending in `RECORDED` (src/db/statement.ts): the job kinds it queued. */
export const recordedSignals = (_params: unknown, rows: readonly unknown[]): string[] => {
  const row = rows[0] as { messages?: number | string; images?: number | string } | undefined;
  return row ? [...(Number(row.messages) > 0 ? [WEBHOOK_JOB] : []), ...(Number(row.images) > 0 ? [IMAGE_JOB] : [])] : [];
};

const recordChanges = recordingOf((images) => statement((db, p: Params<RecordedWrite>) => rawQuery<{ messages: number; images: number }>(db, sql`
  with ${recording(p, sql`null`, sql`true`, images)}
  select ${RECORDED}`), { signal: recordedSignals }));

/**
 * Records a write: its changelog entries, the entity's counts, its image jobs and its webhook
 * messages with their delivery jobs, in the write's own transaction, so all commit or roll back with
 * the write itself (a rolled-back write sends no message; docs/api.md, Webhooks). Every write of a
 * record goes through here (artworks, events, the profile, the trash's restore and delete, a batch,
 * a run); a batch records all its items at once. On PostgreSQL it is one statement (`recording`), the
 * transaction's last, besides an image URL let go or an artwork's views; on SQLite, where a statement
 * costs no round trip, a statement per entry.
 */
export function* recordWrite(db: Db, actor: Actor, changes: readonly Change[], delta: StatsDelta | readonly StatsDelta[], at: string): Work<void> {
  // An image_url set, changed or let go queues or releases its image job in this same transaction.
  const urls = yield* imagesWritten(db, actor.entityId, changes, at);
  if (isPostgres(db)) {
    const write = recordedWrite(actor, changes, delta, at, urls);
    yield* all(recordChanges(write), write);
    return;
  }
  const update = statsUpdate(actor.entityId, Array.isArray(delta) ? delta : [delta as StatsDelta], at);
  update.changelog = changes.length;
  // Most entities have no endpoint: one index probe, and no message statement per entry.
  const hooks = changes.length > 0 && (yield* hasEnabledEndpoint(actor.entityId));
  for (const change of changes) {
    const entry = yield* first(insertChange, {
      owner_id: actor.entityId,
      entity_type: change.entityType,
      record_id: change.recordId,
      action: change.action,
      source: actor.source,
      field_changes: JSON.stringify(change.fieldChanges),
      created_at: at,
      run_id: actor.runId ?? null,
    });
    const type = hooks ? changeType(change.entityType, change.action) : null;
    if (type) yield* recordEntryMessages(actor.entityId, Number(entry!.id), type, change.entityType, change.recordId, at);
  }
  yield* applyStats(update);
}

export interface ChangelogQuery extends PageRequest {
  /** Exclusive lower bound, canonical ISO string. */
  since?: string | undefined;
  /**
   * A page read by cursor (no `page`) ends before this many bytes of entries, after at least one, with
   * `has_more` and `next_after` exact; a numbered page cannot be cut (its successor is an offset).
   */
  maxBytes?: number | undefined;
  /** Only one run's entries (docs/api.md, Runs), by cursor. */
  runId?: number | undefined;
}

/**
 * Entries are read and written this many at a time: ~100 KB of typical large entries, ~2 MB at the very
 * most (two 20,000-character texts each). 16 made the worst turn ~45 ms with 20 cursor readers, 8 ~35.
 */
const CHANGES_CHUNK = 8;

/** `horizon`: the read's first id not final yet (PostgreSQL, `horizonNow`); SQLite's ids are all final. */
interface ChangesParams { ownerId: number; since: string; after: number; offset: number; horizon: number }

/**
 * The ids of a page of the owner's entries, or of those after `since`, in id order; at most
 * CHANGELOG_PAGE_MAX plus one, which tells whether more follow.
 *
 * `after` ranges over the (owner_id, id) index: the same cost at any depth, `since` a filter on the
 * entries read. `page` skips ids (never whole entries); with `since` it ranges over (owner_id,
 * created_at) and sorts the window's ids, so its cost is the window's, like the count of its total.
 */
function pageIds(db: Db, p: Params<ChangesParams>, shape: 'after' | 'page', since: boolean, limit: number) {
  let ids = final(db, p.horizon, db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId));
  if (shape === 'after') {
    if (since) ids = ids.where(unindexed(db, 'created_at'), '>', p.since);
    return ids.where('id', '>', p.after).orderBy('id').limit(sql.lit(limit));
  }
  if (!since) return ids.orderBy('id').limit(sql.lit(limit)).offset(p.offset);
  return ids.where('created_at', '>', p.since).orderBy(unindexed(db, 'id')).limit(sql.lit(limit)).offset(p.offset);
}

/** On SQLite a unary `+` takes a column out of the planner's index choice, which has no statistics. */
const unindexed = (db: Db, column: 'id' | 'created_at') => (isPostgres(db) ? sql.ref(column) : sql`+${sql.ref(column)}`);

/**
 * A cursor page's ids and the bytes of their entries' stored text (`octet_length` reads the column's
 * header, not its text, on both dialects): the page is cut from these before any entry is read.
 * `after` alone ranges over the (owner_id, id) index (a point statement); with `since` it filters the
 * entries it walks, a scan, which runs on SQLite's reader thread.
 */
const sizesAfter = (since: boolean) => statementPerPageSize<ChangesParams, { id: number; bytes: number }, Cost>(CHANGELOG_PAGE_MAX + 1,
  (db, p, limit) => pageIds(db, p, 'after', since, limit)
    .select(sql<number>`octet_length(field_changes) + octet_length(source)`.as('bytes')),
  since ? { cost: 'scan' } : { cost: 'point' });
const sizesAfterAlone = sizesAfter(false);
const sizesAfterSince = sizesAfter(true);

/**
 * A numbered page's ids: `page` skips or sorts a window, a scan (on SQLite's reader thread unless the
 * skip is shallow). Its entries are then read a chunk at a time between its first and last id.
 */
const idsByPage = (since: boolean) => statementPerPageSize<ChangesParams, { id: number }, Cost>(CHANGELOG_PAGE_MAX + 1,
  (db, p, limit) => pageIds(db, p, 'page', since, limit),
  since ? { cost: 'scan' } : { cost: 'scan', inlineWhen: (p) => p.offset <= INLINE_OFFSET_MAX });
const idsByPageAlone = idsByPage(false);
const idsByPageSince = idsByPage(true);

/** Entries up to a page's last id (all final: the page's ids were): a range of the (owner_id, id) index. */
const changesThrough = (since: boolean) => statement((db, p: Params<{ ownerId: number; after: number; through: number; since: string }>) => {
  const range = db.selectFrom('changelog').selectAll().where('owner_id', '=', p.ownerId).where('id', '>', p.after).where('id', '<=', p.through);
  return (since ? range.where(unindexed(db, 'created_at'), '>', p.since) : range).orderBy('id').limit(sql.lit(CHANGES_CHUNK));
});
const changesThroughAlone = changesThrough(false);
const changesThroughSince = changesThrough(true);

/**
 * Only a `since` window is counted (the whole changelog's size is kept in entity_stats). A poller's
 * window is short: it is counted on the event loop up to a bound, and only a larger one is counted in
 * full, as a scan.
 */
const SINCE_COUNT_INLINE_MAX = 2_000;
type WindowParams = { ownerId: number; since: string; horizon: number };
const windowOf = (db: Db, p: Params<WindowParams>) =>
  final(db, p.horizon, db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId).where('created_at', '>', p.since));
const changesSinceCountUpTo = statement((db, p: Params<WindowParams>) => db.selectFrom(
  windowOf(db, p).limit(sql.lit(SINCE_COUNT_INLINE_MAX + 1)).as('w')).select((eb) => eb.fn.countAll<number>().as('n')));
const changesSinceCount = statement((db, p: Params<WindowParams>) => db.selectFrom(windowOf(db, p).as('w'))
  .select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });

function* sinceTotal(window: WindowParams): Work<number, Cost> {
  const bounded = Number((yield* first(changesSinceCountUpTo, window))?.n ?? 0);
  if (bounded <= SINCE_COUNT_INLINE_MAX) return bounded;
  return Number((yield* first(changesSinceCount, window))?.n ?? 0);
}

/**
 * PostgreSQL: only final entries are listed, those below `changelog_horizon()` (migration 006): a
 * transaction still running may yet commit entries with ids above the horizon, never below it, so a
 * poller that has read up to an id never misses an entry below it. SQLite has one writer at a time:
 * its ids are final when committed.
 *
 * A read takes the horizon once, in a statement of its own, and every statement after it uses that
 * value: the horizon only moves up, so entries below it stay final and visible to later statements,
 * and the page and its check for entries still becoming final (`pendingAfter`) agree on what was
 * final. With a horizon per statement, an entry that became final between the page's statement and
 * the check's was neither listed nor pending: a writer polling right after its write missed it.
 */
const horizonNow = statement((db) => rawQuery<{ horizon: string | number }>(db, sql`select changelog_horizon() as horizon`));

function* readHorizon(db: Db): Work<number, Cost> {
  return isPostgres(db) ? Number((yield* first(horizonNow, {}))!.horizon) : 0;
}

function final<O>(db: Db, horizon: Param<number>, query: SelectQueryBuilder<Database, 'changelog', O>): SelectQueryBuilder<Database, 'changelog', O> {
  return isPostgres(db) ? query.where('id', '<', horizon) : query;
}

/** Committed entries the read's horizon left out: transactions that began before theirs were still running. */
const pendingAfter = statement((db, p: Params<{ ownerId: number; after: number; horizon: number }>) => db.selectNoFrom((eb) => eb.exists(
  db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId).where('id', '>', p.after)
    .where('id', '>=', p.horizon)).as('pending')));

/**
 * How long a changelog read waits for the entries it can see to become final (read-your-writes: a
 * writer that polls right after its write finds its entries). The transactions it waits for are other
 * requests' writes, which last milliseconds; a longer one only delays entries to a later poll.
 */
const PENDING_WAIT_MS = 250;
const PENDING_POLL_MS = 2;

/** A page of the changelog: what the answer says of it, and its entries, a chunk at a time. */
export interface ChangesPage extends ListedPage {
  /** The entries as stored (`field_changes` is the JSON text the API sends), in id order. */
  chunks: () => AsyncGenerator<ChangelogRow[]>;
}

/** `final` is false when entries not final yet may still join the page (PostgreSQL) without a new data version. */
export async function listChanges(db: Db, ownerId: number, query: ChangelogQuery): Promise<ChangesPage & { final: boolean }> {
  for (const started = Date.now(); ;) {
    const { pending, ...page } = await read(db, () => (query.runId !== undefined ? runPage(db, ownerId, query.runId, query)
      : query.page === undefined ? cursorPage(db, ownerId, query) : numberedPage(db, ownerId, query)));
    if (!pending || Date.now() - started >= PENDING_WAIT_MS) return { ...page, final: !pending };
    await new Promise((resolve) => setTimeout(resolve, PENDING_POLL_MS));
  }
}

type PageWork = Work<ChangesPage & { pending: boolean }, Cost>;

/** How many of a page's first entries fit `limit` and `maxBytes` (one at least, when there is one). */
function keptWithin(sizes: ReadonlyArray<{ bytes: number }>, limit: number, maxBytes: number): number {
  let kept = 0;
  for (let bytes = 0; kept < Math.min(limit, sizes.length); kept += 1) {
    bytes += Number(sizes[kept]!.bytes) + ENTRY_OVERHEAD_BYTES;
    if (kept > 0 && bytes > maxBytes) break;
  }
  return kept;
}

/**
 * A page by cursor (`after`, or from the start): up to `limit` entries, and fewer when the next would
 * take the page past `maxBytes` — decided from the entries' sizes alone, so `has_more` and `next_after`
 * are exact before a byte is sent, and `next_after` continues right after the last entry kept. The
 * entries themselves are then read a chunk at a time as the answer is written.
 */
function* cursorPage(db: Db, ownerId: number, { after = 0, limit, since, maxBytes = Infinity }: ChangelogQuery): PageWork {
  const horizon = yield* readHorizon(db);
  const sizes = yield* all((since === undefined ? sizesAfterAlone : sizesAfterSince)(limit + 1),
    { ownerId, since: since ?? '', after, offset: 0, horizon });
  const kept = keptWithin(sizes, limit, maxBytes);
  const lastId = kept === 0 ? undefined : sizes[kept - 1]!.id;
  return yield* finish(db, { ownerId, since, horizon }, lastId, sizes.length > kept, after, entriesThrough(db, ownerId, since, after, lastId));
}

// One run's entries: a range of the (owner_id, run_id, id) index (migration 019).
type RunParams = { ownerId: number; runId: number; after: number; horizon: number };
const runIds = (db: Db, p: Params<RunParams>) => final(db, p.horizon, db.selectFrom('changelog').select('id')
  .where('owner_id', '=', p.ownerId).where('run_id', '=', p.runId));
const runSizesAfter = statementPerPageSize<RunParams, { id: number; bytes: number }>(CHANGELOG_PAGE_MAX + 1, (db, p, limit) =>
  runIds(db, p).select(sql<number>`octet_length(field_changes) + octet_length(source)`.as('bytes'))
    .where('id', '>', p.after).orderBy('id').limit(sql.lit(limit)));
const runChangesThrough = statement((db, p: Params<{ ownerId: number; runId: number; after: number; through: number }>) => db.selectFrom('changelog')
  .selectAll().where('owner_id', '=', p.ownerId).where('run_id', '=', p.runId).where('id', '>', p.after).where('id', '<=', p.through)
  .orderBy('id').limit(sql.lit(CHANGES_CHUNK)));
const runCount = statement((db, p: Params<RunParams>) => db.selectFrom(runIds(db, p).as('r'))
  .select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });

/** A page of one run's entries by cursor, cut by bytes as `cursorPage`; its total is the run's entries. */
function* runPage(db: Db, ownerId: number, runId: number, { after = 0, limit, maxBytes = Infinity }: ChangelogQuery): PageWork {
  const horizon = yield* readHorizon(db);
  const sizes = yield* all(runSizesAfter(limit + 1), { ownerId, runId, after, horizon });
  const kept = keptWithin(sizes, limit, maxBytes);
  const last = kept === 0 ? undefined : Number(sizes[kept - 1]!.id);
  const hasMore = sizes.length > kept;
  const pending = isPostgres(db) && !hasMore && Boolean((yield* first(pendingAfter, { ownerId, after: last ?? after, horizon }))?.pending);
  const total = Number((yield* first(runCount, { ownerId, runId, after: 0, horizon }))?.n ?? 0);
  const chunks = async function* (): AsyncGenerator<ChangelogRow[]> {
    if (last === undefined) return;
    const range = { ownerId, runId, after, through: last };
    for (;;) {
      const chunk = await readBulk(db, () => all(runChangesThrough, range));
      if (chunk.length > 0) yield chunk;
      if (chunk.length < CHANGES_CHUNK) return;
      range.after = Number(chunk.at(-1)!.id);
    }
  };
  return { total, hasMore, nextAfter: last ?? null, pending, chunks };
}

/** A numbered page: its ids first (at most `limit` + 1 integers), never cut by bytes (its successor is an offset). */
function* numberedPage(db: Db, ownerId: number, { page = 1, limit, since }: ChangelogQuery): PageWork {
  const horizon = yield* readHorizon(db);
  const ids = yield* all((since === undefined ? idsByPageAlone : idsByPageSince)(limit + 1),
    { ownerId, since: since ?? '', after: 0, offset: pageOffset(page, limit), horizon });
  const hasMore = ids.length > limit;
  const lastId = ids.at(Math.min(limit, ids.length) - 1)?.id;
  const before = ids.length === 0 ? 0 : Number(ids[0]!.id) - 1;
  return yield* finish(db, { ownerId, since, horizon }, lastId, hasMore, 0, entriesThrough(db, ownerId, since, before, lastId));
}

/**
 * The entries after id `after` up to `through`, read a chunk at a time as they are asked for, so a
 * page is never held whole. Entries are never changed once final (the page's ids were), so the chunks
 * are the page its ids named.
 */
function entriesThrough(db: Db, ownerId: number, since: string | undefined, after: number, through: number | undefined) {
  return async function* (): AsyncGenerator<ChangelogRow[]> {
    if (through === undefined) return;
    const range = { ownerId, after, through: Number(through), since: since ?? '' };
    for (;;) {
      const chunk = await readBulk(db, () => all(since === undefined ? changesThroughAlone : changesThroughSince, range));
      if (chunk.length > 0) yield chunk;
      if (chunk.length < CHANGES_CHUNK) return;
      range.after = Number(chunk.at(-1)!.id);
    }
  };
}

/** What every page adds: its total, and whether entries it could see are still becoming final. */
function* finish(db: Db, { ownerId, since, horizon }: { ownerId: number; since: string | undefined; horizon: number },
  last: number | undefined, hasMore: boolean, after: number, chunks: () => AsyncGenerator<ChangelogRow[]>): PageWork {
  const nextAfter = last === undefined ? null : Number(last);
  // A full page is followed by another poll anyway; only the tail waits for entries to become final.
  const pending = isPostgres(db) && !hasMore && Boolean((yield* first(pendingAfter, { ownerId, after: nextAfter ?? after, horizon }))?.pending);
  const total = since === undefined ? (yield* statsOf(ownerId)).changelog : yield* sinceTotal({ ownerId, since, horizon });
  return { total, hasMore, nextAfter, pending, chunks };
}

/** About the bytes an entry takes in an answer besides its stored `field_changes` and `source`. */
const ENTRY_OVERHEAD_BYTES = 160;
