import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { CHANGES_PER_TRANSACTION } from './006_parallel_writes.js';

/**
 * PostgreSQL: `changelog_next_id()` (migration 006, every changelog entry's id) without its read of
 * `changelog_clock`. The clock's one row is written once, by migration 006, and never after; its two
 * numbers are now written into the function as constants, read from that row here. The read was a
 * query run through PL/pgSQL's executor for every entry — about 30 µs of PostgreSQL's CPU each, a tenth
 * of a new POST's statement and 3 ms of a batch of 100 (docs/performance.md, Writes, lists and growth).
 * What the function answers is unchanged; `changelog_horizon()` still reads the row. Down reads it again.
 */
export function changelogIdConstants(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      if (dialect !== 'postgres') return;
      const { rows: [clock] } = await sql<{ xid_base: string | number; id_base: string | number }>`select xid_base, id_base from changelog_clock`.execute(db);
      if (!clock) throw new Error('changelog_clock has no row: migration 006 did not complete');
      const [idBase, xidBase] = [BigInt(clock.id_base), BigInt(clock.xid_base)].map((value) => sql.raw(value.toString()));
      await nextIdFunction(sql`${idBase} + (pg_current_xact_id()::text::bigint - ${xidBase}) * ${sql.lit(CHANGES_PER_TRANSACTION)}`).execute(db);
    },
    async down(db: Kysely<any>) {
      if (dialect !== 'postgres') return;
      await nextIdFunction(sql`(select id_base + (pg_current_xact_id()::text::bigint - xid_base) * ${sql.lit(CHANGES_PER_TRANSACTION)}
        from changelog_clock)`).execute(db);
    },
  };
}

/** The function with `base`, the transaction's first id, as given: n counts the transaction's entries (migration 006). */
const nextIdFunction = (base: RawBuilder<unknown>) => sql`create or replace function changelog_next_id() returns bigint language plpgsql volatile as $$
  declare
    n bigint := coalesce(nullif(current_setting('changelog.entries', true), ''), '0')::bigint;
  begin
    if n >= ${sql.lit(CHANGES_PER_TRANSACTION)} then
      raise exception 'a transaction writes at most % changelog entries', ${sql.lit(CHANGES_PER_TRANSACTION)}
        using errcode = 'program_limit_exceeded';
    end if;
    perform set_config('changelog.entries', (n + 1)::text, true);
    return ${base} + n;
  end $$`;
