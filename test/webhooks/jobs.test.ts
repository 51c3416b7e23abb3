import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { KeptConnections, publicAddress } from '../../src/fetch/index.js';
import { guardedPost } from '../../src/webhooks/post.js';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { startReceiver, type Received } from '../support/webhook-receiver.js';

/** Polls `check` until it is true or `ms` have passed. */
async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  for (const started = Date.now(); !(await check());) {
    if (Date.now() - started > ms) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const headersOf = (got: Received) => ({
  'webhook-id': String(got.headers['webhook-id']),
  'webhook-timestamp': String(got.headers['webhook-timestamp']),
  'webhook-signature': String(got.headers['webhook-signature']),
});

describe('deliveries run as jobs of the one job queue', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true' });
  });
  afterAll(async () => t.close());

  test('a write\'s message arrives by itself, signed, and the log says delivered', async () => {
    const receiver = await startReceiver();
    try {
      const g = await tenant(t);
      const api = client(t, g.key);
      const hook = (await api.post('/v1/webhooks', { url: `${receiver.url}/in`, events: ['artwork.created'] })).body;
      const written = Date.now();
      const created = await api.post('/v1/artworks', { title: 'Sent by itself', artist_name: 'Ana Lima' });
      await until(() => receiver.received.length === 1);
      expect(receiver.received[0]!.at - written).toBeLessThan(3_000);
      const payload = new Webhook(hook.secret).verify(receiver.received[0]!.body, headersOf(receiver.received[0]!)) as any;
      expect(payload.data.record.id).toBe(created.body.id);
      await until(async () => (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages[0].status === 'delivered');
    } finally {
      await receiver.close();
    }
  });

  test('a receiver\'s redirect is an attempt with its status_code (302) and "redirects are not followed"; it is not followed', async () => {
    const receiver = await startReceiver((got) => (got.path === '/moved' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 200 }));
    try {
      const api = client(t, (await tenant(t)).key);
      const hook = (await api.post('/v1/webhooks', { url: `${receiver.url}/moved`, events: ['webhook.test'] })).body;
      expect((await api.post(`/v1/webhooks/${hook.id}/test`, {})).status).toBe(202);
      const attempts = async () => (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages[0].attempts;
      await until(async () => (await attempts()).length === 1);
      expect((await attempts())[0]).toMatchObject({ status_code: 302, error: 'redirects are not followed' });
      expect((await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages[0].status).toBe('pending');
      expect(receiver.received.map((r) => r.path)).toEqual(['/moved']);
    } finally {
      await receiver.close();
    }
  });

  test('at most 4 requests are in flight at once to one endpoint', async () => {
    let inFlight = 0;
    let most = 0;
    const receiver = await startReceiver(() => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => { inFlight -= 1; }, 400);
      return { status: 200, delayMs: 400 };
    });
    try {
      const g = await tenant(t);
      const api = client(t, g.key);
      await api.post('/v1/webhooks', { url: `${receiver.url}/slow`, events: ['artwork.created'] });
      const items = Array.from({ length: 12 }, (_, i) => ({ title: `Piece ${i}`, artist_name: 'Cap Tester' }));
      await api.post('/v1/artworks/batch', { items });
      await until(() => receiver.received.length === 12, 20_000);
      expect(most).toBeLessThanOrEqual(4);
      expect(most).toBeGreaterThanOrEqual(2);
    } finally {
      await receiver.close();
    }
  });

  test('a receiver that never answers does not delay another entity\'s messages', async () => {
    const dead = await startReceiver(() => 'never');
    const alive = await startReceiver();
    try {
      const a = await tenant(t);
      const b = await tenant(t);
      await client(t, a.key).post('/v1/webhooks', { url: `${dead.url}/dead`, events: ['*'] });
      await client(t, b.key).post('/v1/webhooks', { url: `${alive.url}/alive`, events: ['*'] });
      await client(t, a.key).post('/v1/artworks/batch', { items: Array.from({ length: 20 }, (_, i) => ({ title: `Stuck ${i}`, artist_name: 'Dead End' })) });
      await until(() => dead.received.length >= 4);
      const written = Date.now();
      await client(t, b.key).post('/v1/artworks', { title: 'Not held up', artist_name: 'Ana Lima' });
      await until(() => alive.received.length === 1, 10_000);
      // Well within one attempt's time (10 s): B's message did not wait for A's.
      expect(alive.received[0]!.at - written).toBeLessThan(3_000);
      // A's endpoint never had more than 4 requests at once.
      expect(dead.received.length).toBeLessThanOrEqual(4);
    } finally {
      await dead.close();
      await alive.close();
    }
  });
});

const kept = (allowAddress: (address: string) => boolean) => new KeptConnections(allowAddress, { perOrigin: 4, idleMs: 4_000, origins: 8 });

describe('addresses are checked as the fetcher\'s', () => {
  test('without FETCH_ALLOW_PRIVATE a delivery to a private address is refused before connecting', async () => {
    const receiver = await startReceiver();
    const strict = await startApp();
    try {
      const g = await tenant(strict);
      const api = client(strict, g.key);
      const hook = (await api.post('/v1/webhooks', { url: 'https://example.org/hooks', events: ['*'] })).body;
      // As if the endpoint's name came to resolve to a private address.
      const port = new URL(receiver.url).port;
      await strict.handle.db.updateTable('webhook_endpoints').set({ url: `http://localhost:${port}/h` }).where('id', '=', hook.id).execute();
      await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
      await until(async () => (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages[0].attempts.length > 0);
      const [message] = (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages;
      expect(message.attempts[0]).toMatchObject({ status_code: null, error: 'address not allowed' });
      expect(message.status).toBe('pending');
      expect(receiver.received).toHaveLength(0);
      const literal = guardedPost(kept(publicAddress))({ url: `${receiver.url}/x`, headers: {}, body: '{}', timeoutMs: 2000, maxBytes: 1024 });
      await expect(literal).rejects.toThrow('address not allowed');
      expect(receiver.received).toHaveLength(0);
    } finally {
      await strict.close();
      await receiver.close();
    }
  });

  test('a redirect is a failure and is not followed; the answer is read to the byte limit', async () => {
    const receiver = await startReceiver((got) => (got.path === '/go' ? { status: 307, headers: { location: '/there' } } : { status: 200, body: 'y'.repeat(100_000) }));
    try {
      const post = guardedPost(kept(() => true));
      expect((await post({ url: `${receiver.url}/go`, headers: {}, body: '{}', timeoutMs: 2000, maxBytes: 65_536 })).status).toBe(307);
      expect(receiver.received.map((r) => r.path)).toEqual(['/go']);
      const big = await post({ url: `${receiver.url}/big`, headers: {}, body: '{}', timeoutMs: 2000, maxBytes: 65_536 });
      expect(big.body).toHaveLength(65_536);
      const never = await startReceiver(() => 'never');
      try {
        const started = Date.now();
        await expect(post({ url: `${never.url}/`, headers: {}, body: '{}', timeoutMs: 500, maxBytes: 1024 })).rejects.toThrow('timed out');
        expect(Date.now() - started).toBeLessThan(2_000);
      } finally {
        await never.close();
      }
    } finally {
      await receiver.close();
    }
  });
});
