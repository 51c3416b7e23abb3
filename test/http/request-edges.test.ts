import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MemoryRateLimiter } from '../../src/coordination/rate-limiter.js';
import { setPaused } from '../../src/store/entities.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';

/** The smaller edges an attacker's pass found (issue #24) in HTTP requests, each pinned by the behaviour a client sees. */

let t: TestApp;
let g: Tenant;
let eventSlug: string;
let artworkId: number;
beforeAll(async () => {
  t = await startApp({ PUBLIC_RATE_LIMIT: '100000' });
  g = await tenant(t);
  const api = client(t, g.key);
  const artwork = await api.post('/v1/artworks', { title: 'Known Work' });
  const event = await api.post('/v1/events', { title: 'Known Show', start_date: '2027-05-01' });
  expect([artwork.status, event.status]).toEqual([201, 201]);
  artworkId = artwork.body.id;
  eventSlug = event.body.slug;
});
afterAll(async () => { await t?.close(); });

const visit = async (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => {
  const r = await t.app.inject({ method, url, headers });
  return { status: r.statusCode, body: r.body, headers: r.headers };
};

describe('If-None-Match: * on public routes', () => {
  test('`*` on a page, event, feed or sitemap part that does not exist answers 404 with no ETag, never 304', async () => {
    const paused = await tenant(t);
    await setPaused(t.handle.db, paused.entityId, true);
    for (const url of [
      `/profiles/${g.slug}/events/no-such-show`,
      `/profiles/${g.slug}/events/no-such-show/event.ics`,
      `/profiles/${g.slug}/artworks/999999`,
      `/profiles/${g.slug}/artworks/not-an-id`,
      `/profiles/${g.slug}/sitemap.xml?part=9`,
      `/profiles/${g.slug}?page=9`,
      `/profiles/${paused.slug}`,
      `/profiles/${paused.slug}/events.ics`,
      '/profiles/nobody-by-this-name',
      '/profiles/nobody-by-this-name/events.ics',
    ]) {
      for (const method of ['GET', 'HEAD'] as const) {
        const r = await visit(url, { 'if-none-match': '*' }, method);
        expect(r.status, `${method} ${url}`).toBe(404);
        expect(r.headers.etag, `${method} ${url}`).toBeUndefined();
      }
    }
  });

  test('`*` on a page that exists answers 304 with its ETag; `*` inside a list is no `*`', async () => {
    for (const url of [
      `/profiles/${g.slug}`,
      `/profiles/${g.slug}/events.ics`,
      `/profiles/${g.slug}/events/${eventSlug}`,
      `/profiles/${g.slug}/events/${eventSlug}/event.ics`,
      `/profiles/${g.slug}/artworks/${artworkId}`,
      `/profiles/${g.slug}/sitemap.xml`,
      '/sitemap.xml',
      '/robots.txt',
    ]) {
      const r = await visit(url, { 'if-none-match': '*' });
      expect(r.status, url).toBe(304);
      expect(r.headers.etag, url).toBe((await visit(url)).headers.etag);
      // The API's reading (docs/api.md): `*` is a value alone, and a list matches only by its tags.
      expect((await visit(url, { 'if-none-match': '"other", *' })).status, url).toBe(200);
      expect((await visit(url, { 'if-none-match': `"other", W/${r.headers.etag}` })).status, url).toBe(304);
    }
  });
});

/** A request over real HTTP to the test app (listening on a free port), headers as a raw list so names may repeat. */
async function overHttp(method: string, path: string, headers: string[], body?: string, to: TestApp = t): Promise<{ status: number; body: any }> {
  if (!to.app.server.listening) await to.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = to.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    // A raw list replaces every header Node would add, Host and Content-Length included.
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: ['Host', `127.0.0.1:${port}`, ...headers, ...(body === undefined ? [] : ['Content-Length', String(Buffer.byteLength(body))])] }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk; }).on('end', () => {
        let parsed: unknown = text;
        try { parsed = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode!, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('headers that may be sent once', () => {
  test('two Authorization headers get 400 naming the header, whichever of them is valid', async () => {
    for (const pair of [[g.key, 'ak_live_' + 'x'.repeat(32)], ['ak_live_' + 'x'.repeat(32), g.key], [g.key, g.key]]) {
      const r = await overHttp('GET', '/v1/me', ['Authorization', `Bearer ${pair[0]}`, 'authorization', `Bearer ${pair[1]}`]);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'bad_request', details: [{ field: 'Authorization' }] });
    }
    expect((await overHttp('GET', '/v1/me', ['Authorization', `Bearer ${g.key}`])).status).toBe(200);
  });

  test('two Idempotency-Key headers get 400 and nothing is written; one is kept as sent', async () => {
    const json = ['Authorization', `Bearer ${g.key}`, 'Content-Type', 'application/json'];
    const body = JSON.stringify({ title: 'Twice Keyed' });
    const r = await overHttp('POST', '/v1/artworks', [...json, 'Idempotency-Key', 'a', 'Idempotency-Key', 'b'], body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', details: [{ field: 'Idempotency-Key' }] });
    const list = await client(t, g.key).get('/v1/artworks?limit=100');
    expect(list.body.artworks.map((a: { title: string }) => a.title)).not.toContain('Twice Keyed');
    const once = await overHttp('POST', '/v1/artworks', [...json, 'Idempotency-Key', 'a, b'], body);
    expect(once.status).toBe(201);
    const replay = await overHttp('POST', '/v1/artworks', [...json, 'Idempotency-Key', 'a, b'], body);
    expect(replay.body.id).toBe(once.body.id);
  });
});

describe('headers no request may repeat', () => {
  test('two Host or two Content-Type headers get 400 naming the header, on the API and on public pages', async () => {
    const json = ['Content-Type', 'application/json'];
    const cases: [string, string, string[], string?][] = [
      ['GET', '/robots.txt', ['Host', 'evil.example']],
      ['GET', '/v1/me', ['Authorization', `Bearer ${g.key}`, 'Host', 'evil.example']],
      ['POST', '/v1/artworks', ['Authorization', `Bearer ${g.key}`, ...json, 'Content-Type', 'text/plain'], '{"title":"Two Types"}'],
    ];
    for (const [method, path, headers, body] of cases) {
      const r = await overHttp(method, path, headers, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body, `${method} ${path}`).toMatchObject({ error: 'bad_request', details: [{ field: headers.includes('Host') ? 'Host' : 'Content-Type' }] });
    }
    const list = await client(t, g.key).get('/v1/artworks?limit=100');
    expect(list.body.artworks.map((a: { title: string }) => a.title)).not.toContain('Two Types');
  });

  test('two Authorization headers on /metrics behind METRICS_TOKEN get 400, even when the first is right', async () => {
    const guarded = await startApp({ METRICS_TOKEN: 'right-token' });
    try {
      const r = await overHttp('GET', '/metrics', ['Authorization', 'Bearer right-token', 'Authorization', 'Bearer wrong'], undefined, guarded);
      expect(r.status).toBe(400);
      expect((await overHttp('GET', '/metrics', ['Authorization', 'Bearer right-token'], undefined, guarded)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});

describe('requests that take no body', () => {
  const auth = () => ['Authorization', `Bearer ${g.key}`];
  const newArtwork = async (title: string) => (await client(t, g.key).post('/v1/artworks', { title })).body.id as number;
  const exists = async (id: number) => (await client(t, g.key).get(`/v1/artworks/${id}`)).status === 200;

  test('DELETE with Content-Type: application/json (or any other) and an empty body deletes', async () => {
    for (const headers of [
      ['Content-Type', 'application/json'],
      ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', '0'],
      ['Content-Type', 'text/plain'],
    ]) {
      const id = await newArtwork('Deleted Quietly');
      const r = await overHttp('DELETE', `/v1/artworks/${id}`, [...auth(), ...headers]);
      expect(r.status, headers.join(' ')).toBe(200);
      expect(await exists(id)).toBe(false);
    }
  });

  test('DELETE with an empty JSON object deletes; a field in it is named in a 400 and nothing is deleted', async () => {
    const json = [...auth(), 'Content-Type', 'application/json'];
    const first = await newArtwork('Deleted With Braces');
    expect((await overHttp('DELETE', `/v1/artworks/${first}`, json, '{}')).status).toBe(200);
    const second = await newArtwork('Kept By A Field');
    const r = await overHttp('DELETE', `/v1/artworks/${second}`, json, '{"force": true}');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', details: [{ field: 'force' }] });
    for (const body of ['[]', 'null', '{"a":']) expect((await overHttp('DELETE', `/v1/artworks/${second}`, json, body)).status, body).toBe(400);
    expect((await overHttp('DELETE', `/v1/artworks/${second}`, [...auth(), 'Content-Type', 'text/plain'], 'x')).status).toBe(415);
    expect(await exists(second)).toBe(true);
  });

  test('a DELETE replayed by its Idempotency-Key is the same request with or without Content-Type', async () => {
    const id = await newArtwork('Deleted Once');
    const key = ['Idempotency-Key', `delete-${id}`];
    const first = await overHttp('DELETE', `/v1/artworks/${id}`, [...auth(), ...key, 'Content-Type', 'application/json']);
    const again = await overHttp('DELETE', `/v1/artworks/${id}`, [...auth(), ...key]);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body).toEqual(first.body);
  });

  test('a write that takes a body still refuses an empty one', async () => {
    const r = await overHttp('POST', '/v1/artworks', [...auth(), 'Content-Type', 'application/json']);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/body is empty/);
  });
});

describe('the client address behind TRUST_PROXY=true, and the limiter\'s memory', () => {
  test('a forwarded value that is not an IP address is not a client: 25 rotating ones share the peer\'s limit of 20', async () => {
    const proxied = await startApp({ TRUST_PROXY: 'true', PUBLIC_RATE_LIMIT: '20' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        const forwarded = i % 2 ? `garbage-${i}` : `${'a'.repeat(8000)}${i}`;
        statuses.push((await overHttp('GET', '/robots.txt', ['X-Forwarded-For', forwarded], undefined, proxied)).status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
      // A real address forwarded is its own client; spelled another way it is the same one.
      expect((await overHttp('GET', '/robots.txt', ['X-Forwarded-For', '2001:DB8::7'], undefined, proxied)).status).toBe(200);
      for (let i = 0; i < 19; i++) await overHttp('GET', '/robots.txt', ['X-Forwarded-For', '2001:db8:0:0:0:0:0:7'], undefined, proxied);
      expect((await overHttp('GET', '/robots.txt', ['X-Forwarded-For', '2001:db8::7%eth0'], undefined, proxied)).status).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  test('an IPv6 client counts as its /64: addresses rotated inside it share one limit, another /64 is another client', async () => {
    const proxied = await startApp({ TRUST_PROXY: 'true', PUBLIC_RATE_LIMIT: '20' });
    try {
      const from = async (address: string) => (await overHttp('GET', '/robots.txt', ['X-Forwarded-For', address], undefined, proxied)).status;
      const statuses: number[] = [];
      for (let i = 1; i <= 22; i++) statuses.push(await from(`2001:db8:7:42:${i.toString(16)}:${(i * 977).toString(16)}::${i}`));
      expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
      expect(statuses.slice(20)).toEqual([429, 429]);
      expect(await from('2001:db8:7:43::1')).toBe(200);
      // An IPv4 client, and the same one as a dual-stack socket spells it, share one limit.
      for (let i = 0; i < 10; i++) await from('198.51.100.7');
      for (let i = 0; i < 10; i++) await from('::ffff:198.51.100.7');
      expect(await from('198.51.100.7')).toBe(429);
      expect(await from('198.51.100.8')).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  test('the in-memory limiter holds at most its size, and a client that keeps sending keeps its counter', () => {
    const limiter = new MemoryRateLimiter(100);
    for (let i = 0; i < 5; i++) limiter.hit('ip:198.51.100.1', 3, 60_000);
    for (let i = 0; i < 1000; i++) {
      limiter.hit(`ip:10.0.${i >> 8}.${i & 255}`, 3, 60_000);
      // The refused client keeps trying while the table churns: it stays refused.
      if (i % 50 === 0) expect(limiter.hit('ip:198.51.100.1', 3, 60_000).allowed).toBe(false);
    }
    expect(limiter.size).toBe(100);
    // One that went quiet while 100 others came is forgotten: the price of a bounded table.
    expect(limiter.hit('ip:10.0.0.0', 3, 60_000).remaining).toBe(2);
  });
});

