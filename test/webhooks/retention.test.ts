import { afterAll, beforeAll, expect, test } from 'vitest';
import { sweepMessages } from '../../src/store/webhooks.js';
import { deliverMessage } from '../../src/webhooks/deliver.js';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { plainPost, startReceiver } from '../support/webhook-receiver.js';

/** Messages and their attempts are kept 30 days (docs/api.md, Webhooks), then swept. */

let t: TestApp;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  // No delivery slots: the test makes each attempt itself, so every message has one before the sweep.
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const DAY = 86_400_000;

test('a message older than 30 days goes with its attempts; younger ones stay in the log', async () => {
  const g = await tenant(t);
  const api = client(t, g.key);
  const hook = (await api.post('/v1/webhooks', { url: `${receiver.url}/kept`, events: ['artwork.created'] })).body;
  for (const title of ['Old', 'Almost old', 'New']) expect((await api.post('/v1/artworks', { title, artist_name: 'Ana Lima' })).status).toBe(201);
  const messages = await t.handle.db.selectFrom('webhook_messages').select(['seq', 'id']).where('endpoint_id', '=', hook.id).orderBy('seq').execute();
  expect(messages).toHaveLength(3);
  for (const message of messages) await deliverMessage({ db: t.handle.db, publicBaseUrl: 'https://art.example', post: plainPost }, Number(message.seq));
  const [old, almost, fresh] = messages.map((m) => ({ seq: Number(m.seq), id: m.id }));
  const now = Date.now();
  const backdate = (seq: number, ms: number) => t.handle.db.updateTable('webhook_messages')
    .set({ created_at: new Date(now - ms).toISOString() }).where('seq', '=', seq).execute();
  await backdate(old!.seq, 30 * DAY + 60_000);
  await backdate(almost!.seq, 30 * DAY - 60_000);
  const attemptsOf = async (seq: number) => (await t.handle.db.selectFrom('webhook_attempts').select('id').where('message_seq', '=', seq).execute()).length;
  expect(await attemptsOf(old!.seq)).toBe(1);

  expect(await sweepMessages(t.handle.db, now)).toBe(1);
  const log = (await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages as { id: string; attempts: unknown[] }[];
  expect(log.map((m) => m.id)).toEqual([fresh!.id, almost!.id]);
  expect(log.every((m) => m.attempts.length === 1)).toBe(true);
  expect(await attemptsOf(old!.seq)).toBe(0);
  // A second sweep finds nothing more; a month later the rest goes too.
  expect(await sweepMessages(t.handle.db, now)).toBe(0);
  expect(await sweepMessages(t.handle.db, now + 31 * DAY)).toBe(2);
  expect((await api.get(`/v1/webhooks/${hook.id}/messages`)).body.messages).toEqual([]);
  expect(await attemptsOf(fresh!.seq) + await attemptsOf(almost!.seq)).toBe(0);
});
