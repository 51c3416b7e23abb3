import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index, keys } from './kit.js';

/**
 * Feeds (docs/api.md, Feeds): a URL read on a schedule and applied like the console's Import.
 *
 * - `feeds`: the URL, kind, mapping (JSON `{"File column": "field" | null}`), encoding, sheet, mode and
 *   interval; `paused` (0/1) with its reason; `next_run_at`, when the schedule wants the next run;
 *   `etag`, `last_modified` and `body_hash` of the last file applied (the conditional fetch);
 *   `failures`, the failed runs in a row (5 pause the feed); `run_now_at`, the last "Run now" (one a
 *   minute). One URL is one feed per entity and kind.
 * - `feed_runs`: one row per run, queued → running → its outcome; `counts`, `problems` and
 *   `new_columns` are JSON text. Runs go with their feed.
 */
export function feeds(dialect: Dialect): Migration {
  const { serial: id, pk } = keys(dialect);
  return {
    up: allOrNothing(dialect, async (trx) => {
      await trx.schema.createTable('feeds')
        .addColumn('id', id, pk)
        .addColumn('entity_id', 'integer', (c) => c.notNull().references('entities.id'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('mapping', 'text', (c) => c.notNull())
        .addColumn('encoding', 'text', (c) => c.notNull())
        .addColumn('sheet', 'text')
        .addColumn('mode', 'text', (c) => c.notNull())
        .addColumn('interval_minutes', 'integer', (c) => c.notNull())
        .addColumn('paused', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('paused_reason', 'text')
        .addColumn('next_run_at', 'text')
        .addColumn('etag', 'text')
        .addColumn('last_modified', 'text')
        .addColumn('body_hash', 'text')
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('run_now_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('feeds_entity_kind_url', ['entity_id', 'kind', 'url'])
        .execute();
      await index(trx, 'feeds_due', 'feeds', ['next_run_at']).where(sql.ref('paused'), '=', 0).execute();
      await trx.schema.createTable('feed_runs')
        .addColumn('id', id, pk)
        .addColumn('feed_id', 'integer', (c) => c.notNull().references('feeds.id').onDelete('cascade'))
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('allow_mass_delete', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('queued_at', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text')
        .addColumn('finished_at', 'text')
        .addColumn('http_status', 'integer')
        .addColumn('counts', 'text')
        .addColumn('problems', 'text')
        .addColumn('error', 'text')
        .addColumn('new_columns', 'text')
        .execute();
      await index(trx, 'feed_runs_feed', 'feed_runs', ['feed_id', 'id']).execute();
      await index(trx, 'feed_runs_finished', 'feed_runs', ['finished_at']).execute();
    }),
    async down(db: Kysely<any>) {
      await db.schema.dropTable('feed_runs').execute();
      await db.schema.dropTable('feeds').execute();
    },
  };
}
