import { describe, expect, test } from 'vitest';
import { DIALECT } from '../helpers.js';
import { POSTGRES_ADMIN_URL } from '../support/database.js';
import { runCli } from '../support/serve.js';

/** The CLI on a PostgreSQL database that was never created (moved from test/process/cli.test.ts: it proves something only on PostgreSQL). */

describe.skipIf(DIALECT !== 'postgres')('a PostgreSQL database that does not exist', () => {
  test.each([['migrate'], ['serve']])('%s says to create it (createdb / CREATE DATABASE), with no stack trace, and exits 1', async (command) => {
    const missing = new URL(POSTGRES_ADMIN_URL);
    missing.pathname = '/art_catalog_never_created';
    const result = await runCli(missing.toString(), [command], { PORT: '0' });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr.trim().split('\n')).toEqual([
      'art-catalog: database "art_catalog_never_created" does not exist: create it first with `createdb art_catalog_never_created` '
      + '(same host, port and user as DATABASE_URL) or `CREATE DATABASE "art_catalog_never_created";` in psql, then run the command again',
    ]);
  });
});
