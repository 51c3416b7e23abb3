import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index, keys } from './kit.js';

/**
 * One durable job queue for every kind of background work (src/jobs/README.md): image jobs now,
 * feed runs and webhook messages on the same table.
 *
 * - `jobs`: one row per job still to do, unique per (kind, key). `due_at` is when it may be taken; a
 *   process takes it by setting `claim` and moving `due_at` to the end of its lease (renewed while it
 *   works), so a job whose process died is simply due again when the lease has passed. A job that
 *   ends is deleted (its kind records the outcome in its own tables, in the same transaction).
 * - `job_turns`: per kind, when each entity with jobs was last served one, so that jobs are taken
 *   round-robin between entities (docs/architecture.md, Background jobs).
 *
 * Image jobs move here from `images.due_at`/`claim`/`locked_until` (migration 007), which are no
 * longer read: each due image becomes a job of the entity of its oldest record.
 */
export function jobs(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, (db) => createJobs(db, dialect)),
    async down(db: Kysely<any>) {
      await db.schema.dropTable('job_turns').execute();
      await db.schema.dropTable('jobs').execute();
    },
  };
}

async function createJobs(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const { bigSerial, pk } = keys(dialect);
  await db.schema.createTable('jobs')
    .addColumn('id', bigSerial, pk)
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'integer', (c) => c.notNull())
    .addColumn('grp', 'text')
    .addColumn('payload', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', 'text', (c) => c.notNull())
    .addColumn('claim', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addUniqueConstraint('jobs_kind_key', ['kind', 'key'])
    .execute();
  // An entity's next job: its due jobs in due order.
  await index(db, 'jobs_entity_due', 'jobs', ['kind', 'entity_id', 'due_at']).execute();
  // A group's jobs in flight (claimed, lease not passed), for the kind's cap per group.
  await index(db, 'jobs_group', 'jobs', ['kind', 'grp', 'due_at'])
    .where(sql.ref('grp'), 'is not', null).execute();
  await db.schema.createTable('job_turns')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('entity_id', 'integer', (c) => c.notNull())
    .addColumn('turn', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_turns_pk', ['kind', 'entity_id'])
    .execute();
  await index(db, 'job_turns_order', 'job_turns', ['kind', 'turn']).execute();
  const now = new Date().toISOString();
  await sql`insert into jobs (kind, key, entity_id, attempts, claims, due_at, created_at)
    select 'image', images.url, coalesce((
      select min(entity_id) from (
        select entity_id from artworks where image_url = images.url
        union all select entity_id from events where image_url = images.url) as used), 0),
      images.attempts, 0, images.due_at, ${now}
    from images where images.due_at is not null`.execute(db);
  await sql`insert into job_turns (kind, entity_id, turn)
    select distinct kind, entity_id, '' from jobs`.execute(db);
}
