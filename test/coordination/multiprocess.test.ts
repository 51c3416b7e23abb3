import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TIER_SCOPES, type Tier } from '../../src/domain/keys.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { DIALECT, freshDatabase, type FreshDatabase } from '../helpers.js';
import { spawnServe } from '../support/serve.js';

const REDIS_URL = process.env.REDIS_URL;

async function serve(env: NodeJS.ProcessEnv) {
  const server = spawnServe({ ...env, LOG_LEVEL: 'warn' });
  return { ...server, url: await server.url };
}

// The scale set-up only: several processes need PostgreSQL and Redis (the PostgreSQL pass has both).
describe.skipIf(DIALECT !== 'postgres' || !REDIS_URL)('two server processes on one PostgreSQL and one Redis', () => {
  let database: FreshDatabase;
  let handle: DatabaseHandle;
  let servers: Awaited<ReturnType<typeof serve>>[];
  let entityId: number;
  let entitySlug: string;

  beforeAll(async () => {
    database = await freshDatabase();
    // The test's own handle: a connection opened while the machine is loaded (CI runs test files in parallel) may take longer than the service's 750 ms.
    handle = connect(database.url, { connectTimeoutMs: 10_000 });
    await migrateToLatest(handle);
    const entity = await createEntity(handle.db, { type: 'gallery', name: 'Two Process Gallery' });
    entityId = entity.id;
    entitySlug = entity.slug;
    const env = { DATABASE_URL: database.url, REDIS_URL, REDIS_KEY_PREFIX: `mp:${randomUUID()}:`, RATE_LIMIT_SUBSCRIBER: '100000' };
    servers = await Promise.all([serve(env), serve(env)]);
  });

  afterAll(async () => {
    await Promise.all((servers ?? []).map((server) => server.stop()));
    await handle?.close();
    await database?.drop();
  });

  const keyOf = async (tier: Tier) => (await createKey(handle.db, { entityId, tier, scopes: TIER_SCOPES[tier], expiresAt: null })).key;
  /** Request i goes to process i mod 2. */
  const call = (i: number, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${servers[i % 2]!.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });

  test('a free key\'s 35 concurrent requests spread over both processes: exactly 30 succeed', async () => {
    const key = await keyOf('free');
    const responses = await Promise.all(Array.from({ length: 35 }, (_, i) => call(i, key, 'GET', '/v1/artworks')));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
    const remaining = responses.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 30 }, (_, i) => i));
  });

  test('100 concurrent posts of one artwork over both processes make one artwork, one create and 99 updates', async () => {
    const key = await keyOf('subscriber');
    const responses = await Promise.all(Array.from({ length: 100 }, (_, i) => call(i, key, 'POST', '/v1/artworks', {
      title: i % 2 ? 'Abstract Painting' : 'abstract painting!', artist_name: 'Gerhard Richter', creation_year: 1990, price: 1000 + i,
    })));
    expect(responses.map((r) => r.status)).toEqual(Array(100).fill(201));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ id: number; created: boolean }>));
    expect(bodies.filter((b) => b.created)).toHaveLength(1);
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);

    const artworks = await handle.db.selectFrom('artworks').select('id').where('entity_id', '=', entityId).execute();
    expect(artworks).toHaveLength(1);
    const entries = await handle.db.selectFrom('changelog').select('action')
      .where('owner_id', '=', entityId).where('entity_type', '=', 'artwork').execute();
    expect(entries.filter((e) => e.action === 'create')).toHaveLength(1);
    expect(entries.filter((e) => e.action === 'update')).toHaveLength(99);
    const artists = await handle.db.selectFrom('changelog').select('id')
      .where('owner_id', '=', entityId).where('entity_type', '=', 'artist').execute();
    expect(artists).toHaveLength(1);
  });

  test('50 concurrent posts of one event title over both processes make one event', async () => {
    const key = await keyOf('subscriber');
    const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => call(i, key, 'POST', '/v1/events', { title: 'Opening Night', start_date: '2030-05-01' })));
    expect(responses.map((r) => r.status)).toEqual(Array(50).fill(201));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ slug: string; created: boolean }>));
    expect(bodies.filter((b) => b.created)).toHaveLength(1);
    expect(new Set(bodies.map((b) => b.slug))).toEqual(new Set([`${entitySlug}-opening-night`]));
    const events = await handle.db.selectFrom('events').select('id').where('entity_id', '=', entityId).execute();
    expect(events).toHaveLength(1);
  });

  test('concurrent posts of three editions (external_id) over both processes make exactly three artworks', async () => {
    const key = await keyOf('subscriber');
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => call(i, key, 'POST', '/v1/artworks', {
      title: 'Edition Print', artist_name: 'Kiki Smith', creation_year: 2004, external_id: `${(i % 3) + 1}/3`, price: i,
    })));
    expect(responses.map((r) => r.status)).toEqual(Array(60).fill(201));
    const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ id: number; created: boolean }>));
    expect(bodies.filter((b) => b.created)).toHaveLength(3);
    const editions = await handle.db.selectFrom('artworks').select('external_id')
      .where('entity_id', '=', entityId).where('title', '=', 'Edition Print').orderBy('external_id').execute();
    expect(editions.map((e) => e.external_id)).toEqual(['1/3', '2/3', '3/3']);
  });

  test('an idempotent request retried on the other process replays the first answer', async () => {
    const key = await keyOf('subscriber');
    const body = { title: 'Retried Elsewhere', creation_year: 2001 };
    const first = await call(0, key, 'POST', '/v1/artworks', body, { 'idempotency-key': 'cross-process-1' });
    const retry = await call(1, key, 'POST', '/v1/artworks', body, { 'idempotency-key': 'cross-process-1' });
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toEqual(await first.json());
    const reused = await call(1, key, 'POST', '/v1/artworks', { title: 'Another' }, { 'idempotency-key': 'cross-process-1' });
    expect(reused.status).toBe(422);
  });

  test('the same idempotent request sent to both processes at once is written once', async () => {
    const key = await keyOf('subscriber');
    const body = { title: 'Raced Across Processes', creation_year: 2002 };
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => call(i, key, 'POST', '/v1/artworks', body, { 'idempotency-key': 'race-1' })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const written = await handle.db.selectFrom('changelog').select('id').where('owner_id', '=', entityId)
      .where('entity_type', '=', 'artwork').where('action', 'in', ['create', 'update'])
      .where('field_changes', 'like', '%Raced Across Processes%').execute();
    expect(written).toHaveLength(1);
  });
});
