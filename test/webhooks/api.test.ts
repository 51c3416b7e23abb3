import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { transaction } from '../../src/db/run.js';
import { unseal } from '../../src/secrets/seal.js';
import { postArtworkWork } from '../../src/store/artworks.js';
import { client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';
import { plainSecretsIn } from '../support/secrets-scan.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
});
afterAll(async () => {
  await t.close();
});

const RECEIVER = 'http://127.0.0.1:9/hooks';

/** The messages recorded for an endpoint, oldest first, as the database holds them. */
async function recorded(endpointId: number) {
  return t.handle.db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpointId).orderBy('seq').execute();
}

describe('endpoints', () => {
  test('an endpoint is created with a whsec_ secret shown once, and never listed or read again', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const created = await api.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.created'], description: 'ERP' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(Number), url: RECEIVER, events: ['artwork.created'], description: 'ERP', enabled: true,
      disabled_reason: null, created_at: expect.any(String), secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);
    const listed = await api.get('/v1/webhooks');
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks).toEqual([{ ...created.body, secret: undefined }].map(({ secret: _s, ...rest }) => rest));
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
    const one = await api.get(`/v1/webhooks/${created.body.id}`);
    expect(one.body).not.toHaveProperty('secret');
    expect(one.body.url).toBe(RECEIVER);
  });

  test('PUT changes only the fields sent; DELETE removes; another entity\'s endpoint is not found', async () => {
    const g = await tenant(t);
    const other = await tenant(t);
    const api = client(t, g.key);
    const { body: hook } = await api.post('/v1/webhooks', { url: RECEIVER, events: ['*'] });
    const changed = await api.put(`/v1/webhooks/${hook.id}`, { events: ['event.deleted', 'event.created'], enabled: false });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ url: RECEIVER, events: ['event.deleted', 'event.created'], enabled: false, disabled_reason: 'disabled by the entity' });
    const again = await api.put(`/v1/webhooks/${hook.id}`, { enabled: true });
    expect(again.body).toMatchObject({ enabled: true, disabled_reason: null });
    expect((await client(t, other.key).get(`/v1/webhooks/${hook.id}`)).status).toBe(404);
    expect((await client(t, other.key).delete(`/v1/webhooks/${hook.id}`)).status).toBe(404);
    expect((await api.delete(`/v1/webhooks/${hook.id}`)).body).toEqual({ deleted: true, id: hook.id });
    expect((await api.get(`/v1/webhooks/${hook.id}`)).status).toBe(404);
  });

  test('an entity may have at most 10 endpoints', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    for (let i = 0; i < 10; i++) expect((await api.post('/v1/webhooks', { url: `${RECEIVER}/${i}`, events: ['*'] })).status).toBe(201);
    const eleventh = await api.post('/v1/webhooks', { url: RECEIVER, events: ['*'] });
    expect(eleventh.status).toBe(400);
    expect(eleventh.body.message).toMatch(/at most 10/);
  });

  test('bad input gets 400: unknown type, no events, not a URL, unknown field', async () => {
    const api = client(t, (await tenant(t)).key);
    for (const body of [
      { url: RECEIVER, events: ['artwork.sold'] }, { url: RECEIVER, events: [] }, { url: 'not a url', events: ['*'] },
      { url: RECEIVER, events: ['*'], secret: 'whsec_mine' }, { events: ['*'] },
    ]) expect((await api.post('/v1/webhooks', body)).status, JSON.stringify(body)).toBe(400);
    expect((await api.post('/v1/webhooks/1/roll-secret', { expire_old_in: '2d' })).status).toBe(400);
  });

  test('webhooks need the webhooks scopes, which the free tier does not have', async () => {
    const free = await tenant(t, { tier: 'free' });
    expect((await client(t, free.key).get('/v1/webhooks')).status).toBe(403);
    const reader = await tenant(t, { scopes: ['webhooks:read'] });
    expect((await client(t, reader.key).get('/v1/webhooks')).status).toBe(200);
    expect((await client(t, reader.key).post('/v1/webhooks', { url: RECEIVER, events: ['*'] })).status).toBe(403);
    // webhooks:read is not a read scope of the catalog.
    expect((await client(t, reader.key).get('/v1/changelog')).status).toBe(403);
  });

  test('creating or changing an endpoint, its test and its retries need the read scopes of all its types (403 naming the one missing)', async () => {
    const g = await tenant(t);
    const owner = client(t, g.key);
    const narrow = client(t, (await keyFor(t, g.entityId, { scopes: ['webhooks:read', 'webhooks:write'] })).key);
    const artworksOnly = client(t, (await keyFor(t, g.entityId, { scopes: ['webhooks:write', 'artworks:read'] })).key);

    const refused = await narrow.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.created'] });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(refused.body.message).toContain('artworks:read');
    for (const [api, events, scope] of [
      [narrow, ['image.ready'], 'artworks:read'], [artworksOnly, ['event.updated'], 'events:read'], [artworksOnly, ['profile.updated'], 'profile:read'],
      [artworksOnly, ['feed.run.failed'], 'events:read'], [artworksOnly, ['*'], 'profile:read'], [artworksOnly, ['artwork.created', 'event.deleted'], 'events:read'],
    ] as const) {
      const answer = await api.post('/v1/webhooks', { url: RECEIVER, events });
      expect([answer.status, answer.body.message], events.join()).toEqual([403, expect.stringContaining(scope)]);
    }
    // A type whose read scope the key holds, or the test type alone (it carries no record), is allowed.
    expect((await artworksOnly.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.created', 'image.failed'] })).status).toBe(201);
    const testOnly = await narrow.post('/v1/webhooks', { url: RECEIVER, events: ['webhook.test'] });
    expect(testOnly.status).toBe(201);
    expect((await narrow.put(`/v1/webhooks/${testOnly.body.id}`, { events: ['artwork.updated'] })).status).toBe(403);
    expect((await narrow.post(`/v1/webhooks/${testOnly.body.id}/test`, {})).status).toBe(202);

    // Another key's endpoint for artworks: the narrow key cannot point it elsewhere, test it or retry its messages.
    const { body: hook } = await owner.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.created'] });
    const sent = await owner.post(`/v1/webhooks/${hook.id}/test`, {});
    expect(sent.status).toBe(202);
    const moved = await narrow.put(`/v1/webhooks/${hook.id}`, { url: 'http://127.0.0.1:9/attacker' });
    expect([moved.status, moved.body.message]).toEqual([403, expect.stringContaining('artworks:read')]);
    expect((await narrow.post(`/v1/webhooks/${hook.id}/test`, {})).status).toBe(403);
    const retried = await narrow.post(`/v1/webhooks/${hook.id}/messages/${sent.body.id}/retry`, {});
    expect([retried.status, retried.body.message]).toEqual([403, expect.stringContaining('artworks:read')]);
    expect((await owner.get(`/v1/webhooks/${hook.id}`)).body.url).toBe(RECEIVER);
    // Narrowing the events to what the key may read is allowed; the owner's key may do all of it.
    expect((await narrow.put(`/v1/webhooks/${hook.id}`, { events: ['webhook.test'], url: 'http://127.0.0.1:9/other' })).status).toBe(200);
    expect((await owner.post(`/v1/webhooks/${hook.id}/messages/${sent.body.id}/retry`, {})).status).toBe(202);
    // Another entity's endpoint stays a 404, not a 403 that would tell it exists.
    const stranger = client(t, (await tenant(t, { scopes: ['webhooks:write'] })).key);
    expect((await stranger.put(`/v1/webhooks/${hook.id}`, { url: RECEIVER })).status).toBe(404);
  });

  test('roll-secret answers a new secret, shown this once', async () => {
    const api = client(t, (await tenant(t)).key);
    const { body: hook } = await api.post('/v1/webhooks', { url: RECEIVER, events: ['*'] });
    const rolled = await api.post(`/v1/webhooks/${hook.id}/roll-secret`, { expire_old_in: '1h' });
    expect(rolled.status).toBe(200);
    expect(rolled.body.secret).toMatch(/^whsec_/);
    expect(rolled.body.secret).not.toBe(hook.secret);
    const row = await t.handle.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(unseal(row.old_secret!)).toBe(hook.secret);
    expect(Date.parse(row.old_secret_expires_at!) - Date.now()).toBeGreaterThan(3_500_000);
    const now = await api.post(`/v1/webhooks/${hook.id}/roll-secret`, { expire_old_in: 'now' });
    const after = await t.handle.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', hook.id).executeTakeFirstOrThrow();
    expect(unseal(after.secret)).toBe(now.body.secret);
    expect(after.old_secret).toBeNull();
  });
});

describe('addresses', () => {
  test('without FETCH_ALLOW_PRIVATE an http or private address is refused', async () => {
    const strict = await startApp();
    try {
      const api = client(strict, (await tenant(strict)).key);
      for (const url of ['http://example.org/hooks', 'https://127.0.0.1/hooks', 'https://10.1.2.3/h', 'https://localhost/h', 'https://[::1]/h', 'https://user:pw@example.org/h']) {
        const refused = await api.post('/v1/webhooks', { url, events: ['*'] });
        expect(refused.status, url).toBe(400);
        expect(refused.body.details[0].field).toBe('url');
      }
      expect((await api.post('/v1/webhooks', { url: 'https://example.org/hooks', events: ['*'] })).status).toBe(201);
    } finally {
      await strict.close();
    }
  });
});

describe('messages are recorded with the write that causes them', () => {
  const artwork = { title: 'Blue Hour', artist_name: 'Ana Lima', availability: 'available' };

  test('each record type for its cause, only to endpoints subscribed to it, with the changelog entry it names', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const all = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['*'] })).body;
    const some = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.deleted', 'profile.updated'] })).body;
    const off = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['*'], enabled: false })).body;
    const created = await api.post('/v1/artworks', artwork);
    await api.put(`/v1/artworks/${created.body.id}`, { price: 1200, currency: 'EUR' });
    await api.delete(`/v1/artworks/${created.body.id}`);
    const event = await api.post('/v1/events', { title: 'Opening', start_date: '2030-01-10', event_type: 'opening' });
    await api.put(`/v1/events/${event.body.id}`, { title: 'Grand opening' });
    await api.delete(`/v1/events/${event.body.id}`);
    await api.put('/v1/profile', { description: 'Since 1972.' });
    const types = ['artwork.created', 'artwork.updated', 'artwork.deleted', 'event.created', 'event.updated', 'event.deleted', 'profile.updated'];
    const toAll = await recorded(all.id);
    expect(toAll.map((m) => m.type)).toEqual(types);
    expect((await recorded(some.id)).map((m) => m.type)).toEqual(['artwork.deleted', 'profile.updated']);
    expect(await recorded(off.id)).toEqual([]);
    const changes = (await api.get('/v1/changelog')).body.changes.filter((c: { entity_type: string }) => c.entity_type !== 'artist');
    expect(toAll.map((m) => Number(m.change_id))).toEqual(changes.map((c: { id: number }) => c.id));
    expect(toAll.every((m) => m.status === 'pending' && /^msg_[0-9a-f]{32}$/.test(m.id))).toBe(true);
    expect(new Set(toAll.map((m) => m.id)).size).toBe(toAll.length);
  });

  test('every new artwork POSTed makes its message, also once its artist is known (PostgreSQL\'s one-statement path)', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const hook = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.created'] })).body;
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api.post('/v1/artworks', { title: `Known artist ${i}`, artist_name: 'Ana Lima' })).body.id);
    ids.push((await api.post('/v1/artworks', { title: 'No artist' })).body.id);
    expect((await recorded(hook.id)).map((m) => Number(m.record_id))).toEqual(ids);
  });

  test('an entity\'s writes make messages for its own endpoints only', async () => {
    const a = await tenant(t);
    const b = await tenant(t);
    const hookA = (await client(t, a.key).post('/v1/webhooks', { url: RECEIVER, events: ['*'] })).body;
    await client(t, b.key).post('/v1/artworks', artwork);
    expect(await recorded(hookA.id)).toEqual([]);
  });

  test('a batch of 100 writes makes 100 messages', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const hook = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['artwork.created'] })).body;
    const items = Array.from({ length: 100 }, (_, i) => ({ title: `Study ${i}`, artist_name: 'Batch Painter', external_id: `b-${i}` }));
    const batch = await api.post('/v1/artworks/batch', { items });
    expect(batch.status).toBe(200);
    const messages = await recorded(hook.id);
    expect(messages).toHaveLength(100);
    expect(new Set(messages.map((m) => m.record_id)).size).toBe(100);
  });

  test('a refused write and a rolled-back write make no message', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const hook = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['*'] })).body;
    expect((await api.post('/v1/artworks', { title: '' })).status).toBe(400);
    const actor = { entityId: g.entityId, entitySlug: g.slug, source: `api:${g.prefix}` };
    await expect(transaction(t.handle.db, function* () {
      yield* postArtworkWork(t.handle.db, actor, { title: 'Never', artist_name: 'Nobody' });
      throw new Error('rolled back after the write');
    })).rejects.toThrow('rolled back');
    expect(await recorded(hook.id)).toEqual([]);
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
  });

  test('test sends webhook.test whatever the types; the log lists it newest first with its attempts', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const hook = (await api.post('/v1/webhooks', { url: RECEIVER, events: ['event.created'] })).body;
    const sent = await api.post(`/v1/webhooks/${hook.id}/test`, undefined);
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), type: 'webhook.test', status: 'pending', created_at: expect.any(String), attempts: [] });
    await api.post('/v1/events', { title: 'Talk', start_date: '2030-02-01', event_type: 'talk' });
    const log = await api.get(`/v1/webhooks/${hook.id}/messages?limit=1`);
    expect(log.status).toBe(200);
    expect(log.body.messages.map((m: { type: string }) => m.type)).toEqual(['event.created']);
    expect(log.body.has_more).toBe(true);
    const older = await api.get(`/v1/webhooks/${hook.id}/messages?limit=1&after=${log.body.next_after}`);
    expect(older.body).toEqual({ messages: [sent.body], has_more: false, next_after: null });
    const retried = await api.post(`/v1/webhooks/${hook.id}/messages/${sent.body.id}/retry`, undefined);
    expect(retried.status).toBe(202);
    expect((await api.post(`/v1/webhooks/${hook.id}/messages/msg_${'0'.repeat(32)}/retry`, undefined)).status).toBe(404);
    expect((await api.get(`/v1/webhooks/${hook.id}/messages?limit=101`)).status).toBe(400);
  });
});

test('after this file\'s endpoints, rolls and retries, the database holds no whole key or webhook secret (docs/operations.md, Secrets at rest)', async () => {
  expect(await plainSecretsIn(t)).toEqual([]);
});
