import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setPaused, updateEntity } from '../../src/store/entities.js';
import { client, freshDatabase, startApp, tenant, type FreshDatabase, type TestApp } from '../helpers.js';

/**
 * Public pages and feeds are built once per version of their data and served from a cache in every
 * process (docs/public-pages.md, Built once per change): ETag from the version, 304 and HEAD without a build, per-address limits.
 */

let t: TestApp;
beforeAll(async () => { t = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example', RATE_LIMIT_SUBSCRIBER: '100000', PUBLIC_RATE_LIMIT: '100000' }); });
afterAll(async () => { await t?.close(); });

async function gallery(app: TestApp = t) {
  const g = await tenant(app);
  return { ...g, api: client(app, g.key) };
}

async function visit(app: TestApp, url: string, options: { method?: 'GET' | 'HEAD'; headers?: Record<string, string>; remoteAddress?: string } = {}) {
  const r = await app.app.inject({ method: options.method ?? 'GET', url, headers: options.headers ?? {}, ...(options.remoteAddress ? { remoteAddress: options.remoteAddress } : {}) });
  return { status: r.statusCode, body: r.body, headers: r.headers };
}

const builds = (app: TestApp = t) => app.app.publicCache.builds;

describe('built once per version of the data', () => {
  test('a second visit is served from the cache, and a write through the API makes the next visit build anew', async () => {
    const g = await gallery();
    const url = `/profiles/${g.slug}`;
    const before = builds();
    const first = await visit(t, url);
    expect(first.status).toBe(200);
    expect(builds()).toBe(before + 1);
    const second = await visit(t, url);
    expect(second.body).toBe(first.body);
    expect(second.headers.etag).toBe(first.headers.etag);
    expect(builds()).toBe(before + 1);

    expect((await g.api.post('/v1/artworks', { title: 'Fresh Work' })).status).toBe(201);
    const third = await visit(t, url);
    expect(third.body).toContain('Fresh Work');
    expect(third.headers.etag).not.toBe(first.headers.etag);
    expect(builds()).toBe(before + 2);
  });

  test('a 304 answers a matching If-None-Match, weak or strong, without building the page', async () => {
    const g = await gallery();
    const url = `/profiles/${g.slug}/events.ics`;
    const etag = String((await visit(t, url)).headers.etag);
    const before = builds();
    t.app.publicCache.clear();
    for (const tag of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const r = await visit(t, url, { headers: { 'if-none-match': tag } });
      expect(r.status, tag).toBe(304);
      expect(r.body).toBe('');
      expect(r.headers.etag).toBe(etag);
    }
    expect(builds()).toBe(before);
    expect((await visit(t, url, { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
  });

  test('HEAD answers the headers and the ETag without building; after a GET it carries the length', async () => {
    const g = await gallery();
    expect((await g.api.post('/v1/events', { title: 'Head Show', start_date: '2027-05-01' })).status).toBe(201);
    const url = `/profiles/${g.slug}/events.ics`;
    const before = builds();
    const head = await visit(t, url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body).toBe('');
    expect(String(head.headers['content-type'])).toMatch(/^text\/calendar/);
    expect(head.headers.etag).toBeTruthy();
    expect(builds()).toBe(before);
    const get = await visit(t, url);
    expect(get.headers.etag).toBe(head.headers.etag);
    expect(builds()).toBe(before + 1);
    const warm = await visit(t, url, { method: 'HEAD' });
    expect(warm.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
  });

  test('an edit by the operator, a profile edit and a pause each change what is served', async () => {
    const g = await gallery();
    const url = `/profiles/${g.slug}`;
    const seen = new Set([String((await visit(t, url)).headers.etag)]);

    await updateEntity(t.handle.db, g.entityId, { name: 'Renamed By Operator' });
    const renamed = await visit(t, url);
    expect(renamed.body).toContain('Renamed By Operator');
    seen.add(String(renamed.headers.etag));

    expect((await g.api.put('/v1/profile', { description: 'A new description.' })).status).toBe(200);
    const described = await visit(t, url);
    expect(described.body).toContain('A new description.');
    seen.add(String(described.headers.etag));
    expect(seen.size).toBe(3);

    await setPaused(t.handle.db, g.entityId, true);
    expect((await visit(t, url)).status).toBe(404);
    expect((await visit(t, url, { headers: { 'if-none-match': String(described.headers.etag) } })).status).toBe(404);
    await setPaused(t.handle.db, g.entityId, false);
    expect((await visit(t, url)).status).toBe(200);
  });

  test('pages that do not exist are 404 and are not kept', async () => {
    const g = await gallery();
    const r = await visit(t, `/profiles/${g.slug}/artworks/999999`);
    expect(r.status).toBe(404);
    expect(r.headers.etag).toBeUndefined();
    expect((await visit(t, `/profiles/${g.slug}?page=2`)).status).toBe(404);
    expect((await visit(t, `/profiles/${g.slug}?page=abc`)).status).toBe(404);
  });
});

describe('several processes on one database', () => {
  let db: FreshDatabase;
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    db = await freshDatabase();
    a = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }, db.url);
    b = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }, db.url);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  test("a write through one instance changes the other instance's cached page, feed and ETag", async () => {
    const g = await gallery(a);
    const page = `/profiles/${g.slug}`;
    const feed = `${page}/events.ics`;
    const cachedPage = await visit(b, page);
    const cachedFeed = await visit(b, feed);
    expect((await visit(b, page)).headers.etag).toBe(cachedPage.headers.etag);
    const kept = builds(b);

    expect((await g.api.post('/v1/artworks', { title: 'Written Through A' })).status).toBe(201);
    expect((await g.api.post('/v1/events', { title: 'Event Through A', start_date: '2027-02-02' })).status).toBe(201);

    const pageNow = await visit(b, page, { headers: { 'if-none-match': String(cachedPage.headers.etag) } });
    expect(pageNow.status).toBe(200);
    expect(pageNow.body).toContain('Written Through A');
    const feedNow = await visit(b, feed, { headers: { 'if-none-match': String(cachedFeed.headers.etag) } });
    expect(feedNow.status).toBe(200);
    expect(feedNow.body).toContain('Event Through A');
    expect(builds(b)).toBe(kept + 2);
    // Both instances name the same data with the same ETag.
    expect((await visit(a, page)).headers.etag).toBe(pageNow.headers.etag);
  });
});

describe('per-address rate limit on keyless routes', () => {
  test('the limit+1st request from one address gets 429 in the error shape with Retry-After; another address is not affected', async () => {
    const app = await startApp({ PUBLIC_RATE_LIMIT: '3' });
    try {
      const g = await gallery(app);
      for (let i = 0; i < 3; i++) expect((await visit(app, `/profiles/${g.slug}`, { remoteAddress: '10.0.0.1' })).status).toBe(200);
      const refused = await visit(app, '/robots.txt', { remoteAddress: '10.0.0.1' });
      expect(refused.status).toBe(429);
      const body = JSON.parse(refused.body);
      expect(body.error).toBe('rate_limited');
      expect(body.retry_after).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBe(body.retry_after);
      expect((await visit(app, `/profiles/${g.slug}`, { remoteAddress: '10.0.0.2' })).status).toBe(200);
      // X-Forwarded-For is not believed without TRUST_PROXY.
      expect((await visit(app, '/robots.txt', { remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': '192.0.2.9' } })).status).toBe(429);
      // The keyed API is not counted per address.
      expect((await g.api.get('/v1/me')).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  test('with TRUST_PROXY the client named by X-Forwarded-For is counted', async () => {
    const app = await startApp({ PUBLIC_RATE_LIMIT: '2', TRUST_PROXY: 'true' });
    try {
      const from = (client: string) => visit(app, '/robots.txt', { remoteAddress: '10.0.0.1', headers: { 'x-forwarded-for': client } });
      expect((await from('192.0.2.1')).status).toBe(200);
      expect((await from('192.0.2.1')).status).toBe(200);
      expect((await from('192.0.2.1')).status).toBe(429);
      expect((await from('192.0.2.2')).status).toBe(200);
    } finally {
      await app.close();
    }
  });
});

describe('HEAD and ids at the edges', () => {
  test('a HEAD for a record or page that does not exist is 404 without a build; one that exists is 200', async () => {
    const g = await gallery();
    const art = await g.api.post('/v1/artworks', { title: 'Headed' });
    const before = builds();
    expect((await visit(t, `/profiles/${g.slug}/artworks/${art.body.id}`, { method: 'HEAD' })).status).toBe(200);
    expect((await visit(t, `/profiles/${g.slug}/artworks/${art.body.id + 1000}`, { method: 'HEAD' })).status).toBe(404);
    expect((await visit(t, `/profiles/${g.slug}/events/nothing-here`, { method: 'HEAD' })).status).toBe(404);
    expect((await visit(t, `/profiles/${g.slug}?page=2`, { method: 'HEAD' })).status).toBe(404);
    expect((await visit(t, `/profiles/${g.slug}/sitemap.xml?part=2`, { method: 'HEAD' })).status).toBe(404);
    expect(builds()).toBe(before);
  });

  test('ids and page numbers beyond any stored integer are 404, never an error', async () => {
    const g = await gallery();
    for (const url of [`/profiles/${g.slug}/artworks/2147483648`, `/profiles/${g.slug}/artworks/99999999999999999999`, `/profiles/${g.slug}?page=99999999999`]) {
      expect((await visit(t, url)).status, url).toBe(404);
    }
    expect((await visit(t, `/profiles/${g.slug}/artworks/2147483647`)).status).toBe(404);
  });

  test('a 404 carries no ETag', async () => {
    const g = await gallery();
    const missing = await visit(t, `/profiles/${g.slug}/artworks/123456789`);
    expect(missing.status).toBe(404);
    expect(missing.headers.etag).toBeUndefined();
  });
});
