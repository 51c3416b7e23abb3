import { CHANGELOG_PAGE_MAX, type ChangeAction, type ChangeEntityType, type ChangelogEntryType } from '../schemas/changelog.js';
import type { FieldChanges } from '../domain/diff.js';
import { sql, type Insertable, type SelectQueryBuilder } from 'kysely';
import { columns } from '../db/columns.js';
import { read } from '../db/run.js';
import { statement, statementPerPageSize, type Cost, type Params } from '../db/statement.js';
import type { ChangelogRow, ChangelogTable, Database, Db } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { applyStats, statsOf, statsUpdate, upsertStatsSlot, type StatsDelta, type StatsUpdate } from './stats.js';
import type { ListedPage, PageRequest } from './pages.js';
import { INLINE_OFFSET_MAX, isPostgres, pageOffset, rawQuery } from './sql.js';

/** Who writes: the entity the key is bound to and the changelog `source` of the key. */
export interface Actor {
  entityId: number;
  entitySlug: string;
  source: string;
}

export interface Change {
  entityType: ChangeEntityType;
  recordId: number;
  action: ChangeAction;
  fieldChanges: FieldChanges;
}

const insertChange = statement((db, p: Params<Insertable<ChangelogTable>>) =>
  db.insertInto('changelog').values(columns(p, ['owner_id', 'entity_type', 'record_id', 'action', 'source', 'field_changes', 'created_at'])));

interface RecordedWrite extends StatsUpdate {
  source: string;
  at: string;
  entityTypes: string[];
  recordIds: number[];
  actions: string[];
  fieldChanges: string[];
}

/**
 * PostgreSQL: a write's changelog entries (in order; ids from the column's default, migration 006)
 * and its counts in one statement, the last of its transaction.
 */
const recordChanges = statement((db, p: Params<RecordedWrite>) => rawQuery(db, sql`
  with entries as (
    insert into changelog (owner_id, entity_type, record_id, action, source, field_changes, created_at)
    select ${p.entityId}, e.entity_type, e.record_id, e.action, ${p.source}, e.field_changes, ${p.at}
    from unnest(cast(${p.entityTypes} as text[]), cast(${p.recordIds} as integer[]), cast(${p.actions} as text[]),
      cast(${p.fieldChanges} as text[])) with ordinality as e(entity_type, record_id, action, field_changes, n)
    order by e.n)
  ${upsertStatsSlot(p)}`));

/**
 * Records writes: their changelog entries and the entity's counts, in the writes' own transaction, so
 * both commit or roll back with the writes themselves. A batch records all its items at once.
 */
export function* recordWrite(db: Db, actor: Actor, changes: readonly Change[], delta: StatsDelta | readonly StatsDelta[], at: string): Work<void> {
  const update = statsUpdate(actor.entityId, Array.isArray(delta) ? delta : [delta as StatsDelta], at);
  update.changelog = changes.length;
  if (isPostgres(db)) {
    yield* all(recordChanges, {
      ...update, source: actor.source, at,
      entityTypes: changes.map((change) => change.entityType),
      recordIds: changes.map((change) => change.recordId),
      actions: changes.map((change) => change.action),
      fieldChanges: changes.map((change) => JSON.stringify(change.fieldChanges)),
    });
    return;
  }
  for (const change of changes) {
    yield* all(insertChange, {
      owner_id: actor.entityId,
      entity_type: change.entityType,
      record_id: change.recordId,
      action: change.action,
      source: actor.source,
      field_changes: JSON.stringify(change.fieldChanges),
      created_at: at,
    });
  }
  yield* applyStats(update);
}

export interface ChangelogQuery extends PageRequest {
  /** Exclusive lower bound, canonical ISO string. */
  since?: string | undefined;
}

interface ChangesParams { ownerId: number; since: string; after: number; offset: number }

/**
 * The ids of a page of the owner's entries, or of those after `since`, in id order; at most
 * CHANGELOG_PAGE_MAX plus one, which tells whether more follow.
 *
 * `after` ranges over the (owner_id, id) index: the same cost at any depth, `since` a filter on the
 * entries read. `page` skips ids (never whole entries); with `since` it ranges over (owner_id,
 * created_at) and sorts the window's ids, so its cost is the window's, like the count of its total.
 * On SQLite a unary `+` takes a column out of the planner's index choice, which has no statistics.
 */
function pageIds(db: Db, p: Params<ChangesParams>, shape: 'after' | 'page', since: boolean, limit: number) {
  const hint = (column: 'id' | 'created_at') => (isPostgres(db) ? sql.ref(column) : sql`+${sql.ref(column)}`);
  let ids = final(db, db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId));
  if (shape === 'after') {
    if (since) ids = ids.where(hint('created_at'), '>', p.since);
    return ids.where('id', '>', p.after).orderBy('id').limit(sql.lit(limit));
  }
  if (!since) return ids.orderBy('id').limit(sql.lit(limit)).offset(p.offset);
  return ids.where('created_at', '>', p.since).orderBy(hint('id')).limit(sql.lit(limit)).offset(p.offset);
}

/**
 * Which pages cost what: `after` alone ranges over the (owner_id, id) index (a point statement);
 * with `since` it filters the entries it walks, and `page` skips or sorts a window — scans, which run
 * on SQLite's reader thread unless the skip is shallow.
 */
const changesStatement = (shape: 'after' | 'page', since: boolean) =>
  statementPerPageSize<ChangesParams, ChangelogRow, Cost>(CHANGELOG_PAGE_MAX + 1, (db, p, limit) =>
    db.selectFrom('changelog').selectAll().where('id', 'in', pageIds(db, p, shape, since, limit)).orderBy('id'),
  shape === 'after' && !since ? { cost: 'point' }
    : shape === 'page' && !since ? { cost: 'scan', inlineWhen: (p) => p.offset <= INLINE_OFFSET_MAX }
      : { cost: 'scan' });
const changesAfter = changesStatement('after', false);
const changesAfterSince = changesStatement('after', true);
const changesByPage = changesStatement('page', false);
const changesByPageSince = changesStatement('page', true);

/**
 * Only a `since` window is counted (the whole changelog's size is kept in entity_stats). A poller's
 * window is short: it is counted on the event loop up to a bound, and only a larger one is counted in
 * full, as a scan.
 */
const SINCE_COUNT_INLINE_MAX = 2_000;
const windowOf = (db: Db, p: Params<{ ownerId: number; since: string }>) =>
  final(db, db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId).where('created_at', '>', p.since));
const changesSinceCountUpTo = statement((db, p: Params<{ ownerId: number; since: string }>) => db.selectFrom(
  windowOf(db, p).limit(sql.lit(SINCE_COUNT_INLINE_MAX + 1)).as('w')).select((eb) => eb.fn.countAll<number>().as('n')));
const changesSinceCount = statement((db, p: Params<{ ownerId: number; since: string }>) => db.selectFrom(windowOf(db, p).as('w'))
  .select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });

function* sinceTotal(ownerId: number, since: string): Work<number, Cost> {
  const bounded = Number((yield* first(changesSinceCountUpTo, { ownerId, since }))?.n ?? 0);
  if (bounded <= SINCE_COUNT_INLINE_MAX) return bounded;
  return Number((yield* first(changesSinceCount, { ownerId, since }))?.n ?? 0);
}

/**
 * PostgreSQL: only final entries are listed, those below `changelog_horizon()` (migration 006): a
 * transaction still running may yet commit entries with ids above the horizon, never below it, so a
 * poller that has read up to an id never misses an entry below it. SQLite has one writer at a time:
 * its ids are final when committed.
 */
// A subquery, so the horizon is computed once per statement, not per row the statement reads.
const horizon = sql<number>`(select changelog_horizon())`;

function final<O>(db: Db, query: SelectQueryBuilder<Database, 'changelog', O>): SelectQueryBuilder<Database, 'changelog', O> {
  return isPostgres(db) ? query.where('id', '<', horizon) : query;
}

/** Committed entries not final yet: transactions that began before theirs are still running. */
const pendingAfter = statement((db, p: Params<{ ownerId: number; after: number }>) => db.selectNoFrom((eb) => eb.exists(
  db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId).where('id', '>', p.after)
    .where('id', '>=', horizon)).as('pending')));

/**
 * How long a changelog read waits for the entries it can see to become final (read-your-writes: a
 * writer that polls right after its write finds its entries). The transactions it waits for are other
 * requests' writes, which last milliseconds; a longer one only delays entries to a later poll.
 */
const PENDING_WAIT_MS = 250;
const PENDING_POLL_MS = 2;

export async function listChanges(db: Db, ownerId: number, query: ChangelogQuery): Promise<ListedPage & { changes: ChangelogEntryType[] }> {
  for (const started = Date.now(); ;) {
    const { pending, ...page } = await read(db, () => changesPage(db, ownerId, query));
    if (!pending || Date.now() - started >= PENDING_WAIT_MS) return page;
    await new Promise((resolve) => setTimeout(resolve, PENDING_POLL_MS));
  }
}

function* changesPage(db: Db, ownerId: number, { page, after, limit, since }: ChangelogQuery): Work<ListedPage & { changes: ChangelogEntryType[]; pending: boolean }, Cost> {
  const params = { ownerId, since: since ?? '', after: after ?? 0, offset: pageOffset(page ?? 1, limit) };
  const statement = after !== undefined
    ? (since === undefined ? changesAfter : changesAfterSince)
    : (since === undefined ? changesByPage : changesByPageSince);
  const rows = yield* all(statement(limit + 1), params);
  const hasMore = rows.length > limit;
  const changes = rows.slice(0, limit).map(toChangelogEntry);
  const last = changes.at(-1)?.id ?? null;
  // A full page is followed by another poll anyway; only the tail waits for entries to become final.
  const pending = isPostgres(db) && !hasMore && Boolean((yield* first(pendingAfter, { ownerId, after: last ?? params.after }))?.pending);
  const total = since === undefined ? (yield* statsOf(ownerId)).changelog : yield* sinceTotal(ownerId, since);
  return { changes, total, hasMore, nextAfter: last, pending };
}

function toChangelogEntry(row: ChangelogRow): ChangelogEntryType {
  return {
    id: Number(row.id),
    entity_type: row.entity_type,
    entity_id: row.record_id,
    action: row.action,
    source: row.source,
    field_changes: JSON.parse(row.field_changes) as FieldChanges,
    created_at: row.created_at,
  };
}
