import { ApiError } from '../domain/errors.js';

/**
 * Driver errors of both dialects, recognised in one place so the store and the runtimes can turn them
 * into domain outcomes: a 409, "someone else inserted it first", a retry, or a 503.
 */
const codeOf = (error: unknown): unknown =>
  typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;

export function isUniqueViolation(error: unknown): boolean {
  const code = codeOf(error);
  // better-sqlite3: SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; pg: SQLSTATE 23505 unique_violation.
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** SQLite: another connection (another process) holds the lock this statement needs. */
export function isBusy(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** PostgreSQL aborted the transaction to break a deadlock or a serialization conflict: run it again. */
export function isRetryableConflict(error: unknown): boolean {
  const code = codeOf(error);
  return code === '40P01' || code === '40001';
}

// Connection refused, unknown host or timed out, the server shutting down or refusing connections.
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '53300']);

/** pg's pool or client gave up waiting for a connection (reported by message only). */
export const isConnectTimeout = (error: unknown): boolean =>
  error instanceof Error && /timeout exceeded when trying to connect|timeout expired/.test(error.message);

/** The database cannot be reached or is busy beyond a short wait: a 503, not a 500. */
export function isUnavailable(error: unknown): boolean {
  if (isBusy(error)) return true;
  const code = codeOf(error);
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  // pg reports a dropped connection by message only, as it does a timeout.
  return isConnectTimeout(error) || (error instanceof Error && /Connection terminated/.test(error.message));
}

/**
 * A database that cannot be opened, said so that an operator knows what to do: PostgreSQL's "database
 * does not exist" and "role does not exist" come with the command that creates them; anything else
 * (refused connection, wrong password) keeps the driver's words. `undefined` for other errors.
 */
export function connectionProblem(error: unknown): string | undefined {
  const code = codeOf(error);
  const message = error instanceof Error ? error.message : String(error);
  const name = /"([^"]+)"/.exec(message)?.[1] ?? 'NAME';
  // SQLSTATE 3D000 invalid_catalog_name; 28000 invalid_authorization_specification.
  if (code === '3D000') {
    return `${message}: create it first with \`createdb ${name}\` (same host, port and user as DATABASE_URL) or \`CREATE DATABASE "${name}";\` in psql, then run the command again`;
  }
  if (code === '28000' && /role .* does not exist/.test(message)) {
    return `${message}: create the role first with \`createuser --pwprompt ${name}\` or \`CREATE ROLE "${name}" LOGIN PASSWORD '…';\` in psql`;
  }
  if (isUnavailable(error) || code === '28P01') return `cannot open the database: ${message}`;
  return undefined;
}

/** What a caller gets when the database is unavailable: 503 with a hint when to come back. */
export const databaseUnavailable = (): ApiError =>
  new ApiError('service_unavailable', 'The database is busy or unreachable; try again shortly.', { retry_after: 1 });

/** The error as the API should answer it: a database that is unavailable becomes a 503. */
export const translateUnavailable = (error: unknown): unknown => (isUnavailable(error) ? databaseUnavailable() : error);
