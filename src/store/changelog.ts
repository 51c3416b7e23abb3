import { CHANGELOG_PAGE_MAX, type ChangeAction, type ChangeEntityType, type ChangelogEntryType } from '../schemas/changelog.js';
import type { FieldChanges } from '../domain/diff.js';
import { sql, type Insertable } from 'kysely';
import { columns } from '../db/columns.js';
import { read } from '../db/run.js';
import { statement, statementPerPageSize, type Cost, type Params } from '../db/statement.js';
import type { ChangelogRow, ChangelogTable, Db } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { applyStats, statsOf, type StatsDelta } from './stats.js';
import type { ListedPage, PageRequest } from './pages.js';
import { INLINE_OFFSET_MAX, isPostgres, pageOffset } from './sql.js';

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

/**
 * Records a write: its changelog entries and the entity's counts, in the write's own transaction, so
 * both commit or roll back with the write itself.
 */
export function* recordWrite(actor: Actor, changes: Change[], delta: StatsDelta, at: string): Work<void> {
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
  yield* applyStats(actor.entityId, { ...delta, changelog: changes.length }, at);
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
  let ids = db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId);
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
  db.selectFrom('changelog').select('id').where('owner_id', '=', p.ownerId).where('created_at', '>', p.since);
const changesSinceCountUpTo = statement((db, p: Params<{ ownerId: number; since: string }>) => db.selectFrom(
  windowOf(db, p).limit(sql.lit(SINCE_COUNT_INLINE_MAX + 1)).as('w')).select((eb) => eb.fn.countAll<number>().as('n')));
const changesSinceCount = statement((db, p: Params<{ ownerId: number; since: string }>) => db.selectFrom(windowOf(db, p).as('w'))
  .select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });

function* sinceTotal(ownerId: number, since: string): Work<number, Cost> {
  const bounded = Number((yield* first(changesSinceCountUpTo, { ownerId, since }))?.n ?? 0);
  if (bounded <= SINCE_COUNT_INLINE_MAX) return bounded;
  return Number((yield* first(changesSinceCount, { ownerId, since }))?.n ?? 0);
}

export function listChanges(db: Db, ownerId: number, { page, after, limit, since }: ChangelogQuery): Promise<ListedPage & { changes: ChangelogEntryType[] }> {
  return read(db, function* () {
    const params = { ownerId, since: since ?? '', after: after ?? 0, offset: pageOffset(page ?? 1, limit) };
    const statement = after !== undefined
      ? (since === undefined ? changesAfter : changesAfterSince)
      : (since === undefined ? changesByPage : changesByPageSince);
    const rows = yield* all(statement(limit + 1), params);
    const total = since === undefined ? (yield* statsOf(ownerId)).changelog : yield* sinceTotal(ownerId, since);
    const changes = rows.slice(0, limit).map(toChangelogEntry);
    return { changes, total, hasMore: rows.length > limit, nextAfter: changes.at(-1)?.id ?? null };
  });
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
