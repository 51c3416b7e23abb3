import type { ChangeAction, ChangeEntityType, ChangelogEntryType } from '../schemas/changelog.js';
import type { FieldChanges } from '../domain/diff.js';
import type { ChangelogRow, Db, Trx } from '../db/types.js';

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

/** Records a change; takes a transaction because the entry must commit or roll back with the write. */
export async function recordChange(trx: Trx, actor: Actor, change: Change, at: string): Promise<void> {
  await trx.insertInto('changelog').values({
    owner_id: actor.entityId,
    entity_type: change.entityType,
    record_id: change.recordId,
    action: change.action,
    source: actor.source,
    field_changes: JSON.stringify(change.fieldChanges),
    created_at: at,
  }).execute();
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
  const [rows, count] = await Promise.all([
    query.selectAll().orderBy('id').limit(limit).offset((page - 1) * limit).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { changes: rows.map(toChangelogEntry), total: Number(count.total) };
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
