import { spawn } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { dialectOf } from './connect.js';

/** What a backup wrote: the file, and how it was made (for the operator and `--json`). */
export interface BackupResult {
  dialect: 'sqlite' | 'postgres';
  file: string;
  bytes: number;
  method: string;
}

/** Backs up the database of a DATABASE_URL into `file`, which must not exist yet. */
export async function backup(databaseUrl: string, file: string): Promise<BackupResult> {
  if (existsSync(file)) throw new Error(`${file} already exists; backup never overwrites a file`);
  const dialect = dialectOf(databaseUrl);
  try {
    const method = dialect === 'sqlite' ? await backupSqlite(databaseUrl.slice('sqlite:'.length), file) : await backupPostgres(databaseUrl, file);
    return { dialect, file, bytes: statSync(file).size, method };
  } catch (error) {
    // A half-written backup is worse than none, and would block the next attempt.
    rmSync(file, { force: true });
    throw error;
  }
}

/**
 * SQLite's online backup API: a consistent copy of a live WAL database, committed transactions of
 * the WAL included, while servers keep reading and writing it. Copying the `.db` file alone would
 * miss what is still in `-wal`. The copy is a complete database: restoring is putting it in place.
 */
async function backupSqlite(path: string, file: string): Promise<string> {
  if (path === ':memory:' || !existsSync(path)) throw new Error(`no SQLite database at ${path}`);
  const source = new SQLite(path, { fileMustExist: true });
  try {
    // Another process may hold the write lock for a moment; wait for it rather than fail.
    source.pragma('busy_timeout = 5000');
    await source.backup(file);
    return 'sqlite online backup';
  } finally {
    source.close();
  }
}

/**
 * PostgreSQL: `pg_dump --format=custom` (a consistent snapshot, restored with `pg_restore`). The
 * password travels in PGPASSWORD, not on a command line other users can read in `ps`.
 */
async function backupPostgres(databaseUrl: string, file: string): Promise<string> {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const env = { ...process.env, ...(password ? { PGPASSWORD: password } : {}) };
  const args = ['--format=custom', `--file=${file}`, url.toString()];
  await new Promise<void>((resolve, reject) => {
    const child = spawn('pg_dump', args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let text = '';
    child.stderr.on('data', (chunk: Buffer) => { text += chunk.toString(); });
    child.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT'
      ? new Error('pg_dump is not installed: install the PostgreSQL client tools of the server\'s major version '
        + '(e.g. apt-get install postgresql-client) or run `pg_dump --format=custom --file=FILE DATABASE_URL` where they are; docs/deploy.md, "Backups and restore"')
      : error));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`pg_dump failed (exit ${code}): ${text.trim().split('\n')[0] ?? ''}`))));
  });
  return 'pg_dump --format=custom';
}
