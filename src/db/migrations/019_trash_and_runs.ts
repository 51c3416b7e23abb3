import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index, keys } from './kit.js';

/**
 * The trash and runs (docs/api.md, Trash; Runs).
 *
 * - `trash`: a deleted artwork or event, moved out of its table (so every list, count and public page
 *   reads exactly what it read before, and the record's identity is free) with the whole row as JSON
 *   text (`record`), what the trash list shows (`title`, `artist_name`), its `image_url` (the image is
 *   kept until the purge), who deleted it (`deleted_by`, the changelog source) and when (the purge
 *   removes it TRASH_DAYS later). One row per record: `(kind, record_id)` is unique.
 * - `changelog.run_id`: the run a write belongs to (a console import's Apply, a feed run, an undo).
 * - `artworks.feed_id`, `events.feed_id`: the feed that created the record or whose row last changed
 *   it, filled from each record's latest `feed:N` changelog entry (of a feed that still exists).
 * - `feed_runs` becomes every run's table: `feed_id` may be null (imports, undos), and a run knows its
 *   entity, `kind` (`feed`, `import`, `undo`), `record_kind`, `source`, `undo_of`, `undone_by` and
 *   `pending_deletes` (JSON text).
 */
export function trashAndRuns(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, (db) => up(db, dialect)),
    async down(db: Kysely<any>) {
      await db.schema.dropTable('trash').ifExists().execute();
      await db.schema.dropIndex('changelog_run').ifExists().execute();
      await db.schema.alterTable('changelog').dropColumn('run_id').execute();
      for (const table of ['artworks', 'events']) {
        await db.schema.dropIndex(`${table}_feed`).ifExists().execute();
        await db.schema.alterTable(table).dropColumn('feed_id').execute();
      }
      await db.schema.dropIndex('feed_runs_entity').ifExists().execute();
      for (const column of ['entity_id', 'kind', 'record_kind', 'source', 'undo_of', 'undone_by', 'pending_deletes']) {
        await db.schema.alterTable('feed_runs').dropColumn(column).execute();
      }
    },
  };
}

async function up(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const { serial, pk } = keys(dialect);
  await db.schema.createTable('trash')
    .addColumn('id', serial, pk)
    .addColumn('owner_id', 'integer', (c) => c.notNull().references('entities.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('record_id', 'integer', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('artist_name', 'text')
    .addColumn('image_url', 'text')
    .addColumn('record', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text', (c) => c.notNull())
    .addColumn('deleted_by', 'text', (c) => c.notNull())
    .execute();
  await index(db, 'trash_record', 'trash', ['kind', 'record_id']).unique().execute();
  await index(db, 'trash_owner', 'trash', ['owner_id', 'deleted_at', 'id']).execute();
  await index(db, 'trash_owner_kind', 'trash', ['owner_id', 'kind', 'deleted_at', 'id']).execute();
  await index(db, 'trash_deleted', 'trash', ['deleted_at']).execute();
  await index(db, 'trash_image', 'trash', ['image_url']).where(sql.ref('image_url'), 'is not', null).execute();

  await db.schema.alterTable('changelog').addColumn('run_id', 'integer').execute();
  await index(db, 'changelog_run', 'changelog', ['owner_id', 'run_id', 'id'])
    .where(sql.ref('run_id'), 'is not', null).execute();

  for (const [table, type] of [['artworks', 'artwork'], ['events', 'event']] as const) {
    await db.schema.alterTable(table).addColumn('feed_id', 'integer').execute();
    await index(db, `${table}_feed`, table, ['feed_id', 'id']).where(sql.ref('feed_id'), 'is not', null).execute();
    // One pass over the feeds' entries: each record's latest, of a feed that still exists.
    await sql`
      update ${sql.table(table)} set feed_id = latest.feed_id
      from (
        select record_id, feed_id from (
          select c.record_id, cast(substr(c.source, 6) as integer) as feed_id,
            row_number() over (partition by c.record_id order by c.id desc) as n
          from changelog c
          where c.entity_type = ${type} and c.source like 'feed:%') ranked
        where n = 1) latest
      where ${sql.ref(`${table}.id`)} = latest.record_id
        and exists (select 1 from feeds f where f.id = latest.feed_id and f.entity_id = ${sql.ref(`${table}.entity_id`)})`.execute(db);
  }

  if (dialect === 'postgres') {
    await sql`alter table feed_runs alter column feed_id drop not null`.execute(db);
  } else {
    // SQLite cannot drop a NOT NULL: the table is built again, rows and ids as they were.
    await sql`create table feed_runs_v19 (
      id integer primary key autoincrement,
      feed_id integer references feeds(id) on delete cascade,
      status text not null, allow_mass_delete integer not null default 0, queued_at text not null,
      started_at text, finished_at text, http_status integer, counts text, problems text, error text, new_columns text)`.execute(db);
    await sql`insert into feed_runs_v19 select id, feed_id, status, allow_mass_delete, queued_at, started_at, finished_at,
      http_status, counts, problems, error, new_columns from feed_runs`.execute(db);
    await sql`drop table feed_runs`.execute(db);
    await sql`alter table feed_runs_v19 rename to feed_runs`.execute(db);
    await index(db, 'feed_runs_feed', 'feed_runs', ['feed_id', 'id']).execute();
    await index(db, 'feed_runs_finished', 'feed_runs', ['finished_at']).execute();
  }
  const runs = () => db.schema.alterTable('feed_runs');
  await runs().addColumn('entity_id', 'integer').execute();
  await runs().addColumn('kind', 'text', (c) => c.notNull().defaultTo('feed')).execute();
  await runs().addColumn('record_kind', 'text').execute();
  await runs().addColumn('source', 'text').execute();
  await runs().addColumn('undo_of', 'integer').execute();
  await runs().addColumn('undone_by', 'integer').execute();
  await runs().addColumn('pending_deletes', 'text').execute();
  await sql`update feed_runs set
    entity_id = (select f.entity_id from feeds f where f.id = feed_runs.feed_id),
    record_kind = (select f.kind from feeds f where f.id = feed_runs.feed_id),
    source = 'feed:' || cast(feed_id as text)`.execute(db);
  await index(db, 'feed_runs_entity', 'feed_runs', ['entity_id', 'id']).execute();
}
