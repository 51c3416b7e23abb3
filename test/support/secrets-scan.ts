import { existsSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { TestApp } from './app.js';
import { DIALECT } from './database.js';

/**
 * What a copy of the database would reveal (docs/operations.md, Secrets at rest): every whole key
 * (`ak_live_` + 32 characters; the 16-character prefix is public) and every `whsec_` value found in
 * the SQLite file and its WAL, or in every PostgreSQL table read as text. Empty when none is there.
 */
export async function plainSecretsIn(t: TestApp): Promise<string[]> {
  const text = await databaseText(t);
  return [...text.match(WHOLE_KEY) ?? [], ...text.match(WHOLE_SECRET) ?? []];
}

// In the SQLite file a key's prefix is stored next to its SHA-256 in hex (its row, its indexes' cells):
// a prefix followed by 24 lower-case hex digits is that, not a key, which has them all with a chance of
// (16/62)^24, about 1e-14.
const WHOLE_KEY = /ak_live_[A-Za-z0-9]{8}(?![0-9a-f]{24})[A-Za-z0-9]{24}/g;
const WHOLE_SECRET = /whsec_[A-Za-z0-9+/]{40,}={0,2}/g;

/** Every text the database holds, as a reader of its files (SQLite) or of its tables (PostgreSQL) sees it. */
export async function databaseText(t: TestApp): Promise<string> {
  if (DIALECT === 'sqlite') {
    const file = t.config.databaseUrl.replace(/^sqlite:/, '');
    return [file, `${file}-wal`].filter((path) => existsSync(path)).map((path) => readFileSync(path).toString('latin1')).join('\n');
  }
  const tables = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`.execute(t.handle.db);
  const texts: string[] = [];
  for (const { name } of tables.rows) {
    const rows = await sql<{ row: string }>`SELECT t::text AS row FROM ${sql.table(name)} t`.execute(t.handle.db);
    texts.push(...rows.rows.map((r) => r.row));
  }
  return texts.join('\n');
}
