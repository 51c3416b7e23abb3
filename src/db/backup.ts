import { spawn } from 'node:child_process';
import { closeSync, constants, existsSync, fstatSync, openSync, rmSync } from 'node:fs';
import SQLite from 'better-sqlite3';
import { dialectOf } from './connect.js';

/** What a backup wrote: the file, and how it was made (for the operator and `--json`). */
export interface BackupResult {
  dialect: 'sqlite' | 'postgres';
  file: string;
  bytes: number;
  method: string;
}

/**
 * Backs up the database of a DATABASE_URL into `file`, which must not exist yet. The file is created
 * exclusively, without following a link, readable by its owner only (0600: it holds key hashes): a
 * dangling symlink planted at `file` is refused instead of sending the database to its target.
 */
export async function backup(databaseUrl: string, file: string): Promise<BackupResult> {
  const dialect = dialectOf(databaseUrl);
  const fd = createExclusively(file);
  try {
    const method = dialect === 'sqlite' ? await backupSqlite(databaseUrl.slice('sqlite:'.length), file) : await backupPostgres(databaseUrl, fd);
    return { dialect, file, bytes: fstatSync(fd).size, method };
  } catch (error) {
    // A half-written backup is worse than none, and would block the next attempt. The file is ours:
    // created above, where nothing was before.
    rmSync(file, { force: true });
    throw error;
  } finally {
    closeSync(fd);
  }
}

function createExclusively(file: string): number {
  try {
    return openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP') throw new Error(`${file} already exists; backup never overwrites a file`, { cause: error });
    throw error;
  }
}

/**
 * SQLite's online backup API: a consistent copy of a live WAL database, committed transactions of
 * the WAL included, while servers keep reading and writing it. Copying the `.db` file alone would
 * miss what is still in `-wal`. The copy is a complete database: restoring is putting it in place.
 */
async function backupSqlite(path: string, file: string): Promise<string> {
  // SQLite opens `file` by name: the empty file created above, whose mode it keeps (and gives its journal).
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
 * PostgreSQL: `pg_dump --format=custom` (a consistent snapshot, restored with `pg_restore`), written to
 * its standard output, which is the file created above: pg_dump never opens a path itself. The
 * password travels in PGPASSWORD, not on a command line other users can read in `ps`.
 */
async function backupPostgres(databaseUrl: string, fd: number): Promise<string> {
  const url = new URL(databaseUrl);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const env = { ...process.env, ...(password ? { PGPASSWORD: password } : {}) };
  const args = ['--format=custom', url.toString()];
  await new Promise<void>((resolve, reject) => {
    const child = spawn('pg_dump', args, { env, stdio: ['ignore', fd, 'pipe'] });
    let text = '';
    child.stderr!.on('data', (chunk: Buffer) => { text += chunk.toString(); });
    child.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'ENOENT'
      ? new Error('pg_dump is not installed: install the PostgreSQL client tools of the server\'s major version '
        + '(e.g. apt-get install postgresql-client) or run `pg_dump --format=custom --file=FILE DATABASE_URL` where they are; docs/deploy.md, "Backups and restore"')
      : error));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`pg_dump failed (exit ${code}): ${text.trim().split('\n')[0] ?? ''}`))));
  });
  return 'pg_dump --format=custom';
}
