import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A database with every migration applied, to be cloned, never used: a SQLite file path or a PostgreSQL database name. */
    databaseTemplate: string;
  }
}

/**
 * Migrate once per run: each project builds one migrated database of its dialect, and every test database
 * (migratedDatabase in test/support/database.ts) is a copy of it (a copied file on SQLite, CREATE DATABASE …
 * TEMPLATE on PostgreSQL) instead of a new database running all migrations again.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = project.config.env as Record<string, string | undefined>;
  if (env.TEST_DIALECT === 'postgres') {
    const admin = env.TEST_DATABASE_URL!;
    const name = `art_catalog_template_${process.pid}_${randomBytes(4).toString('hex')}`;
    await run(admin, `CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const handle = connect(url.toString());
    try {
      await migrateToLatest(handle);
    } finally {
      await handle.close();
    }
    project.provide('databaseTemplate', name);
    return () => run(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-template-'));
  const path = join(dir, 'template.db');
  const handle = connect(`sqlite:${path}`);
  try {
    await migrateToLatest(handle);
  } finally {
    // Closing checkpoints the WAL into the file: the file alone is then the whole database.
    await handle.close();
  }
  project.provide('databaseTemplate', path);
  return async () => rmSync(dir, { recursive: true, force: true });
}

async function run(connectionString: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
