import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { statsCounts } from './003_entity_stats.js';

/** Slots of an entity's counts on PostgreSQL; each connection writes the one its backend id picks. */
export const STATS_SLOTS = 64;
/** Changelog ids a PostgreSQL transaction may take: its transaction id times this, plus 0 … this − 1. */
export const CHANGES_PER_TRANSACTION = 4096;

/**
 * Writes of one entity that PostgreSQL can run side by side.
 *
 * - `entity_stats` gets a `slot`: each PostgreSQL connection adds its deltas to the slot of its backend
 *   process (up to 64 per entity), so concurrent writes of one catalog no longer queue for one row lock;
 *   a read sums the slots. SQLite writes one at a time and keeps slot 0. `version` counts the writes
 *   recorded, so the sum of versions changes with every committed write (public page caches use it).
 * - PostgreSQL changelog ids follow transaction ids: the column's default `changelog_next_id()` gives
 *   `id_base + (xid − xid_base) × 4096 + n`, n counting the transaction's entries (a transaction-local
 *   setting, so a rolled-back savepoint gives its numbers back). Ids then order entries as their
 *   transactions took ids, and `changelog_horizon()` tells which ids are final — those of transactions
 *   older than every one of this database still running — so a poller following `after` never skips
 *   an entry committed late with a smaller id (src/store/changelog.ts). No lock is held to the commit:
 *   PostgreSQL's group commit works for concurrent writes of one catalog.
 *
 * On an existing PostgreSQL database the stats keep their row as slot 0 and every id handed out from
 * now on is above every existing one; the changelog's old sequence goes.
 */
export function parallelWrites(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect === 'sqlite') {
        // Kysely runs SQLite migrations outside a transaction; the table rebuild must be all or nothing.
        await db.transaction().execute(async (trx) => {
          await createStats(trx, 'entity_stats_v6');
          await sql`insert into entity_stats_v6 (entity_id, slot, artworks, available, reserved, sold, events, changelog,
              artworks_synced_at, events_synced_at, artists_synced_at, version)
            select entity_id, 0, artworks, available, reserved, sold, events, changelog,
              artworks_synced_at, events_synced_at, artists_synced_at, 0 from entity_stats`.execute(trx);
          await trx.schema.dropTable('entity_stats').execute();
          await trx.schema.alterTable('entity_stats_v6').renameTo('entity_stats').execute();
        });
        return;
      }
      await db.schema.alterTable('entity_stats').addColumn('slot', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.schema.alterTable('entity_stats').addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
      await sql`alter table entity_stats drop constraint entity_stats_pkey`.execute(db);
      await sql`alter table entity_stats add primary key (entity_id, slot)`.execute(db);
      await db.schema.createTable('changelog_clock')
        .addColumn('xid_base', 'bigint', (c) => c.notNull())
        .addColumn('id_base', 'bigint', (c) => c.notNull())
        .execute();
      // Every id handed out from now on is above every id handed out before.
      await sql`insert into changelog_clock (xid_base, id_base)
        select pg_current_xact_id()::text::bigint, coalesce(max(id), 0) + ${sql.lit(CHANGES_PER_TRANSACTION)} from changelog`.execute(db);
      await sql`create function changelog_next_id() returns bigint language plpgsql volatile as $$
        declare
          n bigint := coalesce(nullif(current_setting('changelog.entries', true), ''), '0')::bigint;
          base bigint;
        begin
          if n >= ${sql.lit(CHANGES_PER_TRANSACTION)} then
            raise exception 'a transaction writes at most % changelog entries', ${sql.lit(CHANGES_PER_TRANSACTION)}
              using errcode = 'program_limit_exceeded';
          end if;
          select id_base + (pg_current_xact_id()::text::bigint - xid_base) * ${sql.lit(CHANGES_PER_TRANSACTION)} into base from changelog_clock;
          perform set_config('changelog.entries', (n + 1)::text, true);
          return base + n;
        end $$`.execute(db);
      await sql`alter table changelog alter column id drop default`.execute(db);
      await sql`drop sequence if exists changelog_id_seq`.execute(db);
      await sql`alter table changelog alter column id set default changelog_next_id()`.execute(db);
      // The first changelog id the oldest transaction of this database still running when the calling
      // statement's snapshot was taken could take. Transactions that write no changelog here do not
      // count: those of another database, and those of processes other than client connections (an
      // autovacuum's ANALYZE takes a transaction id and may run for seconds). STABLE: it sees the snapshot of the statement calling it. PL/pgSQL keeps
      // its plans per connection (an SQL function would plan its query on every call); the activity
      // of other backends is read only while transactions are running.
      await sql`create function changelog_horizon() returns bigint language plpgsql stable as $$
        declare
          snapshot pg_snapshot := pg_current_snapshot();
          oldest bigint;
        begin
          select min(x::text::bigint) into oldest from pg_snapshot_xip(snapshot) as x
            where xid(x) not in (select a.backend_xid from pg_stat_get_activity(null) as a
              where a.backend_xid is not null
                and (a.backend_type <> 'client backend' or a.datid <> (select oid from pg_database where datname = current_database())));
          return (select id_base + (coalesce(oldest, pg_snapshot_xmax(snapshot)::text::bigint) - xid_base) * ${sql.lit(CHANGES_PER_TRANSACTION)}
            from changelog_clock);
        end $$`.execute(db);
    },
  };
}

async function createStats(db: Kysely<any>, table: string): Promise<void> {
  await statsCounts(db.schema.createTable(table)
    .addColumn('entity_id', 'integer', (c) => c.notNull().references('entities.id'))
    .addColumn('slot', 'integer', (c) => c.notNull()))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint(`${table}_pkey`, ['entity_id', 'slot'])
    .execute();
}
