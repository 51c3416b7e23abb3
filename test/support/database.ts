import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Which database this test run uses: the vitest project sets TEST_DIALECT (sqlite by default). */
export const DIALECT = process.env.TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';

/** The PostgreSQL server tests create their databases on. */
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database of the run's dialect: a SQLite file in a temp folder, or a PostgreSQL database. */
export async function freshDatabase(): Promise<FreshDatabase> {
  if (DIALECT === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'art-catalog-test-'));
    return { url: `sqlite:${join(dir, 'test.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `art_catalog_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
