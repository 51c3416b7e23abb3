import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

test('GET /metrics needs no key and counts requests by route pattern and status, never by raw id', async () => {
  const g = await tenant(t);
  const api = client(t, g.key);
  await api.get('/v1/artworks/12345');
  await api.get('/v1/artworks/67890');
  await client(t).get('/v1/artworks');
  const metrics = await client(t).get('/metrics');
  expect(metrics.status).toBe(200);
  expect(String(metrics.headers['content-type'])).toMatch(/^text\/plain/);
  const text = metrics.body as string;
  expect(text).toMatch(/art_catalog_http_request_duration_seconds_count\{method="GET",route="\/v1\/artworks\/:id",status_code="404"\} 2/);
  expect(text).toMatch(/art_catalog_http_request_duration_seconds_count\{method="GET",route="\/v1\/artworks",status_code="401"\} 1/);
  expect(text).not.toContain('12345');
  expect(text).toContain('art_catalog_process_resident_memory_bytes');
});

test('replayed idempotent answers are counted', async () => {
  const g = await tenant(t);
  const api = client(t, g.key);
  for (let i = 0; i < 3; i++) await api.post('/v1/artworks', { title: 'Counted Replay' }, { 'idempotency-key': 'metrics-1' });
  const text = (await client(t).get('/metrics')).body as string;
  expect(text).toMatch(/art_catalog_idempotent_replays_total 2/);
});

test('with METRICS_TOKEN set, GET /metrics answers 401 without the token or with a wrong one and 200 with it', async () => {
  const guarded = await startApp({ METRICS_TOKEN: 's3cret-metrics-token' });
  try {
    for (const authorization of [undefined, 'Bearer wrong', 'Bearer s3cret-metrics-token-and-more', 'Basic czNjcmV0', 's3cret-metrics-token']) {
      const refused = await client(guarded).get('/metrics', authorization ? { authorization } : {});
      expect(refused.status, authorization).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(refused.body).toEqual({ error: 'unauthorized', message: expect.stringContaining('METRICS_TOKEN') });
    }
    const allowed = await client(guarded).get('/metrics', { authorization: 'Bearer s3cret-metrics-token' });
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('art_catalog_http_request_duration_seconds');
    // The refusals were still counted, under the route's pattern.
    expect(allowed.body).toMatch(/route="\/metrics",status_code="401"\} 5/);
    // The token guards /metrics only: the health check stays open.
    expect((await client(guarded).get('/healthz')).status).toBe(200);
  } finally {
    await guarded.close();
  }
});
