import { Redis } from 'ioredis';
import pg from 'pg';
import { defineConfig, type ViteUserConfig } from 'vitest/config';

const POSTGRES = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';

/** Whether the PostgreSQL pass can run; CI sets REQUIRE_POSTGRES so a missing server fails instead of skipping. */
async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch (error) {
    if (process.env.REQUIRE_POSTGRES) throw new Error(`PostgreSQL at ${POSTGRES} does not answer: ${(error as Error).message}`, { cause: error });
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const REDIS = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether Redis answers; the PostgreSQL pass then also runs in multi-process mode (REDIS_URL set). */
async function redisAnswers(): Promise<boolean> {
  const redis = new Redis(REDIS, { lazyConnect: true, connectTimeout: 2000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch (error) {
    if (process.env.REQUIRE_POSTGRES) throw new Error(`Redis at ${REDIS} does not answer: ${(error as Error).message}`, { cause: error });
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Pure functions: no server, no database, no process (domain rules, formats, iCal bytes, the error catalog, image sizes). */
const UNIT = ['test/unit/**/*.test.ts'];

/**
 * Folders whose tests can answer differently on PostgreSQL (SQL, transactions, locks, cursors, collation, Redis
 * counters and locks in the scale set-up): they run in both the `sqlite` and the `postgres` project.
 * Not here, so SQLite only: test/http (transport: headers, compression, the event loop), test/process (the CLI's
 * text, the launcher, signals, the runtime), test/browser (what a browser shows does not depend on the dialect; the
 * server's side of it is proven in test/web and test/console), test/contract (OpenAPI, the clients, lint, fuzzing of
 * the request schemas). A test in one of those that is about storage goes into a folder below instead
 * (e.g. test/store/crash.test.ts, test/store/missing-database.test.ts).
 */
const DIALECT_FOLDERS = ['api', 'store', 'web', 'console', 'images', 'import', 'jobs', 'feeds', 'webhooks', 'coordination'];

/** Each database project migrates one template per run; a test's database is a copy of it (test/support/global-setup.ts). */
const MIGRATE_ONCE = ['test/support/global-setup.ts'];

/** One Chromium per run, shared by the test/browser files (test/support/browser-setup.ts). */
const ONE_BROWSER = 'test/support/browser-setup.ts';

export default defineConfig(async (): Promise<ViteUserConfig> => {
  const withPostgres = await postgresAnswers();
  if (!withPostgres) console.warn(`PostgreSQL at ${POSTGRES} does not answer: running the SQLite pass only.`);
  const withRedis = withPostgres && await redisAnswers();
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // Three workers on two cores: much of a test's time is spent waiting (a spawned server, Chromium, a lease, a
      // rate-limit window), so two workers left a third of the CPU idle. Quiet machine, whole run: 225 s with 2,
      // 198 s with 3 (docs/development.md).
      maxWorkers: 3,
      // A worker keeps its imported modules from one file to the next instead of importing src/ again for each
      // of ~160 files (on two loaded cores, vitest's run went from 356 s to 242 s). Each file still builds its
      // own app on its own database (test/support/app.ts), so nothing a test sees is shared; a file that needs a
      // module fresh (one it mocks, or its state at load) calls vi.resetModules() and imports it then
      // (test/images/image-worker.test.ts, test/web/web-format.test.ts).
      isolate: false,
      // Where a file runs follows from its folder (test/README.md): a new file is classified by where it is put.
      projects: [
        // Pure functions (no server, no database): the result cannot depend on the dialect, one pass.
        { extends: true as const, test: { name: 'unit', include: UNIT, env: { TEST_DIALECT: 'sqlite', REDIS_URL: '' } } },
        // SQLite pass: everything that needs a server, a database, a process or a browser; one process, counters in
        // memory, idempotency locks in the database.
        // It also starts the run's one Chromium, which the test/browser files connect to.
        { extends: true as const, test: { name: 'sqlite', include: ['test/**/*.test.ts'], exclude: UNIT, globalSetup: [...MIGRATE_ONCE, ONE_BROWSER], env: { TEST_DIALECT: 'sqlite', REDIS_URL: '' } } },
        // PostgreSQL pass: the scale set-up, with Redis for counters and locks when it answers; only the folders whose
        // result can depend on the dialect (see DIALECT_FOLDERS).
        ...(withPostgres ? [{
          extends: true as const,
          test: {
            name: 'postgres',
            include: DIALECT_FOLDERS.map((folder) => `test/${folder}/**/*.test.ts`),
            globalSetup: MIGRATE_ONCE,
            env: { TEST_DIALECT: 'postgres', TEST_DATABASE_URL: POSTGRES, ...(withRedis ? { REDIS_URL: REDIS } : {}) },
          },
        }] : []),
      ],
    },
  };
});
