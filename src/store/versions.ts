import { read } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Db } from '../db/types.js';
import { first } from '../db/work.js';

/**
 * The version of everything an entity's API answers show (docs/api.md, Conditional requests): the
 * sum of its stats slots' `version` — every API write bumps it in the write's own transaction, in
 * any process, and so does an image state change (docs/api.md, Images) — and the entity row's `updated_at` (operator
 * edits, pause). One indexed query: the entity by primary key, its slots next to each other in theirs.
 */
const entityVersionRow = statement((db, p: Params<{ entityId: number }>) => db.selectFrom('entities')
  .select(['updated_at'])
  .select((eb) => eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id')
    .select((s) => s.fn.sum<number | string>('version').as('v')).as('version'))
  .where('id', '=', p.entityId));

/** The entity's data version as a short string; undefined when the entity does not exist. */
export function entityVersion(db: Db, entityId: number): Promise<string | undefined> {
  return read(db, function* () {
    const row = yield* first(entityVersionRow, { entityId });
    return row ? `${Number(row.version ?? 0)}.${Date.parse(row.updated_at).toString(36)}` : undefined;
  });
}
