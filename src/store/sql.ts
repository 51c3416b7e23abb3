import { PostgresAdapter, type SelectQueryBuilder } from 'kysely';
import type { Db } from '../db/types.js';

/** Now, as the service stores and answers it: UTC ISO 8601 with milliseconds. */
export const nowIso = (): string => new Date().toISOString();

/** Today's date in UTC, YYYY-MM-DD: the line between upcoming and past events. */
export const todayUtc = (): string => nowIso().slice(0, 10);

export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

/**
 * Row lock for a read-modify-write inside a transaction. PostgreSQL needs FOR UPDATE; SQLite has no
 * such clause and needs none, since it serialises writers.
 */
export function lockForUpdate<DB, TB extends keyof DB, O>(db: Db, query: SelectQueryBuilder<DB, TB, O>) {
  return isPostgres(db) ? query.forUpdate() : query;
}

/** Rows to skip for a page; a page far past any data stays a valid (empty) page instead of overflowing. */
export const pageOffset = (page: number, limit: number): number => Math.min((page - 1) * limit, Number.MAX_SAFE_INTEGER);
