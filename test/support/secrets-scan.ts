import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestApp } from './app.js';

/**
 * What a copy of the database would reveal (docs/operations.md, Secrets at rest): every whole key
 * (`ak_live_` + 32 characters; the 16-character prefix is public) and every `whsec_` value found in
 * the SQLite file and its WAL, or in every PostgreSQL table read as text. Empty when none is there.
 */
export async function plainSecretsIn(t: TestApp): Promise<string[]> {
  return secretsIn(await databaseText(t.config.databaseUrl));
}

const secretsIn = (text: string): string[] => [...text.match(WHOLE_KEY) ?? [], ...text.match(WHOLE_SECRET) ?? []];

// In the SQLite file a key's prefix is stored next to its SHA-256 in hex (its row, its indexes' cells):
// a prefix followed by 24 lower-case hex digits is that, not a key, which has them all with a chance of
// (16/62)^24, about 1e-14.
const WHOLE_KEY = /ak_live_[A-Za-z0-9]{8}(?![0-9a-f]{24})[A-Za-z0-9]{24}/g;
const WHOLE_SECRET = /whsec_[A-Za-z0-9+/]{40,}={0,2}/g;

/**
 * Every test database is scanned when it is dropped (test/support/database.ts): a plain secret left in it
 * fails the file with where it is, the table and the column (or a freed page or the WAL of a SQLite file).
 * `url` is a `sqlite:` path or a PostgreSQL URL; the database is closed by then.
 */
export async function assertNoPlainSecrets(url: string): Promise<void> {
  const found = secretsIn(await databaseText(url));
  if (found.length === 0) return;
  const where = await Promise.all([...new Set(found)].map(async (secret) => `${secret.slice(0, 16)}… in ${await placeOf(url, secret)}`));
  throw new Error(`a plain secret is left in the test database ${url} (docs/operations.md, Secrets at rest): ${where.join('; ')}`);
}

/** Every text the database holds, as a reader of its files (SQLite) or of its tables (PostgreSQL) sees it. */
export async function databaseText(url: string): Promise<string> {
  if (url.startsWith('sqlite:')) {
    const file = url.replace(/^sqlite:/, '');
    return [file, `${file}-wal`].filter((path) => existsSync(path)).map((path) => readFileSync(path).toString('latin1')).join('\n');
  }
  return withClient(url, async (client) => {
    const texts: string[] = [];
    for (const table of await tablesOf(client)) {
      const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${table}" t`);
      texts.push(...rows.rows.map((r) => r.row));
    }
    return texts.join('\n');
  });
}

/** The table and column that hold `found`, read only when one was found. */
async function placeOf(url: string, found: string): Promise<string> {
  // A match in a file's bytes may run on into the next cell's: its first 30 characters find its row.
  const secret = found.slice(0, 30);
  if (url.startsWith('sqlite:')) {
    const path = url.replace(/^sqlite:/, '');
    if (!existsSync(path)) return 'the WAL';
    const db = new Database(path, { readonly: true });
    try {
      const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").all();
      for (const { name } of tables) {
        for (const { name: column } of db.prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${name}')`).all()) {
          if (db.prepare(`SELECT 1 FROM "${name}" WHERE CAST("${column}" AS TEXT) LIKE ? LIMIT 1`).get(`%${secret}%`)) return `${name}.${column}`;
        }
      }
    } finally {
      db.close();
    }
    return 'a freed page or the WAL of the file (no live row holds it)';
  }
  return withClient(url, async (client) => {
    for (const table of await tablesOf(client)) {
      const columns = await client.query<{ name: string }>('SELECT column_name AS name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2', ['public', table]);
      for (const { name } of columns.rows) {
        if ((await client.query(`SELECT 1 FROM "${table}" WHERE "${name}"::text LIKE $1 LIMIT 1`, [`%${secret}%`])).rowCount) return `${table}.${name}`;
      }
    }
    return 'no single column';
  });
}

async function tablesOf(client: pg.Client): Promise<string[]> {
  const tables = await client.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'");
  return tables.rows.map((row) => row.name);
}

async function withClient<T>(url: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
