import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** Conditional requests on keyed GETs (docs/api.md, Conditional requests). */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '8', RATE_LIMIT_WINDOW_S: '600' }); });
afterAll(async () => { await t?.close(); });

const artwork = (title: string) => ({ title, artist_name: 'Ana Mendieta', creation_year: 1976, medium: 'Silueta' });
const remaining = (headers: Record<string, unknown>) => Number(headers['x-ratelimit-remaining']);

/** A fresh gallery with two artworks, and a key with a generous limit for the set-up writes. */
async function gallery() {
  const g = await tenant(t, { tier: 'partner' });
  const api = client(t, g.key);
  const first = await api.post('/v1/artworks', artwork('Untitled (Silueta) 1'));
  await api.post('/v1/artworks', artwork('Untitled (Silueta) 2'));
  return { g, api, id: first.body.id as number };
}

describe('every keyed GET', () => {
  test.each(['/v1/artworks', '/v1/artworks/ID', '/v1/events', '/v1/profile', '/v1/changelog', '/v1/sync/status', '/v1/me'])(
    '%s answers 200 with a strong ETag and Cache-Control: private, no-cache, and 304 with no body to its own tag', async (path) => {
      const { api, id } = await gallery();
      const url = path.replace('ID', String(id));
      const first = await api.get(url);
      expect(first.status).toBe(200);
      expect(first.headers.etag).toMatch(/^"[^"]+"$/);
      expect(first.headers['cache-control']).toBe('private, no-cache');
      const again = await api.get(url, { 'if-none-match': String(first.headers.etag) });
      expect(again.status).toBe(304);
      expect(again.body).toBe('');
      expect(again.headers.etag).toBe(first.headers.etag);
      expect(again.headers['cache-control']).toBe('private, no-cache');
    });
});

describe('a 304', () => {
  test('takes no rate-limit unit and still carries the X-RateLimit headers', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const first = await api.get('/v1/artworks');
    expect(remaining(first.headers)).toBe(7);
    for (let i = 0; i < 12; i++) {
      const polled = await api.get('/v1/artworks', { 'if-none-match': String(first.headers.etag) });
      expect(polled.status).toBe(304);
      expect(polled.headers['x-ratelimit-limit']).toBe('8');
      expect(remaining(polled.headers)).toBe(7);
      expect(polled.headers['x-ratelimit-reset']).toBe(first.headers['x-ratelimit-reset']);
    }
    const counted = await api.get('/v1/artworks');
    expect(remaining(counted.headers)).toBe(6);
  });

  test('comes even when the window is used up, while a changed answer gets 429', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const first = await api.get('/v1/profile');
    for (let i = 0; i < 7; i++) await api.get('/v1/sync/status');
    expect((await api.get('/v1/profile')).status).toBe(429);
    const polled = await api.get('/v1/profile', { 'if-none-match': String(first.headers.etag) });
    expect(polled.status).toBe(304);
    expect(remaining(polled.headers)).toBe(0);
    const stale = await api.get('/v1/profile', { 'if-none-match': '"not-the-tag"' });
    expect(stale.status).toBe(429);
    expect(stale.headers['retry-after']).toMatch(/^\d+$/);
  });

  test('a conditional request that does not match takes its unit, as does one that fails validation', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const miss = await api.get('/v1/artworks', { 'if-none-match': '"something-else"' });
    expect(miss.status).toBe(200);
    expect(remaining(miss.headers)).toBe(7);
    const invalid = await api.get('/v1/artworks?limit=0', { 'if-none-match': String(miss.headers.etag) });
    expect(invalid.status).toBe(400);
    expect(remaining(invalid.headers)).toBe(6);
    const missing = await api.get('/v1/artworks/999999', { 'if-none-match': '"x"' });
    expect(missing.status).toBe(404);
    expect(remaining(missing.headers)).toBe(5);
  });

  test('a key without the route\'s scope gets 403 for a conditional request too, and it counts', async () => {
    const g = await tenant(t, { scopes: ['events:read'] });
    const api = client(t, g.key);
    const refused = await api.get('/v1/artworks', { 'if-none-match': '*' });
    expect(refused.status).toBe(403);
    expect(remaining(refused.headers)).toBe(7);
  });
});

describe('the ETag', () => {
  test('changes after a write, a change that changes nothing and a delete, and not otherwise', async () => {
    const { api, id } = await gallery();
    const tagOf = async (url: string) => String((await api.get(url)).headers.etag);
    const urls = ['/v1/artworks', `/v1/artworks/${id}`, '/v1/changelog', '/v1/sync/status'];
    const before = await Promise.all(urls.map(tagOf));
    expect(await Promise.all(urls.map(tagOf))).toEqual(before);
    await api.put(`/v1/artworks/${id}`, { price: 1200 });
    const afterWrite = await Promise.all(urls.map(tagOf));
    afterWrite.forEach((tag, i) => expect(tag).not.toBe(before[i]));
    // A write that changes nothing still gets its changelog entry, so the changelog's answer changes.
    await api.put(`/v1/artworks/${id}`, { price: 1200 });
    const afterSame = await Promise.all(urls.map(tagOf));
    afterSame.forEach((tag, i) => expect(tag).not.toBe(afterWrite[i]));
    await api.delete(`/v1/artworks/${id}`);
    const list = await api.get('/v1/artworks', { 'if-none-match': afterSame[0]! });
    expect(list.status).toBe(200);
    expect(list.body.artworks).toHaveLength(1);
  });

  test('a write through another process changes the tag at once, and its old answer is not sent again', async () => {
    const { g, api, id } = await gallery();
    const other = await startApp({}, t.config.databaseUrl);
    try {
      const elsewhere = client(other, g.key);
      const before = await elsewhere.get(`/v1/artworks/${id}`);
      expect((await elsewhere.get(`/v1/artworks/${id}`, { 'if-none-match': String(before.headers.etag) })).status).toBe(304);
      await api.put(`/v1/artworks/${id}`, artwork('Untitled (Silueta) renamed'));
      const after = await elsewhere.get(`/v1/artworks/${id}`, { 'if-none-match': String(before.headers.etag) });
      expect(after.status).toBe(200);
      expect(after.body.title).toBe('Untitled (Silueta) renamed');
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect((await elsewhere.get(`/v1/artworks/${id}`)).body.title).toBe('Untitled (Silueta) renamed');
    } finally {
      await other.close();
    }
  });

  test('a tag from before a write gets the new answer, not a 304', async () => {
    const { api, id } = await gallery();
    const first = await api.get(`/v1/artworks/${id}`);
    await api.put(`/v1/artworks/${id}`, { medium: 'Earth and blood' });
    const after = await api.get(`/v1/artworks/${id}`, { 'if-none-match': String(first.headers.etag) });
    expect(after.status).toBe(200);
    expect(after.body.medium).toBe('Earth and blood');
  });

  test('two entities never share a tag for the same URL and the same content', async () => {
    const [a, b] = [await tenant(t), await tenant(t)];
    const [ra, rb] = [await client(t, a.key).get('/v1/artworks'), await client(t, b.key).get('/v1/artworks')];
    expect(ra.body.artworks).toEqual(rb.body.artworks);
    expect(ra.headers.etag).not.toBe(rb.headers.etag);
    const crossed = await client(t, b.key).get('/v1/artworks', { 'if-none-match': String(ra.headers.etag) });
    expect(crossed.status).toBe(200);
  });

  test('differs between URLs, and not between the same query in another order', async () => {
    const { api } = await gallery();
    const [one, two, swapped] = await Promise.all([
      api.get('/v1/artworks?limit=1&after=0'), api.get('/v1/artworks?limit=2&after=0'), api.get('/v1/artworks?after=0&limit=1'),
    ]);
    expect(one.headers.etag).not.toBe(two.headers.etag);
    expect(swapped.headers.etag).toBe(one.headers.etag);
  });
});

describe('If-None-Match', () => {
  test('compares weakly and takes a list of tags', async () => {
    const { api } = await gallery();
    const tag = String((await api.get('/v1/artworks')).headers.etag);
    expect((await api.get('/v1/artworks', { 'if-none-match': `W/${tag}` })).status).toBe(304);
    expect((await api.get('/v1/artworks', { 'if-none-match': `"a", ${tag} , "b"` })).status).toBe(304);
    expect((await api.get('/v1/artworks', { 'if-none-match': `"a", "b"` })).status).toBe(200);
    expect((await api.get('/v1/artworks', { 'if-none-match': tag.slice(1, -1) })).status).toBe(200);
  });

  test('* matches a record that exists and not one that does not', async () => {
    const { api, id } = await gallery();
    expect((await api.get(`/v1/artworks/${id}`, { 'if-none-match': '*' })).status).toBe(304);
    expect((await api.get('/v1/artworks', { 'if-none-match': '*' })).status).toBe(304);
    const missing = await api.get('/v1/artworks/999999', { 'if-none-match': '*' });
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe('not_found');
  });
});

describe('GET /v1/me', () => {
  test('is 304 while its answer (the rate-limit state included) still holds, and 200 once another request counted', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const first = await api.get('/v1/me');
    expect(first.body.rate_limit.remaining).toBe(7);
    const same = await api.get('/v1/me', { 'if-none-match': String(first.headers.etag) });
    expect(same.status).toBe(304);
    await api.get('/v1/profile');
    const changed = await api.get('/v1/me', { 'if-none-match': String(first.headers.etag) });
    expect(changed.status).toBe(200);
    expect(changed.body.rate_limit.remaining).toBe(5);
    expect(changed.headers.etag).not.toBe(first.headers.etag);
    expect((await api.get('/v1/me', { 'if-none-match': String(changed.headers.etag) })).status).toBe(304);
  });
});
