import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { loggableUrl } from '../../src/http/runtime/logging.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { DIALECT, freshDatabase, type FreshDatabase } from '../helpers.js';
import { spawnServe } from '../support/serve.js';

/** The real `serve` with stdout piped (not a terminal), everything it writes there, until it exits. */
async function serveAndCollect(env: NodeJS.ProcessEnv, requests: (url: string) => Promise<void>): Promise<string[]> {
  const server = spawnServe(env);
  let out = '';
  server.child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  try {
    await requests(await server.url);
  } finally {
    expect(await server.stop()).toBe(0);
  }
  return out.split('\n').filter((line) => line !== '');
}

// What is logged does not depend on the database; one pass is enough.
describe.skipIf(DIALECT !== 'sqlite')('logs on stdout', () => {
  let database: FreshDatabase;
  let key: string;
  let entityId: number;
  beforeAll(async () => {
    database = await freshDatabase();
    const handle = connect(database.url);
    await migrateToLatest(handle);
    const entity = await createEntity(handle.db, { type: 'gallery', name: 'Logged Gallery' });
    ({ key } = await createKey(handle.db, { entityId: entity.id, tier: 'subscriber', scopes: TIER_SCOPES.subscriber, expiresAt: null }));
    entityId = entity.id;
    await handle.close();
  });
  afterAll(() => database.drop());

  test('when stdout is a pipe every line is JSON: the listening URL, then exactly one line per request, without the key', async () => {
    const lines = await serveAndCollect({ DATABASE_URL: database.url, LOG_LEVEL: 'info' }, async (url) => {
      expect((await fetch(`${url}/v1/artworks?limit=5&api_key=leaked-secret`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
      expect((await fetch(`${url}/v1/artworks`)).status).toBe(401);
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
      expect((await fetch(`${url}/no/such/page`)).status).toBe(404);
    });
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records[0]).toMatchObject({ level: 30, msg: expect.stringMatching(/^Art Catalog Service listening on http:\/\/127\.0\.0\.1:\d+$/) });

    // A line is written once its response has been sent: the client can read an answer and ask again before
    // the line of that answer is out, so the lines are compared in the order of the requests they name.
    const sent = [
      ['GET', '/v1/artworks?limit=5&api_key=redacted', 200],
      ['GET', '/v1/artworks', 401],
      ['GET', '/healthz', 200],
      ['GET', '/no/such/page', 404],
    ];
    const position = (r: Record<string, unknown>) => sent.findIndex(([, url]) => url === r.url);
    const requests = records.filter((r) => r.msg === 'request completed').sort((a, b) => position(a) - position(b));
    expect(requests.map((r) => [r.method, r.url, r.status])).toEqual(sent);
    for (const r of requests) {
      expect(r.reqId).toEqual(expect.any(String));
      expect(r.duration_ms).toEqual(expect.any(Number));
    }
    expect(new Set(requests.map((r) => r.reqId)).size).toBe(4);
    expect(requests[0]!.entity_id).toBe(entityId);
    expect(requests.slice(1).every((r) => !('entity_id' in r))).toBe(true);
    expect(requests.every((r) => r.client === '127.0.0.1')).toBe(true);
    // Besides the listening line and the two shutdown notes, nothing else: no incoming/completed pairs.
    expect(records.filter((r) => r.msg !== 'request completed').map((r) => String(r.msg).split(':')[0])).toEqual([
      expect.stringMatching(/^Art Catalog Service listening on/), 'shutting down', 'stopped',
    ]);
    const all = lines.join('\n');
    expect(all).not.toContain(key.slice(8));
    expect(all).not.toContain('leaked-secret');
    expect(all.toLowerCase()).not.toContain('bearer');
  });

  test('at LOG_LEVEL=warn (or silent) the listening URL is still printed, as a JSON line, and requests are not', async () => {
    for (const level of ['warn', 'silent']) {
      const lines = await serveAndCollect({ DATABASE_URL: database.url, LOG_LEVEL: level }, async (url) => {
        await fetch(`${url}/healthz`);
      });
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ msg: expect.stringMatching(/listening on http:\/\/127\.0\.0\.1:\d+$/) });
    }
  });

  test('LOG_FORMAT=pretty writes human-readable lines even to a pipe', async () => {
    const lines = await serveAndCollect({ DATABASE_URL: database.url, LOG_LEVEL: 'info', LOG_FORMAT: 'pretty' }, async (url) => {
      await fetch(`${url}/healthz`);
    });
    expect(lines.some((line) => /INFO.*listening on http:\/\/127\.0\.0\.1:\d+/.test(line))).toBe(true);
    expect(lines.some((line) => /INFO.*request completed: GET \/healthz → 200 in [\d.]+ ms/.test(line))).toBe(true);
    expect(() => JSON.parse(lines[0]!)).toThrow();
  });

  test('LOG_FORMAT with another value stops serve with one line naming the choices', async () => {
    const server = spawnServe({ DATABASE_URL: database.url, LOG_FORMAT: 'xml' });
    server.url.catch(() => { /* it never listens */ });
    let err = '';
    server.child.stderr!.on('data', (chunk: Buffer) => { err += chunk.toString(); });
    expect(await server.exited).not.toBe(0);
    expect(err.trim()).toBe('art-catalog: LOG_FORMAT must be one of json, pretty (got "xml")');
  });
});

test('a logged URL keeps its query but not the values of parameters named like secrets', () => {
  expect(loggableUrl('/v1/artworks')).toBe('/v1/artworks');
  expect(loggableUrl('/v1/artworks?after=10&limit=5')).toBe('/v1/artworks?after=10&limit=5');
  expect(loggableUrl('/x?token=a&key=b&API_KEY=c&password=d&page=2')).toBe('/x?token=redacted&key=redacted&API_KEY=redacted&password=redacted&page=2');
});
