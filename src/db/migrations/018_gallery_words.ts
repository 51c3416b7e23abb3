import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';

/**
 * A gallery's own words (docs/push.md, How columns are read; docs/api.md, Feeds):
 * - `entities.default_currency`: the currency of prices that name none (ISO 4217, null by default).
 * - `feeds.mapping_frozen`: 1 when the feed's `mapping` is its whole reading. A feed made from now on
 *   stores its suggested columns with its mapping at its first read of the file (0 until then), so a
 *   later change of the words never changes how the feed reads. Every feed made before this migration
 *   is frozen as it reads today: its mapping, and columns named exactly as fields, nothing suggested.
 * - Availability `not_for_sale` (docs/api.md, Artworks): the artworks' check allows it, and the kept
 *   counts have a column for it.
 */
export function galleryWords(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('entities').addColumn('default_currency', 'text').execute();
      await db.schema.alterTable('feeds').addColumn('mapping_frozen', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await db.updateTable('feeds').set({ mapping_frozen: 1 }).execute();
      await db.schema.alterTable('entity_stats').addColumn('not_for_sale', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await availabilityCheck(db, dialect, AVAILABILITY_V18);
    },
    async down(db: Kysely<any>) {
      await db.updateTable('artworks').set({ availability: null }).where('availability', '=', 'not_for_sale').execute();
      await availabilityCheck(db, dialect, AVAILABILITY_V1);
      await db.schema.alterTable('entity_stats').dropColumn('not_for_sale').execute();
      await db.schema.alterTable('feeds').dropColumn('mapping_frozen').execute();
      await db.schema.alterTable('entities').dropColumn('default_currency').execute();
    },
  };
}

const AVAILABILITY_V1 = "availability in ('available', 'reserved', 'sold')";
const AVAILABILITY_V18 = "availability in ('available', 'reserved', 'sold', 'not_for_sale')";

/** Replaces the artworks' availability check with `check`. */
async function availabilityCheck(db: Kysely<any>, dialect: Dialect, check: string): Promise<void> {
  if (dialect === 'postgres') {
    const found = await sql<{ conname: string }>`select conname from pg_constraint
      where conrelid = 'artworks'::regclass and contype = 'c' and pg_get_constraintdef(oid) like '%availability%'`.execute(db);
    for (const { conname } of found.rows) await sql`alter table artworks drop constraint ${sql.id(conname)}`.execute(db);
    await sql`alter table artworks add constraint artworks_availability_check check (${sql.raw(check)})`.execute(db);
    return;
  }
  await rebuildSqliteArtworks(db, check);
}

/**
 * SQLite cannot change a check in place: the documented rebuild (sqlite.org/lang_altertable.html,
 * "Making Other Kinds Of Table Schema Changes"), the table's own statement with its check replaced,
 * its rows, indexes and autoincrement counter kept. Kysely runs SQLite migrations outside a transaction:
 * foreign keys are off for the rebuild, which is all or nothing.
 */
async function rebuildSqliteArtworks(db: Kysely<any>, check: string): Promise<void> {
  const table = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'artworks'`.execute(db);
  const created = table.rows[0]!.sql;
  const rewritten = created.replace(/availability in \([^)]*\)/, check).replace(/^create table\s+("?)artworks\1/i, 'create table artworks_v18');
  if (rewritten === created || !rewritten.startsWith('create table artworks_v18')) throw new Error('migration 018: the artworks table is not as expected');
  const others = await sql<{ sql: string }>`select sql from sqlite_master
    where tbl_name = 'artworks' and type in ('index', 'trigger') and sql is not null`.execute(db);
  const sequence = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'artworks'`.execute(db);
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await db.transaction().execute(async (trx) => {
      await sql.raw(rewritten).execute(trx);
      await sql`insert into artworks_v18 select * from artworks`.execute(trx);
      await sql`drop table artworks`.execute(trx);
      await sql`alter table artworks_v18 rename to artworks`.execute(trx);
      for (const { sql: statement } of others.rows) await sql.raw(statement).execute(trx);
      if (sequence.rows[0]) await sql`update sqlite_sequence set seq = ${sequence.rows[0].seq} where name = 'artworks'`.execute(trx);
      const broken = await sql`pragma foreign_key_check`.execute(trx);
      if (broken.rows.length > 0) throw new Error('migration 018: a foreign key would break');
    });
  } finally {
    await sql`pragma foreign_keys = on`.execute(db);
  }
}
