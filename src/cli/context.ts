import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { connect, type DatabaseHandle } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import { redactKeys } from '../domain/keys.js';
import { escapeControlCharacters } from '../domain/text.js';
import type { Db, EntityRow } from '../db/types.js';
import { findEntity } from '../store/entities.js';
import { cliIo } from './io.js';
import { parseId } from '../domain/ids.js';
import { ID_MAX } from '../schemas/common.js';

/** An error meant for the operator: printed as one line on stderr, exit status 1 (or the one given). */
export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

/**
 * Stored or received text as the CLI prints it: on one line, control characters escaped, and no API
 * key beyond its prefix (an operator pastes a whole key where a prefix or an id belongs).
 */
export const printable = (text: string): string => redactKeys(escapeControlCharacters(text));

/** Runs an admin command on the database of DATABASE_URL, migrated first; no server needed. */
export async function withDatabase<T>(run: (handle: DatabaseHandle) => Promise<T>, { migrate = true } = {}): Promise<T> {
  const config = loadConfig(cliIo().env);
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
  cliIo().stdout.write(json ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}

export function positiveId(raw: string, what = 'ID'): number {
  const id = parseId(raw);
  if (id === undefined) throw new CliError(`${what} must be a positive integer up to ${ID_MAX} (got "${raw}")`);
  return id;
}

/** Commander's parser of an `--entity <id>` option: the id, or the operator's one-line error. */
export const entityOption = (raw: string): number => positiveId(raw, '--entity');

/** The entity a command names by --entity; a missing one is the operator's one-line error. */
export async function existingEntity(db: Db, id: number): Promise<EntityRow> {
  const entity = await findEntity(db, id);
  if (!entity) throw new CliError(`no entity with id ${id}`);
  return entity;
}

/**
 * `<parent> list --entity ID [--json]`: the rows of one entity, after checking it exists (`no entity
 * with id 7` otherwise), one line each, or `none` when it has none.
 */
export function entityListCommand<T>(parent: Command, description: string, rows: RowsOfEntity<T>): void {
  parent.command('list')
    .description(description)
    .requiredOption('--entity <id>', 'entity id')
    .option('--json', 'print a JSON array')
    .action(async (opts: { entity: string; json?: boolean }) => {
      const entityId = positiveId(opts.entity, '--entity');
      const found = await withDatabase(async ({ db }) => {
        await existingEntity(db, entityId);
        return rows.list(db, entityId);
      });
      output(opts.json, found.map(rows.json), () => (found.length === 0 ? rows.none : found.map(rows.line).join('\n')));
    });
}

interface RowsOfEntity<T> {
  list: (db: Db, entityId: number) => Promise<T[]>;
  /** A row as `--json` prints it, and as a line of text. */
  json: (row: T) => unknown;
  line: (row: T) => string;
  /** The text when there are none. */
  none: string;
}
