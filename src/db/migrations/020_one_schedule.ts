import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index, keys } from './kit.js';

/**
 * One schedule (docs/architecture.md, Background jobs): a job's `due_at` is the only record of when it
 * runs next, so the copies each kind kept beside it go.
 *
 * - `images.due_at` (and `claim`, `locked_until`, unread since migration 011), `webhook_messages.next_attempt_at`
 *   and `feeds.next_run_at` are dropped with their indexes; what the API and the CLI showed of them is
 *   read from the job. A feed that is not paused and has no job (none is expected) gets one at its old
 *   time, so no feed stops running.
 * - Kinds are named alike: `feed-run` becomes `feed_run` (in `jobs` and `job_turns`).
 * - `job_failures`: a job given up or ended with a failed outcome, for the gauges' "failed in the last
 *   hour" (kept a day).
 * - Indexes for the gauges: `(kind, due_at)` for the oldest due job and the waiting count, and the
 *   claimed jobs of each kind (few) for the running count and a take's full groups; `(kind,
 *   entity_id, grp, due_at)` for a take's probes, so a take costs the same however long the queue.
 */
export function oneSchedule(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, (db) => up(db, dialect)),
    down: allOrNothing(dialect, down),
  };
}

async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  for (const table of ['jobs', 'job_turns']) await db.updateTable(table).set({ kind: 'feed_run' }).where('kind', '=', 'feed-run').execute();
  const now = new Date().toISOString();
  await sql`insert into jobs (kind, key, entity_id, attempts, claims, due_at, created_at)
    select 'feed_run', 'feed:' || cast(feeds.id as text), feeds.entity_id, 0, 0, feeds.next_run_at, ${now}
    from feeds where feeds.paused = 0 and feeds.next_run_at is not null
    on conflict (kind, key) do nothing`.execute(db);
  await sql`insert into job_turns (kind, entity_id, turn)
    select distinct kind, entity_id, '' from jobs where kind = 'feed_run'
    on conflict (kind, entity_id) do nothing`.execute(db);

  await db.schema.dropIndex('images_due').execute();
  await db.schema.dropIndex('webhook_messages_due').execute();
  await db.schema.dropIndex('feeds_due').execute();
  for (const column of ['due_at', 'claim', 'locked_until']) await db.schema.alterTable('images').dropColumn(column).execute();
  await db.schema.alterTable('webhook_messages').dropColumn('next_attempt_at').execute();
  await db.schema.alterTable('feeds').dropColumn('next_run_at').execute();

  const { bigSerial, pk } = keys(dialect);
  await db.schema.createTable('job_failures')
    .addColumn('id', bigSerial, pk)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'integer', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('error', 'text', (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .execute();
  await index(db, 'job_failures_kind_at', 'job_failures', ['kind', 'at']).execute();
  await index(db, 'job_failures_entity', 'job_failures', ['entity_id', 'kind', 'at']).execute();
  await index(db, 'job_failures_at', 'job_failures', ['at']).execute();
  await index(db, 'jobs_kind_due', 'jobs', ['kind', 'due_at']).execute();
  await index(db, 'jobs_claimed', 'jobs', ['kind', 'entity_id'])
    .where(sql.ref('claim'), 'is not', null).execute();
  // A take's probes (store/jobs.ts): an entity's groups by a skip scan, and each group's first due job.
  await index(db, 'jobs_take', 'jobs', ['kind', 'entity_id', 'grp', 'due_at']).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('jobs_take').execute();
  await db.schema.dropIndex('jobs_claimed').execute();
  await db.schema.dropIndex('jobs_kind_due').execute();
  await db.schema.dropTable('job_failures').execute();
  await db.schema.alterTable('feeds').addColumn('next_run_at', 'text').execute();
  await sql`update feeds set next_run_at = (select due_at from jobs where jobs.kind = 'feed_run' and jobs.key = 'feed:' || cast(feeds.id as text))`.execute(db);
  await db.schema.alterTable('webhook_messages').addColumn('next_attempt_at', 'text').execute();
  for (const column of ['due_at', 'claim', 'locked_until']) await db.schema.alterTable('images').addColumn(column, 'text').execute();
  await index(db, 'images_due', 'images', ['due_at']).where(sql.ref('due_at'), 'is not', null).execute();
  await index(db, 'webhook_messages_due', 'webhook_messages', ['next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending').execute();
  await index(db, 'feeds_due', 'feeds', ['next_run_at']).where(sql.ref('paused'), '=', 0).execute();
  for (const table of ['jobs', 'job_turns']) await db.updateTable(table).set({ kind: 'feed-run' }).where('kind', '=', 'feed_run').execute();
}
