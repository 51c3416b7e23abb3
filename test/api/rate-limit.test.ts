import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { generateKey } from '../../src/domain/keys.js';
import { client, keyFor, startApp, tenant, type Reply, type TestApp } from '../helpers.js';

/** Fixed-window rate limits per key (docs/api.md, Authentication; docs/api.md, Rate limits). */

// Long enough that 35 concurrent requests on a loaded machine land in one window, short enough to await its end.
const WINDOW_S = 6;
const LIMITS = { free: 3, subscriber: 5, partner: 7 } as const;

/** The app with the default limits (free: 30) and a short window, so a reset can be awaited. */
let defaults: TestApp;
/** The app with small per-tier limits and a long window, so no window ends during a test. */
let small: TestApp;

beforeAll(async () => {
  [defaults, small] = await Promise.all([
    startApp({ RATE_LIMIT_WINDOW_S: String(WINDOW_S) }),
    startApp({
      RATE_LIMIT_FREE: String(LIMITS.free), RATE_LIMIT_SUBSCRIBER: String(LIMITS.subscriber),
      RATE_LIMIT_PARTNER: String(LIMITS.partner), RATE_LIMIT_WINDOW_S: '600',
    }),
  ]);
});
afterAll(async () => { await Promise.all([defaults?.close(), small?.close()]); });

const num = (r: Reply, name: string) => Number(r.headers[name]);
const remainingOf = (r: Reply) => num(r, 'x-ratelimit-remaining');
const resetOf = (r: Reply) => num(r, 'x-ratelimit-reset');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the Unix second the server announced in X-RateLimit-Reset has passed. */
async function untilReset(resetS: number): Promise<void> {
  const ms = resetS * 1000 - Date.now();
  if (ms > 0) await sleep(ms + 20);
  expect(Date.now()).toBeGreaterThanOrEqual(resetS * 1000);
}

function expectRateLimitHeaders(r: Reply, limit: number, remaining: number): void {
  expect(r.headers['x-ratelimit-limit']).toBe(String(limit));
  expect(r.headers['x-ratelimit-remaining']).toBe(String(remaining));
  expect(r.headers['x-ratelimit-reset']).toMatch(/^\d+$/);
}

describe('a free key under the default limit of 30 per window', () => {
  test('of 35 concurrent requests exactly 30 answer 200 and 5 answer 429 with retry_after, Retry-After and the rate-limit headers', async () => {
    const g = await tenant(defaults, { tier: 'free' });
    const api = client(defaults, g.key);
    const startedS = Date.now() / 1000;
    const replies = await Promise.all(Array.from({ length: 35 }, () => api.get('/v1/artworks')));
    const nowS = Date.now() / 1000;

    const ok = replies.filter((r) => r.status === 200);
    const limited = replies.filter((r) => r.status === 429);
    expect(ok).toHaveLength(30);
    expect(limited).toHaveLength(5);

    // Every answer names the limit and the same window end, a Unix second in the future.
    const resets = new Set(replies.map(resetOf));
    expect(resets.size).toBe(1);
    const [reset] = [...resets] as [number];
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThan(nowS);
    expect(reset).toBeLessThanOrEqual(Math.ceil(startedS) + WINDOW_S + 1);
    for (const r of replies) expect(r.headers['x-ratelimit-limit']).toBe('30');

    // The 200s count down: each remaining value 0..29 exactly once.
    expect(ok.map(remainingOf).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    for (const r of ok) expect(Array.isArray(r.body.artworks)).toBe(true);

    for (const r of limited) {
      expect(r.body.error).toBe('rate_limited');
      expect(typeof r.body.message).toBe('string');
      expect(r.body.message.length).toBeGreaterThan(0);
      expect(Object.keys(r.body).sort()).toEqual(['error', 'message', 'retry_after']);
      expect(Number.isInteger(r.body.retry_after)).toBe(true);
      expect(r.body.retry_after).toBeGreaterThanOrEqual(1);
      expect(r.body.retry_after).toBeLessThanOrEqual(WINDOW_S);
      expect(r.headers['retry-after']).toBe(String(r.body.retry_after));
      expect(r.headers['x-ratelimit-remaining']).toBe('0');
    }
  });

  test('after the announced reset time the key gets 200 again with X-RateLimit-Remaining 29 and a later reset', async () => {
    const g = await tenant(defaults, { tier: 'free' });
    const api = client(defaults, g.key);
    const replies = await Promise.all(Array.from({ length: 31 }, () => api.get('/v1/artworks')));
    const refused = replies.filter((r) => r.status === 429);
    expect(refused).toHaveLength(1);
    const before = resetOf(refused[0]!);

    // Still inside the window: refused.
    expect((await api.get('/v1/artworks')).status).toBe(429);

    await untilReset(before);
    const after = await api.get('/v1/artworks');
    expect(after.status).toBe(200);
    expectRateLimitHeaders(after, 30, 29);
    expect(resetOf(after)).toBeGreaterThan(before);
    expect(resetOf(after)).toBeGreaterThan(Date.now() / 1000);

    const next = await api.get('/v1/artworks');
    expect(next.status).toBe(200);
    expectRateLimitHeaders(next, 30, 28);
    expect(resetOf(next)).toBe(resetOf(after));
  });
});

describe('limits per tier', () => {
  test('RATE_LIMIT_FREE, RATE_LIMIT_SUBSCRIBER and RATE_LIMIT_PARTNER set each tier\'s X-RateLimit-Limit, and the request after the limit gets 429', async () => {
    for (const tier of ['free', 'subscriber', 'partner'] as const) {
      const limit = LIMITS[tier];
      const g = await tenant(small, { tier });
      const api = client(small, g.key);
      for (let i = 1; i <= limit; i++) {
        const r = await api.get('/v1/artworks');
        expect(r.status, `${tier} request ${i}`).toBe(200);
        expectRateLimitHeaders(r, limit, limit - i);
      }
      const over = await api.get('/v1/artworks');
      expect(over.status, tier).toBe(429);
      expect(over.body.error).toBe('rate_limited');
      expectRateLimitHeaders(over, limit, 0);
    }
  });

  test('GET /v1/me reports the same limit, remaining and reset as the headers of its answer', async () => {
    const g = await tenant(small, { tier: 'partner' });
    const api = client(small, g.key);
    await api.get('/v1/artworks');
    const me = await api.get('/v1/me');
    expect(me.status).toBe(200);
    expect(me.body.rate_limit).toEqual({ limit: LIMITS.partner, remaining: LIMITS.partner - 2, reset: resetOf(me) });
    expectRateLimitHeaders(me, LIMITS.partner, LIMITS.partner - 2);
  });
});

describe('what counts', () => {
  test('refused requests (403 missing scope, 400 invalid body, 404 unknown record) count against the limit', async () => {
    const g = await tenant(small, { tier: 'subscriber', scopes: ['artworks:read', 'artworks:write'] });
    const api = client(small, g.key);

    const noScope = await api.get('/v1/events');
    expect(noScope.status).toBe(403);
    expect(noScope.body.error).toBe('forbidden');
    expectRateLimitHeaders(noScope, LIMITS.subscriber, 4);

    const invalid = await api.post('/v1/artworks', { price: 'ten' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toBe('bad_request');
    expectRateLimitHeaders(invalid, LIMITS.subscriber, 3);

    const missing = await api.get('/v1/artworks/999999');
    expect(missing.status).toBe(404);
    expectRateLimitHeaders(missing, LIMITS.subscriber, 2);

    expect((await api.get('/v1/artworks')).status).toBe(200);
    const last = await api.get('/v1/artworks');
    expect(last.status).toBe(200);
    expectRateLimitHeaders(last, LIMITS.subscriber, 0);
    expect((await api.get('/v1/artworks')).status).toBe(429);
  });

  test('once the limit is reached the rate limit is checked before the scope: a request lacking its scope gets 429, not 403', async () => {
    const g = await tenant(small, { tier: 'free' });
    const api = client(small, g.key);
    for (let i = 0; i < LIMITS.free; i++) expect((await api.get('/v1/artworks')).status).toBe(200);
    const write = await api.post('/v1/artworks', { title: 'Not Allowed' });
    expect(write.status).toBe(429);
    expect(write.body.error).toBe('rate_limited');
    expect(write.headers['retry-after']).toMatch(/^\d+$/);
  });

  test('each key has its own window: exhausting one key leaves another key of the same entity and a key of another entity untouched', async () => {
    const a = await tenant(small, { tier: 'free' });
    const sibling = await keyFor(small, a.entityId, { tier: 'free' });
    const other = await tenant(small, { tier: 'free' });
    const apiA = client(small, a.key);
    for (let i = 0; i < LIMITS.free; i++) expect((await apiA.get('/v1/artworks')).status).toBe(200);
    expect((await apiA.get('/v1/artworks')).status).toBe(429);

    const s = await client(small, sibling.key).get('/v1/artworks');
    expect(s.status).toBe(200);
    expectRateLimitHeaders(s, LIMITS.free, LIMITS.free - 1);

    const o = await client(small, other.key).get('/v1/artworks');
    expect(o.status).toBe(200);
    expectRateLimitHeaders(o, LIMITS.free, LIMITS.free - 1);

    // The first key stays refused.
    expect((await apiA.get('/v1/artworks')).status).toBe(429);
  });

  test('a batch POST of many items counts as one request', async () => {
    const g = await tenant(small, { tier: 'subscriber' });
    const api = client(small, g.key);
    const items = Array.from({ length: 20 }, (_, i) => ({ title: `Batch Counted ${i}` }));
    const batch = await api.post('/v1/artworks/batch', { items });
    expect(batch.status).toBe(200);
    expect(batch.body.results).toHaveLength(20);
    expect(batch.body.results.every((r: { status: number }) => r.status === 201)).toBe(true);
    expectRateLimitHeaders(batch, LIMITS.subscriber, LIMITS.subscriber - 1);

    const events = await api.post('/v1/events/batch', { items: [{ title: 'Counted A' }, { title: 'Counted B' }, { title: 'Counted C' }] });
    expect(events.status).toBe(200);
    expectRateLimitHeaders(events, LIMITS.subscriber, LIMITS.subscriber - 2);

    const list = await api.get('/v1/artworks');
    expect(list.body.total).toBe(20);
    expectRateLimitHeaders(list, LIMITS.subscriber, LIMITS.subscriber - 3);
  });

  test('unauthenticated requests (401) carry no rate-limit headers and do not use up a key\'s window', async () => {
    const g = await tenant(small, { tier: 'free' });
    const authorizations: (string | undefined)[] = [undefined, 'Bearer nonsense', `Bearer ${generateKey()}`, `Basic ${g.key}`];
    for (const authorization of authorizations) {
      const response = await small.app.inject({ method: 'GET', url: '/v1/artworks', headers: authorization ? { authorization } : {} });
      expect(response.statusCode, String(authorization)).toBe(401);
      expect(JSON.parse(response.body).error).toBe('unauthorized');
      for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after']) {
        expect(response.headers[name], `${String(authorization)} ${name}`).toBeUndefined();
      }
    }
    const first = await client(small, g.key).get('/v1/artworks');
    expect(first.status).toBe(200);
    expectRateLimitHeaders(first, LIMITS.free, LIMITS.free - 1);
  });
});
