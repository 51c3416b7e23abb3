import { CHANGELOG_PAGE_MAX, type ChangeAction, type ChangeEntityType, type ChangelogEntryType } from '../schemas/changelog.js';
import type { FieldChanges } from '../domain/diff.js';
import { sql, type Insertable } from 'kysely';
import type { ChangelogRow, ChangelogTable, Db } from '../db/types.js';
import { all, columns, first, read, statement, statementPerPageSize, type Work } from '../db/statements.js';
import { applyStats, statsOf, type StatsDelta } from './stats.js';
import { pageOffset } from './sql.js';

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

const insertChange = statement((db, p: Insertable<ChangelogTable>) =>
  db.insertInto('changelog').values(columns(p, ['owner_id', 'entity_type', 'record_id', 'action', 'source', 'field_changes', 'created_at'])));

/**
 * Ends a write: its changelog entries and the entity's counts, in the write's own transaction, so
 * both commit or roll back with the write itself.
 */
export function* commitWrite(actor: Actor, changes: Change[], delta: StatsDelta, at: string): Work<void> {
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

export interface ChangelogQuery {
  page: number;
  limit: number;
  /** Exclusive lower bound, canonical ISO string. */
  since?: string | undefined;
}

const changesPage = statementPerPageSize(CHANGELOG_PAGE_MAX, (db, p: { ownerId: number; offset: number }, limit) => db.selectFrom('changelog')
  .selectAll().where('owner_id', '=', p.ownerId).orderBy('id').limit(sql.lit(limit)).offset(p.offset));

// `+id` keeps the order but stops SQLite's planner from walking the whole history in id order to skip
// a sort: it ranges over (owner_id, created_at) and sorts the few recent entries.
const changesSincePage = statementPerPageSize(CHANGELOG_PAGE_MAX, (db, p: { ownerId: number; since: string; offset: number }, limit) => db.selectFrom('changelog')
  .selectAll().where('owner_id', '=', p.ownerId).where('created_at', '>', p.since)
  .orderBy(sql<number>`+${sql.ref('id')}`).limit(sql.lit(limit)).offset(p.offset));

const changesSinceCount = statement((db, p: { ownerId: number; since: string }) => db.selectFrom('changelog')
  .select((eb) => eb.fn.countAll<number>().as('n')).where('owner_id', '=', p.ownerId).where('created_at', '>', p.since));

export function listChanges(db: Db, ownerId: number, { page, limit, since }: ChangelogQuery) {
  return read(db, (function* () {
    const offset = pageOffset(page, limit);
    if (since === undefined) {
      const rows = yield* all(changesPage(limit), { ownerId, offset });
      // The whole changelog's size is kept, not counted.
      return { changes: rows.map(toChangelogEntry), total: (yield* statsOf(ownerId)).changelog };
    }
    const rows = yield* all(changesSincePage(limit), { ownerId, since, offset });
    // Only a `since` window is counted (a sync polls a short one).
    const counted = yield* first(changesSinceCount, { ownerId, since });
    return { changes: rows.map(toChangelogEntry), total: Number(counted?.n ?? 0) };
  })());
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
