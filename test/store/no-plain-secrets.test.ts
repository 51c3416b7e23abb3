import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { databaseText, plainSecretsIn } from '../support/secrets-scan.js';

/**
 * No copy of a secret in plain text stays in the database (docs/operations.md, Secrets at rest): after a
 * run of the traffic that shows secrets — keys created and rolled, endpoints created and rolled with and
 * without an Idempotency-Key and replayed, console keys and endpoints — the SQLite file and its WAL, or
 * every PostgreSQL table read as text, hold no whole key and no whole webhook secret. A key's
 * 16-character prefix is public and may stay.
 */

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0', FEED_CONCURRENCY: '0' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t.close());

test('after keys, rolls, endpoints (idempotent and replayed) and console secrets, no whole key or secret is in the database', async () => {
  const g = await tenant(t);
  const shown: string[] = [g.key];
  const api = client(t, g.key);
  for (let i = 0; i < 3; i++) {
    const headers = { 'idempotency-key': `create-${i}` };
    const created = await api.post('/v1/webhooks', { url: `http://127.0.0.1:9/hook-${i}`, events: ['*'] }, headers);
    expect(created.status).toBe(201);
    shown.push(created.body.secret);
    expect((await api.post('/v1/webhooks', { url: `http://127.0.0.1:9/hook-${i}`, events: ['*'] }, headers)).status).toBe(201);
    const rolled = await api.post(`/v1/webhooks/${created.body.id}/roll-secret`, { expire_old_in: '24h' }, { 'idempotency-key': `roll-${i}` });
    expect(rolled.status).toBe(200);
    shown.push(rolled.body.secret);
    expect((await api.post(`/v1/webhooks/${created.body.id}/roll-secret`, { expire_old_in: '24h' }, { 'idempotency-key': `roll-${i}` })).status).toBe(200);
  }
  const plain = await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/plain', events: ['artwork.created'] });
  shown.push(plain.body.secret);

  const owner = await signedIn(t, base, g.entityId, 'owner');
  const made = await owner.post('/console/keys', { tier: 'subscriber', scopes: 'artworks:read' });
  expect(made.status).toBe(200);
  const consoleKey = /<p class="secret">(ak_live_[A-Za-z0-9]{32})<\/p>/.exec(made.text)![1]!;
  shown.push(consoleKey);
  const rolledKey = await owner.post(`/console/keys/${consoleKey.slice(0, 16)}/roll`, { expire_old_in: '1h' });
  shown.push(/<p class="secret">(ak_live_[A-Za-z0-9]{32})<\/p>/.exec(rolledKey.text)![1]!);
  const endpoint = await owner.post('/console/webhooks', { url: 'http://127.0.0.1:9/console', events: '*' });
  shown.push(/<p class="secret">(whsec_[^<]+)<\/p>/.exec(endpoint.text)![1]!);
  // The new key at work: its requests leave its prefix (last used), never itself.
  expect((await client(t, consoleKey).get('/v1/artworks')).status).toBe(200);

  const text = await databaseText(t.config.databaseUrl);
  expect(shown.every((s) => s.length >= 40)).toBe(true);
  for (const secret of shown) expect(text.includes(secret), `${secret.slice(0, 16)}… is in the database`).toBe(false);
  expect(await plainSecretsIn(t)).toEqual([]);
  // The scan can see what it looks for: the public prefix is there.
  expect(text).toContain(consoleKey.slice(0, 16));
});
