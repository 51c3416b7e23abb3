import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { assertNoPlainSecrets } from './secrets-scan.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A database with every migration applied, to be cloned, never used: a SQLite file path or a PostgreSQL database name. */
    databaseTemplate: string;
    /** The PostgreSQL run's part of its test databases' names (test/support/database.ts). */
    databaseRun: string;
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
    await query(admin, `CREATE DATABASE ${name}`);
    const url = new URL(admin);
    url.pathname = `/${name}`;
    const handle = connect(url.toString());
    try {
      await migrateToLatest(handle);
    } finally {
      await handle.close();
    }
    project.provide('databaseTemplate', name);
    const runId = randomBytes(4).toString('hex');
    project.provide('databaseRun', runId);
    return async () => {
      // The template, too, holds no plain secret (test/support/secrets-scan.ts): scanned before it is dropped.
      try {
        await assertNoPlainSecrets(url.toString());
      } finally {
        await query(admin, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
      // A test that did not drop its database (one that failed before its teardown, or forgot it) leaves it on a
      // server that CI machines keep: dropped here, and named, so the test can be mended.
      const left = await leftBehind(admin, `art_catalog_test_${runId}_`);
      for (const database of left) await query(admin, `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      if (left.length > 0) console.warn(`test databases their tests left behind, dropped: ${left.join(', ')}`);
    };
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
  return async () => {
    try {
      await assertNoPlainSecrets(`sqlite:${path}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

async function leftBehind(connectionString: string, prefix: string): Promise<string[]> {
  const rows = await query<{ datname: string }>(connectionString, 'select datname from pg_database where starts_with(datname, $1) order by datname', [prefix]);
  return rows.map((row) => row.datname);
}

async function query<Row extends pg.QueryResultRow>(connectionString: string, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}
