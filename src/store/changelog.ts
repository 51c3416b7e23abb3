import type { ChangeAction, ChangeEntityType, ChangelogEntryType } from '../schemas/changelog.js';
import type { FieldChanges } from '../domain/diff.js';
import { sql, type Insertable } from 'kysely';
import type { ChangelogRow, ChangelogTable, Db } from '../db/types.js';
import { all, columns, statement, type Work } from '../db/statements.js';
import { applyStats, readStats, type StatsDelta } from './stats.js';
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

export async function listChanges(db: Db, ownerId: number, { page, limit, since }: ChangelogQuery) {
  let query = db.selectFrom('changelog').where('owner_id', '=', ownerId);
  if (since !== undefined) query = query.where('created_at', '>', since);
  // With `since`, `+id` keeps the order but stops SQLite's planner from walking the whole history in id
  // order to skip a sort: it ranges over (owner_id, created_at) and sorts the few recent entries.
  const order = since === undefined ? sql<number>`${sql.ref('id')}` : sql<number>`+${sql.ref('id')}`;
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy(order).limit(limit).offset(pageOffset(page, limit)).execute(),
    // The whole changelog's size is kept; only a `since` window is counted (a sync polls a short one).
    since === undefined ? readStats(db, ownerId).then((s) => s.changelog)
      : query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((c) => Number(c.n)),
  ]);
  return { changes: rows.map(toChangelogEntry), total };
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
