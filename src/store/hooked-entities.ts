import type { Db } from '../db/types.js';
import { entityMarks } from './entity-marks.js';

/**
 * PostgreSQL: the entities this process last found with an enabled webhook endpoint. A new artwork's
 * statement for an entity not in it leaves the webhook CTEs out, which cost ~40 µs of PostgreSQL's CPU
 * even when they write nothing (docs/performance.md, Writes, lists and growth), and writes nothing when
 * the entity has an enabled endpoint after all: the statement then says so, and the statement with the
 * CTEs runs instead (store/artworks.ts, `insertAndRecordOf`). A wrong guess costs one more statement, never
 * a message: an endpoint another process created a moment ago is seen by the statement itself. One set
 * per database, bounded (store/entity-marks.ts), the least recently found going first.
 */
const HOOKED_MAX = 10_000;
const hookedOf = entityMarks(HOOKED_MAX);

/** Whether the entity had an enabled endpoint when this process last looked; the statement checks. */
export const mayHaveEndpoints = (db: Db, entityId: number): boolean => hookedOf(db).has(entityId);

/** What a statement found of the entity's enabled endpoints; found, it is the newest mark. */
export function rememberEndpoints(db: Db, entityId: number, hooked: boolean): void {
  const marks = hookedOf(db);
  marks.unmark(entityId);
  if (hooked) marks.mark(entityId);
}
