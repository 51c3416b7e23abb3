import type { ColumnDefinitionBuilder, CreateIndexBuilder, Kysely } from 'kysely';
import type { Dialect } from '../connect.js';

/**
 * What the migrations share: the one way a table gets an auto-increment key and a migration is all or
 * nothing. A migration is the schema's history and never changes once released; these helpers only
 * spell the same statements once, so every migration's schema stays what it was.
 */

/** The auto-increment key of a table a migration creates, by dialect. */
export interface Keys {
  serial: 'serial' | 'integer';
  bigSerial: 'bigserial' | 'integer';
  /** Their type when another table points at them. */
  bigint: 'bigint' | 'integer';
  /** SQLite's AUTOINCREMENT never reuses the id of a deleted row; PostgreSQL sequences never do either. */
  pk: (c: ColumnDefinitionBuilder) => ColumnDefinitionBuilder;
}

export function keys(dialect: Dialect): Keys {
  const postgres = dialect === 'postgres';
  return {
    serial: postgres ? 'serial' : 'integer',
    bigSerial: postgres ? 'bigserial' : 'integer',
    bigint: postgres ? 'bigint' : 'integer',
    pk: (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()),
  };
}

/**
 * `work` as one transaction: Kysely runs SQLite migrations outside a transaction (PostgreSQL's each in
 * its own), and a migration cut short must leave the schema as it found it.
 */
export function allOrNothing(dialect: Dialect, work: (db: Kysely<any>) => Promise<void>): (db: Kysely<any>) => Promise<void> {
  return (db) => (dialect === 'sqlite' ? db.transaction().execute(work) : work(db));
}

/** A plain index of `table` on `columns`, in order; chain `.unique()` or `.where(…)` before `execute`. */
export function index(db: Kysely<any>, name: string, table: string, columns: string[]): CreateIndexBuilder {
  return db.schema.createIndex(name).on(table).columns(columns);
}
