import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { transaction } from '../../src/db/run.js';
import { recordFeedRunMessages, recordAttempt, recordImageMessages } from '../../src/store/webhooks.js';
import { deliverMessage, type DeliveryContext } from '../../src/webhooks/deliver.js';
import { client, DIALECT, startApp, tenant, type TestApp } from '../helpers.js';
import { roundTrips } from '../support/round-trips.js';
import { plainPost, startReceiver, type Answer, type Received } from '../support/webhook-receiver.js';

let t: TestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let answers: Answer[] = [];
beforeAll(async () => {
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
  receiver = await startReceiver((_got, index) => answers[index] ?? { status: 200, body: 'ok' });
});
afterEach(() => {
  receiver.received.length = 0;
  answers = [];
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const context = (now?: () => number): DeliveryContext => ({ db: t.handle.db, publicBaseUrl: 'https://art.example', post: plainPost, ...(now ? { now } : {}) });

/** The pending messages of an endpoint, oldest first. */
const messagesOf = (endpointId: number) =>
  t.handle.db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpointId).orderBy('seq').execute();

async function setUp(events: string[] = ['*']) {
  const g = await tenant(t);
  const api = client(t, g.key);
  const hook = (await api.post('/v1/webhooks', { url: `${receiver.url}/hook`, events })).body;
  return { g, api, hook };
}

const headersOf = (got: Received) => ({
  'webhook-id': String(got.headers['webhook-id']),
  'webhook-timestamp': String(got.headers['webhook-timestamp']),
  'webhook-signature': String(got.headers['webhook-signature']),
});

describe('a delivered message', () => {
  test('is a signed POST the standardwebhooks library verifies, with the change and the record as GET shows it', async () => {
    const { api, hook } = await setUp();
    const created = await api.post('/v1/artworks', { title: 'Blue Hour', artist_name: 'Ana Lima', price: 900, currency: 'EUR' });
    const [message] = await messagesOf(hook.id);
    const settled = await deliverMessage(context(), Number(message!.seq));
    expect(settled).toMatchObject({ status: 'delivered', applied: true });
    const [got] = receiver.received;
    expect(got!.path).toBe('/hook');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['webhook-id']).toBe(message!.id);
    expect(Math.abs(Number(got!.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(5);
    expect(String(got!.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    const payload = new Webhook(hook.secret).verify(got!.body, headersOf(got!)) as any;
    const change = (await api.get('/v1/changelog')).body.changes.find((c: { entity_type: string }) => c.entity_type === 'artwork');
    expect(payload).toEqual({ type: 'artwork.created', timestamp: message!.created_at, data: { change, record: (await api.get(`/v1/artworks/${created.body.id}`)).body } });
    // The body exactly as signed: a changed byte or a stale timestamp fails.
    expect(() => new Webhook(hook.secret).verify(got!.body.replace('Blue Hour', 'Blue Hours'), headersOf(got!))).toThrow();
    expect(() => new Webhook(generateOther()).verify(got!.body, headersOf(got!))).toThrow();
  });

  test.skipIf(DIALECT !== 'postgres')('on PostgreSQL costs 6 round trips: its message and endpoint in one read, the change, the record, and its outcome with its body kept in one statement between BEGIN and COMMIT', async () => {
    const { api, hook } = await setUp();
    await api.post('/v1/artworks', { title: 'Counted', artist_name: 'Ana Lima' });
    const [message] = await messagesOf(hook.id);
    const { result, sent } = await roundTrips(t.config.databaseUrl, (db) => deliverMessage({ ...context(), db }, Number(message!.seq)));
    expect(result).toMatchObject({ status: 'delivered', applied: true });
    expect(receiver.received).toHaveLength(1);
    expect(sent).toHaveLength(6);
    // The body sent is kept (a Retry sends it again), by the statement that records the outcome.
    expect((await messagesOf(hook.id))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(JSON.parse((await messagesOf(hook.id))[0]!.data!)).toEqual(JSON.parse(receiver.received[0]!.body).data);
  });

  test('a retry after a failed first attempt sends the first attempt\'s body, though the record changed since', async () => {
    const { api, hook } = await setUp(['profile.updated']);
    answers = [{ status: 500, body: 'down' }, { status: 200 }];
    await api.put('/v1/profile', { description: 'Since 1972.' });
    const [message] = await messagesOf(hook.id);
    expect((await deliverMessage(context(), Number(message!.seq)))!.status).toBe('pending');
    expect(JSON.parse((await messagesOf(hook.id))[0]!.data!)).toEqual(JSON.parse(receiver.received[0]!.body).data);
    await api.put('/v1/profile', { description: 'Since 1973.' });
    expect((await deliverMessage(context(), Number(message!.seq)))!.status).toBe('delivered');
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.body).toBe(receiver.received[0]!.body);
    expect(JSON.parse(receiver.received[1]!.body).data.record.description).toBe('Since 1972.');
  });

  test('an artwork with additional views sends each view\'s image as GET shows it', async () => {
    const { api, hook } = await setUp(['artwork.created']);
    const created = await api.post('/v1/artworks', {
      title: 'Two Sides', artist_name: 'Ana Lima', image_url: 'https://images.example/front.jpg',
      additional_images: [{ url: 'https://images.example/back.jpg', caption: 'Back' }, { url: 'https://images.example/detail.jpg' }],
    });
    expect(created.status).toBe(201);
    const [message] = await messagesOf(hook.id);
    await deliverMessage({ ...context(), publicBaseUrl: t.config.publicBaseUrl }, Number(message!.seq));
    const record = JSON.parse(receiver.received[0]!.body).data.record;
    const shown = (await api.get(`/v1/artworks/${created.body.id}`)).body;
    expect(shown.additional_images.map((view: { image: unknown }) => view.image)).toEqual([expect.objectContaining({ status: 'pending' }), expect.objectContaining({ status: 'pending' })]);
    expect(record).toEqual(shown);
  });

  test('a timestamp older than the library\'s tolerance fails verification', async () => {
    const { api, hook } = await setUp();
    await api.post('/v1/events', { title: 'Opening', start_date: '2030-01-10', event_type: 'opening' });
    const [message] = await messagesOf(hook.id);
    await deliverMessage(context(() => Date.now() - 10 * 60_000), Number(message!.seq));
    const [got] = receiver.received;
    expect(() => new Webhook(hook.secret).verify(got!.body, headersOf(got!))).toThrow(/timestamp/i);
  });

  test('a receiver answering 500, 500, then 200 gets three attempts with the same webhook-id, all in the log', async () => {
    const { api, hook } = await setUp(['profile.updated']);
    answers = [{ status: 500, body: 'down' }, { status: 500, body: 'x'.repeat(5000) }, { status: 204 }];
    await api.put('/v1/profile', { description: 'Since 1972.' });
    const [message] = await messagesOf(hook.id);
    const first = await deliverMessage(context(), Number(message!.seq));
    expect(first!.status).toBe('pending');
    expect(Date.parse(first!.nextAttemptAt!) - Date.now()).toBeGreaterThan(3_000);
    expect(Date.parse(first!.nextAttemptAt!) - Date.now()).toBeLessThan(6_000);
    const second = await deliverMessage(context(), Number(message!.seq));
    expect(Date.parse(second!.nextAttemptAt!) - Date.now()).toBeGreaterThan(290_000);
    expect((await deliverMessage(context(), Number(message!.seq)))!.status).toBe('delivered');
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([message!.id, message!.id, message!.id]);
    // Every attempt sends the same body.
    expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
    const log = (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ id: message!.id, type: 'profile.updated', status: 'delivered' });
    expect(log[0].attempts.map((a: { status_code: number }) => a.status_code)).toEqual([500, 500, 204]);
    expect(log[0].attempts[0].response).toBe('down');
    expect(log[0].attempts[1].response).toHaveLength(1024);
    expect(log[0].attempts[0].error).toBe('HTTP 500');
    // Already delivered: nothing more is sent.
    expect(await deliverMessage(context(), Number(message!.seq))).toBeUndefined();
    expect(receiver.received).toHaveLength(3);
  });

  test('a redirect is a failure and is not followed', async () => {
    const { api, hook } = await setUp();
    answers = [{ status: 302, headers: { location: `${receiver.url}/elsewhere` } }];
    await api.post('/v1/webhooks/' + hook.id + '/test', undefined);
    const [message] = await messagesOf(hook.id);
    const settled = await deliverMessage(context(), Number(message!.seq));
    expect(settled!.status).toBe('pending');
    expect(receiver.received.map((r) => r.path)).toEqual(['/hook']);
    const attempt = (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages[0].attempts[0];
    expect(attempt).toMatchObject({ status_code: 302, error: 'redirects are not followed' });
  });

  test('after the last of 8 attempts the message is failed; Retry makes it pending again', async () => {
    const { api, hook } = await setUp();
    answers = Array.from({ length: 8 }, () => ({ status: 503 }));
    await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
    const [message] = await messagesOf(hook.id);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      const settled = await deliverMessage(context(), Number(message!.seq));
      if (settled!.nextAttemptAt) delays.push(Date.parse(settled!.nextAttemptAt) - Date.now());
      else expect(settled!.status).toBe('failed');
    }
    expect(delays.map((ms) => Math.round(ms / 60_000))).toEqual([0, 5, 30, 120, 300, 600, 600]);
    expect((await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages[0].status).toBe('failed');
    const retried = await api.post(`/v1/webhooks/${hook.id}/messages/${message!.id}/retry`, undefined);
    expect(retried.status).toBe(202);
    expect(retried.body.status).toBe('pending');
    expect((await deliverMessage(context(), Number(message!.seq)))!.status).toBe('delivered');
    expect(receiver.received.every((r) => r.headers['webhook-id'] === message!.id)).toBe(true);
  });

  test('a rolled secret signs twice until the old one expires', async () => {
    const { api, hook } = await setUp();
    const rolled = (await api.post(`/v1/webhooks/${hook.id}/roll-secret`, { expire_old_in: '1h' })).body;
    await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
    await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
    const [first, second] = await messagesOf(hook.id);
    await deliverMessage(context(), Number(first!.seq));
    const both = receiver.received[0]!;
    expect(String(both.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(hook.secret).verify(both.body, headersOf(both))).toEqual({ type: 'webhook.test', timestamp: first!.created_at, data: {} });
    expect(new Webhook(rolled.secret).verify(both.body, headersOf(both))).toEqual({ type: 'webhook.test', timestamp: first!.created_at, data: {} });
    // Two hours later the old secret has expired: one signature, by the new secret.
    const later = Date.now() + 2 * 3_600_000;
    await deliverMessage(context(() => later), Number(second!.seq));
    const one = receiver.received[1]!;
    expect(String(one.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(one.headers['webhook-signature']).toBe(new Webhook(rolled.secret).sign(second!.id, new Date(later), one.body));
  });

  test('image and feed types carry their own data', async () => {
    const { g, api, hook } = await setUp(['image.failed', 'feed.run.failed']);
    const art = await api.post('/v1/artworks', { title: 'Pictured', artist_name: 'Ana Lima', image_url: 'https://images.example/a.jpg' });
    await transaction(t.handle.db, () => recordImageMessages('https://images.example/a.jpg', 'failed', new Date().toISOString()));
    await transaction(t.handle.db, () => recordImageMessages('https://images.example/a.jpg', 'ready', new Date().toISOString()));
    const run = { id: 4, status: 'needs_attention', started_at: '2030-01-01T00:00:00.000Z' };
    await transaction(t.handle.db, () => recordFeedRunMessages(g.entityId, 3, run, 'feed.run.failed', new Date().toISOString()));
    await transaction(t.handle.db, () => recordFeedRunMessages(g.entityId, 3, run, 'feed.run.completed', new Date().toISOString()));
    const messages = await messagesOf(hook.id);
    expect(messages.map((m) => m.type)).toEqual(['image.failed', 'feed.run.failed']);
    for (const message of messages) await deliverMessage(context(), Number(message.seq));
    const [image, feed] = receiver.received.map((r) => new Webhook(hook.secret).verify(r.body, headersOf(r)) as any);
    expect(image.data).toEqual({ kind: 'artwork', id: art.body.id, image: (await api.get(`/v1/artworks/${art.body.id}`)).body.image });
    expect(feed.data).toEqual({ feed_id: 3, run });
  });

  test('a message to a deleted or disabled endpoint fails without a request', async () => {
    const { api, hook } = await setUp();
    await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
    await api.put(`/v1/webhooks/${hook.id}`, { enabled: false });
    const [message] = await messagesOf(hook.id);
    expect((await deliverMessage(context(), Number(message!.seq)))!.status).toBe('failed');
    expect(receiver.received).toHaveLength(0);
  });
});

describe('an endpoint failing for 5 days', () => {
  test('is disabled with the reason; a success before that resets the count', async () => {
    const { api, hook } = await setUp();
    await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
    const [message] = await messagesOf(hook.id);
    const day = 86_400_000;
    const start = Date.now();
    const fail = (at: number, attempts: number) => recordAttempt(t.handle.db, { seq: message!.seq, endpoint_id: hook.id, attempts },
      { at: new Date(at).toISOString(), statusCode: 500, durationMs: 3, response: null, error: 'HTTP 500', ok: false });
    expect((await fail(start, 0)).disabled).toBe(false);
    expect((await fail(start + 4 * day, 1)).disabled).toBe(false);
    expect((await api.get(`/v1/webhooks/${hook.id}`)).body.enabled).toBe(true);
    expect((await fail(start + 5 * day, 2)).disabled).toBe(true);
    const disabled = (await api.get(`/v1/webhooks/${hook.id}`)).body;
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'every message failed for 5 days (last: HTTP 500)' });
    // Enabled again by the entity: the streak starts over.
    expect((await api.put(`/v1/webhooks/${hook.id}`, { enabled: true })).body).toMatchObject({ enabled: true, disabled_reason: null });
  });
});

function generateOther(): string {
  return `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
}
