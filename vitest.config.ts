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
    if (process.env.REQUIRE_POSTGRES) throw new Error(`PostgreSQL at ${POSTGRES} does not answer: ${(error as Error).message}`);
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export default defineConfig(async (): Promise<ViteUserConfig> => {
  const withPostgres = await postgresAnswers();
  if (!withPostgres) console.warn(`PostgreSQL at ${POSTGRES} does not answer: running the SQLite pass only.`);
  return {
    test: {
      testTimeout: 30_000,
      hookTimeout: 60_000,
      // Two cores: two workers keep files isolated without oversubscribing the machine.
      maxWorkers: 2,
      projects: [
        { extends: true as const, test: { name: 'sqlite', include: ['test/**/*.test.ts'], env: { TEST_DIALECT: 'sqlite' } } },
        ...(withPostgres ? [{
          extends: true as const,
          test: {
            name: 'postgres',
            include: ['test/**/*.test.ts'],
            // Pure functions do not touch a database: one pass is enough.
            exclude: ['test/domain.test.ts'],
            env: { TEST_DIALECT: 'postgres', TEST_DATABASE_URL: POSTGRES },
          },
        }] : []),
      ],
    },
  };
});
