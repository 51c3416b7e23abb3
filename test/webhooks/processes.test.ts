import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { migratedDatabase, type FreshDatabase } from '../helpers.js';
import { spawnServe, type ServeProcess } from '../support/serve.js';
import { startReceiver, type Received } from '../support/webhook-receiver.js';

/**
 * Deliveries in real server processes (docs/api.md, Webhooks): a process killed with SIGKILL in the
 * middle of delivering loses no message; another process takes the rest over.
 */

// Server processes start slowly on the shared machines tests run on.
vi.setConfig({ testTimeout: 240_000 });

let database: FreshDatabase;
let handle: DatabaseHandle;
const servers: ServeProcess[] = [];
// A short lease so that the killed process's claimed deliveries are taken over within seconds.
const ENV = { FETCH_ALLOW_PRIVATE: 'true', JOB_LEASE_S: '3' };

beforeAll(async () => {
  database = await migratedDatabase();
  // The test's own handle: a connection opened while the machine is loaded (CI runs test files in parallel) may take longer than the service's 750 ms.
  handle = connect(database.url, { connectTimeoutMs: 10_000 });
});

afterAll(async () => {
  for (const server of servers) server.child.kill('SIGKILL');
  await handle?.close();
  await database?.drop();
});

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = 180_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const call = async (base: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: await response.json() as any };
};

const headersOf = (got: Received) => ({
  'webhook-id': String(got.headers['webhook-id']),
  'webhook-timestamp': String(got.headers['webhook-timestamp']),
  'webhook-signature': String(got.headers['webhook-signature']),
});

test('kill -9 during deliveries loses none: every message arrives, a repeat only with the same webhook-id', async () => {
  const WRITES = 60;
  // Slow answers keep deliveries in flight (4 at once per endpoint) when the process is killed.
  const receiver = await startReceiver(() => ({ status: 200, delayMs: 250 }));
  try {
    const entity = await createEntity(handle.db, { type: 'gallery', name: 'Killed Deliveries', city: 'Berlin', country: 'DE' });
    const { key } = await createKey(handle.db, { entityId: entity.id, tier: 'partner', scopes: TIER_SCOPES.partner, expiresAt: null });
    const a = spawnServe({ DATABASE_URL: database.url, ...ENV });
    servers.push(a);
    const baseA = await a.url;
    const hook = await call(baseA, key, 'POST', '/v1/webhooks', { url: `${receiver.url}/in`, events: ['artwork.created'] });
    expect(hook.status).toBe(201);
    const items = Array.from({ length: WRITES }, (_, i) => ({ title: `Sent ${i}`, artist_name: 'Kill Nine' }));
    const batch = await call(baseA, key, 'POST', '/v1/artworks/batch', { items });
    expect(batch.status).toBe(200);

    await until('some deliveries made', () => receiver.received.length >= 8);
    a.child.kill('SIGKILL');
    await a.exited;
    const beforeKill = receiver.received.length;
    expect(beforeKill).toBeLessThan(WRITES);

    const b = spawnServe({ DATABASE_URL: database.url, ...ENV });
    servers.push(b);
    await b.url;
    const distinctIds = () => new Set(receiver.received.map((got) => got.headers['webhook-id'])).size;
    await until('every message delivered', () => distinctIds() === WRITES);

    // Every delivery verifies; a webhook-id seen twice carries the same body (the same message again).
    const verifier = new Webhook(hook.body.secret);
    const bodyOf = new Map<string, string>();
    const works = new Set<string>();
    for (const got of receiver.received) {
      const payload = verifier.verify(got.body, headersOf(got)) as { type: string; data: { record: { id: string } } };
      expect(payload.type).toBe('artwork.created');
      const id = String(got.headers['webhook-id']);
      if (bodyOf.has(id)) expect(got.body).toBe(bodyOf.get(id));
      bodyOf.set(id, got.body);
      works.add(String(payload.data.record.id));
    }
    // One message per write: each created work announced, none twice under different ids.
    expect(works.size).toBe(WRITES);
    const written = (batch.body.results as { id: unknown }[]).map((result) => String(result.id));
    expect([...works].sort()).toEqual(written.sort());
    // And the log agrees once the last outcome is recorded.
    await until('the log says delivered', async () => {
      const rows = (await sql<{ status: string }>`select status from webhook_messages where endpoint_id = ${hook.body.id}`.execute(handle.db)).rows;
      return rows.length === WRITES && rows.every((row) => row.status === 'delivered');
    }, 30_000);
    await b.stop();
  } finally {
    await receiver.close();
  }
});
