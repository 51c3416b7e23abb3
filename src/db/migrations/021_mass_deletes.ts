import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index } from './kit.js';

/**
 * Mass deletes (docs/api.md, Feeds: mass deletes):
 *
 * - `feed_runs.allow_mass_delete` goes: a run's mass delete waits for `confirm-deletes`; the flag was
 *   written as 0 by every run and read by none. The API field of that name stays withdrawn (a body
 *   with it is refused). Down gives the column back, 0 for every run, as it was.
 * - `changelog_feed_deletes`: a mirror run counts its feed's deletes of the last 24 hours
 *   (store/feeds.ts, `recentFeedDeletes`); over `(owner_id, created_at)` that read every entry of the
 *   entity's day, 100,000 on a busy one, and PostgreSQL scanned the whole table instead. The index
 *   holds deletes only, so it costs nothing to other writes.
 */
export function massDeletes(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, up),
    down: allOrNothing(dialect, down),
  };
}

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('feed_runs').dropColumn('allow_mass_delete').execute();
  await index(db, 'changelog_feed_deletes', 'changelog', ['owner_id', 'source', 'created_at'])
    .where(sql.ref('action'), '=', sql.lit('delete')).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('changelog_feed_deletes').execute();
  await db.schema.alterTable('feed_runs').addColumn('allow_mass_delete', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
