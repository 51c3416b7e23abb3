import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing } from './kit.js';

/**
 * `feed_runs.allow_mass_delete` goes: a run's mass delete waits for `confirm-deletes` (docs/api.md,
 * Feeds), the flag was written as 0 by every run and read by none. The API field of that name stays
 * withdrawn (a body with it is refused). Down gives the column back, 0 for every run, as it was.
 */
export function noMassDeleteFlag(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, up),
    down: allOrNothing(dialect, down),
  };
}

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('feed_runs').dropColumn('allow_mass_delete').execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('feed_runs').addColumn('allow_mass_delete', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
