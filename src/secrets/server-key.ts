import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** Where the generated key lives when neither SECRET_KEY nor SECRET_KEY_FILE is set and the database is not a SQLite file. */
export const DEFAULT_KEY_FILE = 'data/secret.key';
const KEY_FILE_NAME = 'secret.key';

/**
 * The key file's default: beside a SQLite database (its folder is the one the service may write, and
 * is kept with the data), else data/secret.key under the working folder.
 */
export function defaultKeyFile(databaseUrl: string | undefined): string {
  const path = databaseUrl?.startsWith('sqlite:') ? databaseUrl.slice('sqlite:'.length) : '';
  return path && path !== ':memory:' ? join(dirname(path), KEY_FILE_NAME) : DEFAULT_KEY_FILE;
}
/** A SECRET_KEY shorter than this is refused: it would be guessable. */
export const SECRET_KEY_MIN_LENGTH = 32;

/**
 * The server's secret key material (docs/operations.md, Secrets at rest): SECRET_KEY if set, else the
 * contents of SECRET_KEY_FILE (default: secret.key beside a SQLite database, else data/secret.key),
 * generated (32 random bytes, base64, mode 0600) the first time a server or `migrate` needs it. Every process of one database must use the same key:
 * processes on one machine share the file; on several machines, set SECRET_KEY (or the file) alike.
 */
export function loadServerKey(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.SECRET_KEY;
  if (given !== undefined && given !== '') {
    // The value is a secret: the message never shows it.
    if (given.length < SECRET_KEY_MIN_LENGTH) throw new Error(`SECRET_KEY must be at least ${SECRET_KEY_MIN_LENGTH} characters (e.g. openssl rand -base64 32)`);
    return given;
  }
  const file = resolve(env.SECRET_KEY_FILE || defaultKeyFile(env.DATABASE_URL));
  try {
    return readKeyFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  try {
    createKeyFile(file);
  } catch (error) {
    throw new Error(`cannot create the server key file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}): set SECRET_KEY or SECRET_KEY_FILE (docs/operations.md, Secrets at rest)`, { cause: error });
  }
  return readKeyFile(file);
}

function readKeyFile(file: string): string {
  const key = readFileSync(file, 'utf8').trim();
  if (key.length < SECRET_KEY_MIN_LENGTH) throw new Error(`${file} holds no key of at least ${SECRET_KEY_MIN_LENGTH} characters`);
  return key;
}

/**
 * Writes a new key file whole, or leaves the one another process wrote first: the key is written to a
 * file of this process's own and linked into place, and a link never replaces a file that exists, so
 * two processes starting at once agree on one key and neither reads a half-written one.
 */
function createKeyFile(file: string): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(temporary, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}
