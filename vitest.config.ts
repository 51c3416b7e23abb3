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

export default defineConfig(async (): Promise<ViteUserConfig> => {
  const withPostgres = await postgresAnswers();
  if (!withPostgres) console.warn(`PostgreSQL at ${POSTGRES} does not answer: running the SQLite pass only.`);
  const withRedis = withPostgres && await redisAnswers();
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // Two cores: two workers keep files isolated without oversubscribing the machine.
      maxWorkers: 2,
      projects: [
        // SQLite pass: one process, counters in memory, idempotency locks in the database.
        { extends: true as const, test: { name: 'sqlite', include: ['test/**/*.test.ts'], env: { TEST_DIALECT: 'sqlite', REDIS_URL: '' } } },
        // PostgreSQL pass: the scale set-up, with Redis for counters and locks when it answers.
        ...(withPostgres ? [{
          extends: true as const,
          test: {
            name: 'postgres',
            include: ['test/**/*.test.ts'],
            // Pure functions and the image stores do not touch a database: one pass is enough.
            exclude: ['test/domain.test.ts', 'test/image-derive.test.ts', 'test/image-store.test.ts'],
            env: { TEST_DIALECT: 'postgres', TEST_DATABASE_URL: POSTGRES, ...(withRedis ? { REDIS_URL: REDIS } : {}) },
          },
        }] : []),
      ],
    },
  };
});
