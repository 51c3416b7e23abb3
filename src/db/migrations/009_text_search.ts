import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';

/** The console's searches (src/store/console.ts) and the trigram indexes that answer them on PostgreSQL. */
const INDEXES = [
  ['artworks_title_trigrams', 'artworks', 'title'],
  ['artworks_artist_trigrams', 'artworks', 'artist_name'],
  ['events_title_trigrams', 'events', 'title'],
] as const;

/**
 * The console's search by title or artist (docs/console.md, Artworks and events) is a case-insensitive containment,
 * `lower(column) LIKE '%text%'`: without an index, a search that matches nothing reads all of an
 * entity's titles and artists (21 ms at 10,000 artworks on PostgreSQL). A GIN index of each column's
 * lower-cased trigrams (pg_trgm) finds the few rows that contain a text of three characters or more.
 * A write adds its trigrams to the index's pending list, merged into the index when it passes
 * `gin_pending_list_limit`: 64 kB here (the least) instead of the server's 4 MB, because every search
 * reads the pending list whole, and the planner prices a full one so high that it went back to the
 * scan (10,000 artworks written after the migration: 15 ms instead of 0.2 ms). Measured on 10,000
 * rows written 100 per statement: 0.03 s without the indexes, 0.25 s with them, 1.2 s without a
 * pending list (`fastupdate = off`).
 *
 * pg_trgm ships with PostgreSQL (contrib) and is a trusted extension since PostgreSQL 13: the
 * database's owner, the role docs/deploy.md sets up, may create it. SQLite has no such index; its
 * search stays a scan on the reader thread (2.6 ms at 10,000 artworks), so nothing changes there.
 */
export function textSearch(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect === 'sqlite') return;
      await createExtension(db);
      for (const [name, table, column] of INDEXES) {
        await sql`create index ${sql.id(name)} on ${sql.table(table)} using gin (lower(${sql.ref(column)}) gin_trgm_ops) with (gin_pending_list_limit = 64)`.execute(db);
      }
    },
    async down(db: Kysely<any>) {
      if (dialect === 'sqlite') return;
      // The extension stays: a database's owner may have installed it for more than this.
      for (const [name] of INDEXES) await db.schema.dropIndex(name).execute();
    },
  };
}

async function createExtension(db: Kysely<any>): Promise<void> {
  const database = (await sql<{ name: string }>`select current_database() as name`.execute(db)).rows[0]!.name;
  try {
    await sql`create extension if not exists pg_trgm`.execute(db);
  } catch (error) {
    throw new Error(`the pg_trgm extension could not be created (${(error as Error).message}): run \`CREATE EXTENSION pg_trgm;\` in database "${database}" as its owner or a superuser (it ships with PostgreSQL's contrib modules: the postgresql package on Debian and Ubuntu, postgresql-contrib elsewhere), then run the command again`, { cause: error });
  }
}
