import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECT, migratedDatabase, type FreshDatabase } from '../helpers.js';
import { spawnServe } from '../support/serve.js';

/**
 * Whenever outgoing fetches may reach private addresses, the real `serve` says so in one warning line at
 * start, at any LOG_LEVEL (docs/operations.md, Configuration): FETCH_ALLOW_PRIVATE for feeds, webhooks
 * and images, IMAGE_FETCH_ALLOW_PRIVATE for images only; neither, no such line.
 */

async function startLines(env: NodeJS.ProcessEnv): Promise<string[]> {
  const server = spawnServe(env);
  let out = '';
  server.child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  try {
    await server.url;
  } finally {
    expect(await server.stop()).toBe(0);
  }
  return out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { level: number; msg: string }).map((r) => `${r.level} ${r.msg}`);
}

describe.skipIf(DIALECT !== 'sqlite')('serve at start', () => {
  let database: FreshDatabase;
  beforeAll(async () => {
    database = await migratedDatabase();
  });
  afterAll(() => database.drop());

  test('warns in one line when private addresses are allowed, naming what they are open to', async () => {
    const all = await startLines({ DATABASE_URL: database.url, FETCH_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'error' });
    expect(all.filter((line) => line.includes('private addresses'))).toEqual([
      '40 FETCH_ALLOW_PRIVATE=true: feeds, webhooks and images may reach loopback and private addresses (tests and closed networks only)',
    ]);
    const images = await startLines({ DATABASE_URL: database.url, IMAGE_FETCH_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'info' });
    expect(images.filter((line) => line.includes('private addresses'))).toEqual([
      '40 IMAGE_FETCH_ALLOW_PRIVATE=true: images may be fetched from loopback and private addresses (tests and closed networks only)',
    ]);
    const closed = await startLines({ DATABASE_URL: database.url, LOG_LEVEL: 'info' });
    expect(closed.filter((line) => line.includes('private addresses'))).toEqual([]);
  });
});
