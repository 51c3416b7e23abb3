import { loadConfig } from '../config.js';
import { connect, type DatabaseHandle } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { escapeControlCharacters } from '../domain/text.js';

/** An error meant for the operator: printed as one line on stderr, exit status 1 (or the one given). */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

/** Stored or received text as the CLI prints it: on one line, control characters escaped. */
export const printable = escapeControlCharacters;

/** Runs an admin command on the database of DATABASE_URL, migrated first; no server needed. */
export async function withDatabase<T>(run: (handle: DatabaseHandle) => Promise<T>, { migrate = true } = {}): Promise<T> {
  const config = loadConfig();
  const handle = connect(config.databaseUrl, { poolSize: 2, statementTimeoutMs: config.pgStatementTimeoutMs, connectTimeoutMs: 10_000 });
  try {
    if (migrate) await migrateToLatest(handle);
    return await run(handle);
  } finally {
    await handle.close();
  }
}

/** With --json, exactly one JSON document on stdout; otherwise the human-readable lines. */
export function output(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}

export function positiveId(raw: string, what = 'ID'): number {
  if (!/^[1-9][0-9]{0,9}$/.test(raw)) throw new CliError(`${what} must be a positive integer (got "${raw}")`);
  return Number(raw);
}
