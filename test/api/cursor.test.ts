import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** The `after` cursor and the polling recipe (docs/api.md, Pagination and polling). */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '1000000' }); });
afterAll(async () => { await t.close(); });
afterEach(() => { vi.useRealTimers(); });

type Api = ReturnType<typeof client>;

async function gallery() {
  const g = await tenant(t);
  return { ...g, api: client(t, g.key) };
}

async function postArtworks(api: Api, count: number, prefix = 'Work') {
  const ids: number[] = [];
  for (let start = 0; start < count; start += 100) {
    const items = Array.from({ length: Math.min(100, count - start) }, (_, i) => ({ title: `${prefix} ${start + i}`, creation_year: 2000 }));
    const r = await api.post('/v1/artworks/batch', { items });
    ids.push(...r.body.results.map((x: { id: number }) => x.id));
  }
  return ids;
}

/** Follows `next_after` from `after=0` to the end; every page must be a valid list answer. */
async function walk(api: Api, path: string, key: string, limit: number, between?: () => Promise<void>) {
  const seen: number[] = [];
  let after = 0;
  for (;;) {
    const separator = path.includes('?') ? '&' : '?';
    const r = await api.get(`${path}${separator}after=${after}&limit=${limit}`);
    expect(r.status).toBe(200);
    const items = r.body[key] as Array<{ id: number }>;
    expect(r.body).not.toHaveProperty('page');
    expect(r.body.next_after).toBe(items.at(-1)?.id ?? null);
    seen.push(...items.map((item) => item.id));
    if (!r.body.has_more) {
      expect(r.headers.link).toBeUndefined();
      return seen;
    }
    expect(items).toHaveLength(limit);
    expect(r.headers.link).toMatch(new RegExp(`^<[^>]*after=${r.body.next_after}[^>]*>; rel="next"$`));
    after = r.body.next_after;
    await between?.();
  }
}

describe('artworks by cursor', () => {
  test('following next_after from after=0 yields the whole catalog in id order, once', async () => {
    const { api } = await gallery();
    const ids = await postArtworks(api, 45);
    expect(await walk(api, '/v1/artworks', 'artworks', 7)).toEqual(ids);
    const last = await api.get(`/v1/artworks?after=${ids.at(-1)}`);
    expect(last.body).toMatchObject({ artworks: [], total: 45, has_more: false, next_after: null });
  });

  test('the Link header names the next page of the same list, filters kept', async () => {
    const { api } = await gallery();
    await postArtworks(api, 5);
    const r = await api.get('/v1/artworks?limit=2&availability=sold');
    expect(r.headers.link).toBeUndefined();
    const all = await api.get('/v1/artworks?limit=2');
    expect(all.body).toMatchObject({ page: 1, has_more: true, next_after: all.body.artworks[1].id });
    expect(all.headers.link).toBe(`</v1/artworks?limit=2&after=${all.body.artworks[1].id}>; rel="next"`);
    const byPage = await api.get('/v1/artworks?limit=2&page=2');
    expect(byPage.headers.link).toBe('</v1/artworks?limit=2&page=3>; rel="next"');
  });

  test('an availability filter pages by cursor over that availability only', async () => {
    const { api } = await gallery();
    const ids = await postArtworks(api, 30);
    const sold = ids.filter((_, i) => i % 3 === 0);
    for (const id of sold) await api.put(`/v1/artworks/${id}`, { availability: 'sold' });
    expect(await walk(api, '/v1/artworks?availability=sold', 'artworks', 4)).toEqual(sold);
  });

  test('a scan during concurrent deletions and insertions sees every artwork that exists throughout exactly once', async () => {
    const { api } = await gallery();
    const ids = await postArtworks(api, 300);
    const deleted = new Set<number>();
    let round = 0;
    const seen = await walk(api, '/v1/artworks', 'artworks', 10, async () => {
      round++;
      // Delete one seen and one not yet seen artwork, insert two new ones, between every two pages.
      for (const id of [ids[round * 10 - 5], ids[Math.min(ids.length - 1, round * 10 + 25)]]) {
        if (id !== undefined && !deleted.has(id)) {
          expect((await api.delete(`/v1/artworks/${id}`)).status).toBe(200);
          deleted.add(id);
        }
      }
      await postArtworks(api, 2, `Added ${round}`);
    });
    expect(new Set(seen).size).toBe(seen.length);
    const throughout = ids.filter((id) => !deleted.has(id));
    expect(throughout.filter((id) => !seen.includes(id))).toEqual([]);
  });

  test.each([
    ['/v1/artworks?after=3&page=2', 'after'],
    ['/v1/artworks?after=-1', 'after'],
    ['/v1/artworks?after=abc', 'after'],
    ['/v1/artworks?after=1.5', 'after'],
    ['/v1/events?after=1&page=1', 'after'],
    ['/v1/events?after=1&upcoming=true', 'after'],
    ['/v1/events?after=1&past=1', 'after'],
    ['/v1/changelog?after=1&page=3', 'after'],
  ])('%s gets 400 naming %s', async (url, field) => {
    const { api } = await gallery();
    const r = await api.get(url);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
  });
});

describe('events by cursor', () => {
  test('following next_after walks every event in id order; date-ordered lists page by number', async () => {
    const { api } = await gallery();
    const ids: number[] = [];
    for (let i = 0; i < 13; i++) ids.push((await api.post('/v1/events', { title: `Show ${i}`, start_date: `2090-01-${String(i + 10).padStart(2, '0')}` })).body.id);
    expect(await walk(api, '/v1/events', 'events', 5)).toEqual(ids);
    const upcoming = await api.get('/v1/events?upcoming=true&limit=5');
    expect(upcoming.body).toMatchObject({ page: 1, total: 13, has_more: true, next_after: upcoming.body.events[4].id });
    expect(upcoming.headers.link).toBe('</v1/events?upcoming=true&limit=5&page=2>; rel="next"');
    const third = await api.get('/v1/events?upcoming=true&limit=5&page=3');
    expect(third.body).toMatchObject({ has_more: false });
    expect(third.body.events).toHaveLength(3);
  });
});

describe('changelog polling (docs/api.md, Pagination and polling)', () => {
  test('1,000 entries sharing one millisecond reach a cursor poller exactly once, while new writes keep arriving', async () => {
    const { api } = await gallery();
    await api.post('/v1/artworks', { title: 'Before the poll' });
    const since = new Date(Date.now() + 1000).toISOString().replace(/\.\d+Z$/, '.000Z');
    // Every write from here on is stamped with the same millisecond, just after `since`.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date(Date.parse(since) + 1) });
    await postArtworks(api, 1000, 'Same ms');

    const received: number[] = [];
    let first = await api.get(`/v1/changelog?since=${since}&limit=7`);
    expect(first.body.changes.every((c: { created_at: string }) => c.created_at === new Date(Date.parse(since) + 1).toISOString())).toBe(true);
    received.push(...first.body.changes.map((c: { id: number }) => c.id));
    let after: number = first.body.next_after;
    for (let poll = 0; first.body.has_more || poll < 3; poll++) {
      // Writes interleave with the poll, in the same millisecond.
      if (poll % 20 === 0 && poll <= 100) await postArtworks(api, 10, `During ${poll}`);
      first = await api.get(`/v1/changelog?since=${since}&after=${after}&limit=${7 + (poll % 5)}`);
      expect(first.status).toBe(200);
      received.push(...first.body.changes.map((c: { id: number }) => c.id));
      after = first.body.next_after ?? after;
    }
    const all = await api.get(`/v1/changelog?since=${since}&limit=1000`);
    expect(all.body.total).toBe(1000 + 6 * 10);
    expect(new Set(received).size).toBe(received.length);
    expect(received.length).toBe(all.body.total);
    expect(received).toEqual([...received].sort((a, b) => a - b));
  });

  test('since and after combine: entries after both bounds, in id order', async () => {
    const { api } = await gallery();
    const start = new Date().toISOString();
    // `since` is exclusive: a write in the same millisecond as `start` would not count.
    await new Promise((resolve) => setTimeout(resolve, 2));
    await postArtworks(api, 20);
    const page = await api.get(`/v1/changelog?since=${start}&limit=5`);
    const rest = await api.get(`/v1/changelog?since=${start}&after=${page.body.next_after}&limit=1000`);
    expect(rest.body.changes.map((c: { id: number }) => c.id)).toEqual(
      (await api.get(`/v1/changelog?since=${start}&limit=1000`)).body.changes.slice(5).map((c: { id: number }) => c.id),
    );
    expect(rest.body).toMatchObject({ total: 20, has_more: false });
  });
});
