import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generateKey } from '../../src/domain/keys.js';
import { setPaused } from '../../src/store/entities.js';
import { revokeKey } from '../../src/store/keys.js';
import { client, keyFor, startApp, tenant, type Reply, type TestApp } from '../helpers.js';
import { DIALECT } from '../helpers.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const artwork = { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, price: 100 };
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const alnum = (n: number) => Array.from({ length: n }, (_, i) => ALNUM[(i * 7) % ALNUM.length]).join('');

/** A raw request with an arbitrary Authorization header (or none). */
async function withAuthorization(authorization: string | undefined, url = '/v1/artworks'): Promise<Reply> {
  const response = await t.app.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });
  return { status: response.statusCode, body: JSON.parse(response.body), headers: response.headers };
}

const header = (r: Reply, name: string) => r.headers[name];

describe('401 unauthorized', () => {
  test('every kind of missing or invalid key gets 401 with one identical body', async () => {
    const live = await tenant(t);
    const expired = await tenant(t, { expiresAt: new Date(Date.now() - 60_000).toISOString() });
    const revoked = await tenant(t);
    expect(await revokeKey(t.handle.db, revoked.prefix)).toBe(true);

    const cases: Record<string, string | undefined> = {
      'header missing': undefined,
      'empty header': '',
      'Basic scheme': `Basic ${Buffer.from(`user:${live.key}`).toString('base64')}`,
      'key without scheme': live.key,
      'Bearer without key': 'Bearer ',
      'wrong prefix': `Bearer ak_test_${alnum(32)}`,
      'prefix only': 'Bearer ak_live_',
      'too short': `Bearer ak_live_${alnum(31)}`,
      'too long': `Bearer ak_live_${alnum(33)}`,
      'invalid character': `Bearer ak_live_${alnum(31)}-`,
      'unknown well-formed key': `Bearer ${generateKey()}`,
      'expired key': `Bearer ${expired.key}`,
      'revoked key': `Bearer ${revoked.key}`,
    };
    const bodies = new Map<string, string>();
    for (const [name, authorization] of Object.entries(cases)) {
      const r = await withAuthorization(authorization);
      expect(r.status, name).toBe(401);
      expect(r.body.error, name).toBe('unauthorized');
      expect(Object.keys(r.body).sort(), name).toEqual(['error', 'message']);
      expect(typeof r.body.message, name).toBe('string');
      bodies.set(name, JSON.stringify(r.body));
    }
    expect(new Set(bodies.values()).size).toBe(1);

    // The same keys work when they are valid, so the 401s above come from the key's state.
    expect((await withAuthorization(`Bearer ${live.key}`)).status).toBe(200);
  });

  test('a key whose expiry is in the future is accepted', async () => {
    const g = await tenant(t, { expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await client(t, g.key).get('/v1/artworks')).status).toBe(200);
  });

  test('a key stops working once it is revoked, while another key of the entity keeps working', async () => {
    const g = await tenant(t);
    const other = await keyFor(t, g.entityId);
    expect((await client(t, g.key).get('/v1/me')).status).toBe(200);
    await revokeKey(t.handle.db, g.prefix);
    const r = await client(t, g.key).get('/v1/me');
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('unauthorized');
    expect((await client(t, other.key).get('/v1/me')).status).toBe(200);
  });

  test('an expired key gets 401 even on /v1/me', async () => {
    const g = await tenant(t, { expiresAt: '2000-01-01T00:00:00.000Z' });
    const r = await client(t, g.key).get('/v1/me');
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('unauthorized');
  });
});

describe('403 forbidden: scopes', () => {
  test('a free-tier key gets 403 naming the missing write scope on every write', async () => {
    const g = await tenant(t, { tier: 'free' });
    const api = client(t, g.key);
    const writes: [string, () => Promise<Reply>, string][] = [
      ['POST /v1/artworks', () => api.post('/v1/artworks', artwork), 'artworks:write'],
      ['PUT /v1/artworks/1', () => api.put('/v1/artworks/1', { price: 1 }), 'artworks:write'],
      ['DELETE /v1/artworks/1', () => api.delete('/v1/artworks/1'), 'artworks:write'],
      ['POST /v1/events', () => api.post('/v1/events', { title: 'Show' }), 'events:write'],
      ['DELETE /v1/events/1', () => api.delete('/v1/events/1'), 'events:write'],
      ['PUT /v1/profile', () => api.put('/v1/profile', { description: 'x' }), 'profile:write'],
    ];
    for (const [name, send, scope] of writes) {
      const r = await send();
      expect(r.status, name).toBe(403);
      expect(r.body.error, name).toBe('forbidden');
      expect(r.body.message, name).toContain(scope);
    }
    // The free key can still read.
    for (const url of ['/v1/artworks', '/v1/events', '/v1/profile', '/v1/changelog', '/v1/sync/status', '/v1/me']) {
      expect((await api.get(url)).status, url).toBe(200);
    }
    // And nothing was written.
    expect((await api.get('/v1/changelog')).body.total).toBe(0);
  });

  test('a key narrowed to artworks:read gets 403 on events and profile but 200 on changelog, sync status and artworks', async () => {
    const g = await tenant(t, { scopes: ['artworks:read'] });
    const api = client(t, g.key);
    const events = await api.get('/v1/events');
    expect(events.status).toBe(403);
    expect(events.body.error).toBe('forbidden');
    expect(events.body.message).toContain('events:read');
    const event = await api.get('/v1/events/1');
    expect(event.status).toBe(403);
    expect(event.body.message).toContain('events:read');
    const profile = await api.get('/v1/profile');
    expect(profile.status).toBe(403);
    expect(profile.body.error).toBe('forbidden');
    expect(profile.body.message).toContain('profile:read');
    expect((await api.post('/v1/artworks', artwork)).status).toBe(403);

    expect((await api.get('/v1/changelog')).status).toBe(200);
    expect((await api.get('/v1/sync/status')).status).toBe(200);
    expect((await api.get('/v1/artworks')).status).toBe(200);
    expect((await api.get('/v1/me')).status).toBe(200);
  });

  test('a key with only events:read may read the changelog and sync status (any read scope)', async () => {
    const g = await tenant(t, { scopes: ['events:read'] });
    const api = client(t, g.key);
    expect((await api.get('/v1/changelog')).status).toBe(200);
    expect((await api.get('/v1/sync/status')).status).toBe(200);
    expect((await api.get('/v1/artworks')).status).toBe(403);
  });

  test('a key with write scopes only gets 403 on the changelog and sync status', async () => {
    const g = await tenant(t, { scopes: ['artworks:write'] });
    const api = client(t, g.key);
    const changelog = await api.get('/v1/changelog');
    expect(changelog.status).toBe(403);
    expect(changelog.body.error).toBe('forbidden');
    expect((await api.get('/v1/sync/status')).status).toBe(403);
    // /v1/me needs no scope.
    expect((await api.get('/v1/me')).status).toBe(200);
    // The write scope it has works.
    expect((await api.post('/v1/artworks', artwork)).status).toBe(201);
  });
});

describe('403 forbidden: paused account', () => {
  test('a paused entity gets 403 "paused" on every endpoint including /v1/me, and works again after resume', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const created = await api.post('/v1/artworks', artwork);
    expect(created.status).toBe(201);
    const event = await api.post('/v1/events', { title: 'Opening Night' });
    expect(event.status).toBe(201);

    await setPaused(t.handle.db, g.entityId, true);
    const calls: [string, () => Promise<Reply>][] = [
      ['GET /v1/me', () => api.get('/v1/me')],
      ['GET /v1/artworks', () => api.get('/v1/artworks')],
      ['GET /v1/artworks/:id', () => api.get(`/v1/artworks/${created.body.id}`)],
      ['POST /v1/artworks', () => api.post('/v1/artworks', artwork)],
      ['PUT /v1/artworks/:id', () => api.put(`/v1/artworks/${created.body.id}`, { price: 5 })],
      ['DELETE /v1/artworks/:id', () => api.delete(`/v1/artworks/${created.body.id}`)],
      ['GET /v1/events', () => api.get('/v1/events')],
      ['GET /v1/events/:id', () => api.get(`/v1/events/${event.body.id}`)],
      ['POST /v1/events', () => api.post('/v1/events', { title: 'Another' })],
      ['DELETE /v1/events/:id', () => api.delete(`/v1/events/${event.body.id}`)],
      ['GET /v1/profile', () => api.get('/v1/profile')],
      ['PUT /v1/profile', () => api.put('/v1/profile', { description: 'x' })],
      ['GET /v1/changelog', () => api.get('/v1/changelog')],
      ['GET /v1/sync/status', () => api.get('/v1/sync/status')],
    ];
    for (const [name, send] of calls) {
      const r = await send();
      expect(r.status, name).toBe(403);
      expect(r.body.error, name).toBe('forbidden');
      expect(r.body.message, name).toMatch(/paused/i);
    }
    // A second key of the paused entity is refused too.
    const second = await keyFor(t, g.entityId);
    expect((await client(t, second.key).get('/v1/me')).status).toBe(403);

    await setPaused(t.handle.db, g.entityId, false);
    expect((await api.get('/v1/me')).status).toBe(200);
    const list = await api.get('/v1/artworks');
    expect(list.status).toBe(200);
    // Nothing the paused key tried was applied.
    expect(list.body.total).toBe(1);
    expect((await api.get(`/v1/artworks/${created.body.id}`)).body.price).toBe(100);
    expect((await api.get('/v1/events')).body.total).toBe(1);
    expect((await api.get('/v1/profile')).body.description).toBeNull();
  });
});

describe('order of checks (docs/api.md, Authentication)', () => {
  test('a paused account sending a malformed body gets 403, not 400', async () => {
    const g = await tenant(t);
    await setPaused(t.handle.db, g.entityId, true);
    const api = client(t, g.key);
    const invalidJson = await api.post('/v1/artworks', '{bad json');
    expect(invalidJson.status).toBe(403);
    expect(invalidJson.body.error).toBe('forbidden');
    const missingTitle = await api.post('/v1/artworks', { price: 'ten' });
    expect(missingTitle.status).toBe(403);
    expect(missingTitle.body.error).toBe('forbidden');
  });

  test('a key lacking the scope sending invalid JSON gets 403, not 400', async () => {
    const g = await tenant(t, { tier: 'free' });
    const r = await client(t, g.key).post('/v1/artworks', '{bad json');
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
    expect(r.body.message).toContain('artworks:write');
  });

  test('a key lacking the scope sending another media type gets 403, not 415', async () => {
    const g = await tenant(t, { tier: 'free' });
    const r = await client(t, g.key).post('/v1/artworks', 'title=x', { 'content-type': 'text/plain' });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
  });

  test('a revoked key of a paused entity gets 401, not 403', async () => {
    const g = await tenant(t);
    await setPaused(t.handle.db, g.entityId, true);
    await revokeKey(t.handle.db, g.prefix);
    const r = await client(t, g.key).get('/v1/me');
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('unauthorized');
  });

  test('a key with the scope sending invalid JSON gets 400 bad_request', async () => {
    const g = await tenant(t);
    const r = await client(t, g.key).post('/v1/artworks', '{bad json');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
  });
});

describe('GET /v1/me', () => {
  test('answers the entity, the key and the rate-limit state, and never the full key', async () => {
    const expiresAt = '2099-01-01T00:00:00.000Z';
    const g = await tenant(t, { name: 'Galerie Me', tier: 'free', scopes: ['artworks:read', 'events:read'], expiresAt });
    const r = await client(t, g.key).get('/v1/me');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['entity', 'key', 'rate_limit']);
    expect(r.body.entity).toEqual({ id: g.entityId, type: 'gallery', name: 'Galerie Me', slug: g.slug, default_currency: null });
    expect(g.slug).toBe('galerie-me');
    expect(Object.keys(r.body.key).sort()).toEqual(['created_at', 'expires_at', 'prefix', 'scopes', 'tier']);
    expect(r.body.key.prefix).toBe(g.key.slice(0, 16));
    expect(r.body.key.prefix).toBe(g.prefix);
    expect(r.body.key.tier).toBe('free');
    expect([...r.body.key.scopes].sort()).toEqual(['artworks:read', 'events:read']);
    expect(r.body.key.expires_at).toBe(expiresAt);
    expect(r.body.key.created_at).toMatch(ISO_MS);
    expect(Object.keys(r.body.rate_limit).sort()).toEqual(['limit', 'remaining', 'reset']);
    expect(r.body.rate_limit.limit).toBe(30);
    expect(r.body.rate_limit.remaining).toBe(29);
    expect(Number.isInteger(r.body.rate_limit.reset)).toBe(true);
    expect(JSON.stringify(r.body)).not.toContain(g.key);
    expect(JSON.stringify(r.headers)).not.toContain(g.key);
  });

  test('a subscriber key without expiry shows every scope, a null expiry and a limit of 120', async () => {
    const g = await tenant(t);
    const r = await client(t, g.key).get('/v1/me');
    expect(r.status).toBe(200);
    expect(r.body.key.tier).toBe('subscriber');
    expect(r.body.key.expires_at).toBeNull();
    expect([...r.body.key.scopes].sort()).toEqual([
      'artworks:read', 'artworks:write', 'events:read', 'events:write', 'profile:read', 'profile:write', 'webhooks:read', 'webhooks:write',
    ]);
    expect(r.body.rate_limit.limit).toBe(120);
  });
});

describe('rate-limit headers', () => {
  test('every authenticated response carries X-RateLimit-Limit, -Remaining and -Reset', async () => {
    const g = await tenant(t, { tier: 'free' });
    const api = client(t, g.key);
    const responses: [string, Reply, number][] = [
      ['200 read', await api.get('/v1/artworks'), 200],
      ['404 record', await api.get('/v1/artworks/999'), 404],
      ['403 scope', await api.post('/v1/artworks', artwork), 403],
      ['200 me', await api.get('/v1/me'), 200],
    ];
    const g2 = await tenant(t);
    responses.push(['400 validation', await client(t, g2.key).post('/v1/artworks', { price: 1 }), 400]);
    responses.push(['201 create', await client(t, g2.key).post('/v1/artworks', artwork), 201]);
    const now = Math.floor(Date.now() / 1000);
    for (const [name, r, status] of responses) {
      expect(r.status, name).toBe(status);
      expect(header(r, 'x-ratelimit-limit'), name).toBeDefined();
      expect(header(r, 'x-ratelimit-remaining'), name).toBeDefined();
      expect(header(r, 'x-ratelimit-reset'), name).toBeDefined();
      const reset = Number(header(r, 'x-ratelimit-reset'));
      expect(Number.isInteger(reset), name).toBe(true);
      expect(reset, name).toBeGreaterThanOrEqual(now);
      expect(reset, name).toBeLessThanOrEqual(now + 61);
    }
    expect(Number(header(responses[0]![1], 'x-ratelimit-limit'))).toBe(30);
    expect(Number(header(responses[4]![1], 'x-ratelimit-limit'))).toBe(120);
  });

  test('X-RateLimit-Remaining starts at limit minus one and decreases by one per request, refused ones included', async () => {
    const g = await tenant(t, { tier: 'free' });
    const api = client(t, g.key);
    const seen: number[] = [];
    seen.push(Number(header(await api.get('/v1/artworks'), 'x-ratelimit-remaining')));
    seen.push(Number(header(await api.post('/v1/artworks', artwork), 'x-ratelimit-remaining'))); // 403
    seen.push(Number(header(await api.get('/v1/artworks/12345'), 'x-ratelimit-remaining'))); // 404
    seen.push(Number(header(await api.get('/v1/profile'), 'x-ratelimit-remaining')));
    expect(seen).toEqual([29, 28, 27, 26]);
    const me = await api.get('/v1/me');
    expect(me.body.rate_limit.remaining).toBe(25);
    expect(Number(header(me, 'x-ratelimit-remaining'))).toBe(25);
  });

  test('each key has its own counter', async () => {
    const g = await tenant(t, { tier: 'free' });
    const other = await keyFor(t, g.entityId, { tier: 'free' });
    await client(t, g.key).get('/v1/artworks');
    await client(t, g.key).get('/v1/artworks');
    const r = await client(t, other.key).get('/v1/artworks');
    expect(Number(header(r, 'x-ratelimit-remaining'))).toBe(29);
  });
});

describe('unknown routes', () => {
  test('an unknown route gets 404 not_found with a valid key, without a key and with an invalid key', async () => {
    const g = await tenant(t);
    const variants: [string, Reply][] = [
      ['valid key', await client(t, g.key).get('/v1/nope')],
      ['no key', await client(t).get('/v1/nope')],
      ['invalid key', await client(t, 'ak_live_short').get('/v1/nope')],
      ['POST with key', await client(t, g.key).post('/v1/nope', { a: 1 })],
    ];
    for (const [name, r] of variants) {
      expect(r.status, name).toBe(404);
      expect(r.body.error, name).toBe('not_found');
      expect(typeof r.body.message, name).toBe('string');
    }
  });

  test('a path id that is not a positive integer gets 404 not_found', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    for (const url of ['/v1/artworks/abc', '/v1/artworks/0', '/v1/artworks/-1', '/v1/events/1.5']) {
      const r = await api.get(url);
      expect(r.status, url).toBe(404);
      expect(r.body.error, url).toBe('not_found');
    }
  });
});

describe('entity binding', () => {
  test("entity B's key never sees or changes entity A's records, and A's data stays unchanged", async () => {
    const a = await tenant(t, { name: 'Binding Gallery A' });
    const b = await tenant(t, { name: 'Binding Gallery B' });
    const apiA = client(t, a.key);
    const apiB = client(t, b.key);

    const aw = await apiA.post('/v1/artworks', { ...artwork, title: 'Binding Work', availability: 'available' });
    expect(aw.status).toBe(201);
    const ev = await apiA.post('/v1/events', { title: 'Binding Show', start_date: '2030-01-01' });
    expect(ev.status).toBe(201);
    await apiA.put('/v1/profile', { description: 'A description' });

    const artworkBefore = (await apiA.get(`/v1/artworks/${aw.body.id}`)).body;
    const eventBefore = (await apiA.get(`/v1/events/${ev.body.id}`)).body;
    const profileBefore = (await apiA.get('/v1/profile')).body;
    const changelogBefore = (await apiA.get('/v1/changelog')).body;
    expect(changelogBefore.total).toBeGreaterThan(0);

    const refused: [string, Reply][] = [
      ['GET artwork', await apiB.get(`/v1/artworks/${aw.body.id}`)],
      ['PUT artwork', await apiB.put(`/v1/artworks/${aw.body.id}`, { price: 1, availability: 'sold' })],
      ['DELETE artwork', await apiB.delete(`/v1/artworks/${aw.body.id}`)],
      ['GET event', await apiB.get(`/v1/events/${ev.body.id}`)],
      ['DELETE event', await apiB.delete(`/v1/events/${ev.body.id}`)],
    ];
    for (const [name, r] of refused) {
      expect(r.status, name).toBe(404);
      expect(r.body.error, name).toBe('not_found');
    }

    const artworksB = await apiB.get('/v1/artworks');
    expect(artworksB.body.artworks).toEqual([]);
    expect(artworksB.body.total).toBe(0);
    const eventsB = await apiB.get('/v1/events');
    expect(eventsB.body.events).toEqual([]);
    expect(eventsB.body.total).toBe(0);
    const changelogB = await apiB.get('/v1/changelog');
    expect(changelogB.body.changes).toEqual([]);
    expect(changelogB.body.total).toBe(0);
    const statusB = (await apiB.get('/v1/sync/status')).body;
    expect(statusB.artworks.count).toBe(0);
    expect(statusB.events.count).toBe(0);
    expect(statusB.artists.count).toBe(0);
    const profileB = (await apiB.get('/v1/profile')).body;
    expect(profileB.id).toBe(b.entityId);
    expect(profileB.description).toBeNull();

    // B posting the same artwork creates B's own record.
    const own = await apiB.post('/v1/artworks', { ...artwork, title: 'Binding Work' });
    expect(own.status).toBe(201);
    expect(own.body.created).toBe(true);
    expect(own.body.id).not.toBe(aw.body.id);
    expect(own.body.source_fingerprint).toBe(aw.body.source_fingerprint);
    const ownEvent = await apiB.post('/v1/events', { title: 'Binding Show' });
    expect(ownEvent.status).toBe(201);
    expect(ownEvent.body.created).toBe(true);
    expect(ownEvent.body.id).not.toBe(ev.body.id);

    // B's changelog holds only B's writes, none of A's entries.
    const changesB = (await apiB.get('/v1/changelog')).body.changes as { id: number; source: string; entity_id: number }[];
    const idsA = new Set((changelogBefore.changes as { id: number }[]).map((c) => c.id));
    expect(changesB.length).toBeGreaterThan(0);
    for (const change of changesB) {
      expect(idsA.has(change.id)).toBe(false);
      expect(change.source).toBe(`api:${b.prefix}`);
    }
    expect(changesB.map((c) => c.entity_id)).not.toContain(aw.body.id);

    // A's data is unchanged.
    expect((await apiA.get(`/v1/artworks/${aw.body.id}`)).body).toEqual(artworkBefore);
    expect((await apiA.get(`/v1/events/${ev.body.id}`)).body).toEqual(eventBefore);
    expect((await apiA.get('/v1/profile')).body).toEqual(profileBefore);
    const artworksA = (await apiA.get('/v1/artworks')).body;
    expect(artworksA.total).toBe(1);
    expect(artworksA.artworks[0].id).toBe(aw.body.id);
    expect((await apiA.get('/v1/events')).body.total).toBe(1);
    expect((await apiA.get('/v1/changelog')).body).toEqual(changelogBefore);
  });
});

describe('key storage', () => {
  test('the database stores no clear key, only its SHA-256 hash', async () => {
    const g = await tenant(t);
    const second = await keyFor(t, g.entityId, { tier: 'partner' });
    const keys = [g.key, second.key];
    // Use the keys, so that any bookkeeping on use has happened.
    for (const key of keys) {
      expect((await client(t, key).post('/v1/artworks', { title: `Stored ${key.slice(-4)}` })).status).toBe(201);
    }

    const rows = await t.handle.db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThanOrEqual(2);
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        for (const key of keys) expect(String(value), `api_keys.${column}`).not.toContain(key);
      }
    }
    const hashes = rows.map((r) => r.key_hash);
    for (const key of keys) expect(hashes).toContain(createHash('sha256').update(key).digest('hex'));

    // No other table holds a clear key either.
    const tables = DIALECT === 'sqlite'
      ? await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(t.handle.db)
      : await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = 'public'`.execute(t.handle.db);
    expect(tables.rows.length).toBeGreaterThan(1);
    for (const { name } of tables.rows) {
      const all = await sql<Record<string, unknown>>`select * from ${sql.table(name)}`.execute(t.handle.db);
      for (const row of all.rows) {
        for (const key of keys) expect(JSON.stringify(row), name).not.toContain(key.slice(16));
      }
    }
  });
});
