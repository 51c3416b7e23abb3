import { PostgresAdapter, type Compilable, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import { statement, type Params } from '../db/statement.js';
import type { Db } from '../db/types.js';

export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Row lock for a read-modify-write inside a transaction. PostgreSQL needs FOR UPDATE; SQLite has no
 * such clause and needs none, since it serialises writers.
 */
export function lockForUpdate<DB, TB extends keyof DB, O>(db: Db, query: SelectQueryBuilder<DB, TB, O>) {
  return isPostgres(db) ? query.forUpdate() : query;
}

/**
 * The entity's row, locked until the transaction ends: a count-then-insert under a per-entity cap (10
 * feeds, 10 endpoints) runs one at a time per entity on PostgreSQL, where two inserts could otherwise
 * pass one count. SQLite serialises writers, so it needs no lock.
 */
export const lockEntity = statement((db, p: Params<{ entityId: number }>) =>
  lockForUpdate(db, db.selectFrom('entities').select('id').where('id', '=', p.entityId)));

/** Rows to skip for a page; a page far past any data stays a valid (empty) page instead of overflowing. */
export const pageOffset = (page: number, limit: number): number => Math.min((page - 1) * limit, Number.MAX_SAFE_INTEGER);

/**
 * How deep a `page` may skip and still run on the event loop: walking this many index entries costs
 * tens of microseconds. Deeper pages are scans (src/db/README.md) and go to SQLite's reader thread.
 */
export const INLINE_OFFSET_MAX = 2_000;

/** A statement written in SQL (one dialect's), for what the query builder cannot say. */
export const rawQuery = <R>(db: Db, query: RawBuilder<R>): Compilable<R> => ({ compile: () => query.compile(db) });
