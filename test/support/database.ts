import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { assertNoPlainSecrets } from './secrets-scan.js';

/** Which database this test run uses: the vitest project sets TEST_DIALECT (sqlite by default). */
export const DIALECT = process.env.TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';

/** The PostgreSQL server tests create their databases on. */
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

export interface FreshDatabase {
  url: string;
  /**
   * Drops the database, after scanning it for a plain secret (test/support/secrets-scan.ts): one found fails
   * the test with its table and column. `plainSecretsKept` opts out, saying why: only for a test that plants
   * a plain secret on purpose and cannot end with it scrubbed.
   */
  drop(options?: { plainSecretsKept: string }): Promise<void>;
}

/** A PostgreSQL test database's name: its run's prefix (what a run leaves behind is dropped at its end: test/support/global-setup.ts), then a random part. */
function databaseName(): string {
  return `art_catalog_test_${inject('databaseRun') ?? process.pid}_${randomBytes(4).toString('hex')}`;
}

/** A new, empty database of the run's dialect: a SQLite file in a temp folder, or a PostgreSQL database. */
export async function freshDatabase(): Promise<FreshDatabase> {
  return DIALECT === 'sqlite' ? sqliteDatabase() : postgresDatabase();
}

/**
 * A new database of the run's dialect with every migration applied: a copy of the run's template
 * (test/support/global-setup.ts), so no test pays for the migrations; tests about migrating use freshDatabase.
 */
export async function migratedDatabase(): Promise<FreshDatabase> {
  const template = inject('databaseTemplate');
  if (!template) return migrated(await freshDatabase());
  if (DIALECT === 'sqlite') {
    if (!existsSync(template)) return migrated(await freshDatabase());
    return sqliteDatabase(template);
  }
  return postgresDatabase(template);
}

/** A SQLite file in a temp folder of its own: empty, or a copy of `template`. */
function sqliteDatabase(template?: string): FreshDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-test-'));
  if (template) copyFileSync(template, join(dir, 'test.db'));
  const url = `sqlite:${join(dir, 'test.db')}`;
  return {
    url,
    drop: async (options) => {
      try {
        if (!options?.plainSecretsKept) await assertNoPlainSecrets(url);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A PostgreSQL database of the run: empty, or a copy of the database `template`. */
async function postgresDatabase(template?: string): Promise<FreshDatabase> {
  const name = databaseName();
  await admin(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async (options) => {
      try {
        if (!options?.plainSecretsKept) await assertNoPlainSecrets(url.toString());
      } finally {
        await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }
    },
  };
}

/** The database migrated in place: for a run without a template (a file run outside the projects). */
async function migrated(database: FreshDatabase): Promise<FreshDatabase> {
  const handle = connect(database.url);
  try {
    await migrateToLatest(handle);
  } finally {
    await handle.close();
  }
  return database;
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

/** The queries the app sends to PostgreSQL meanwhile (pg's client is the app's), `BEGIN` and `COMMIT` included: its round trips. */
export async function queriesDuring(run: () => Promise<unknown>): Promise<Array<pg.QueryConfig & { client: pg.Client }>> {
  const seen: Array<pg.QueryConfig & { client: pg.Client }> = [];
  const query = Reflect.get(pg.Client.prototype, 'query') as (...args: unknown[]) => unknown;
  Reflect.set(pg.Client.prototype, 'query', function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    if (typeof config === 'string') seen.push({ text: config, client: this });
    else if (typeof config === 'object' && config !== null) seen.push({ ...(config as pg.QueryConfig), client: this });
    return query.call(this, config, ...rest);
  });
  try {
    await run();
  } finally {
    Reflect.set(pg.Client.prototype, 'query', query);
  }
  return seen;
}
