import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';

/**
 * IMAGE_FETCH_ALLOW_PRIVATE opens images only (docs/operations.md, Configuration): feeds and webhooks
 * stay closed to private addresses unless FETCH_ALLOW_PRIVATE=true, through the API, the console and a run.
 */

let t: TestApp;
let files: FileServer;
let base: string;
beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ IMAGE_FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '1', WEBHOOK_CONCURRENCY: '0' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
  await files?.close();
});

test('with IMAGE_FETCH_ALLOW_PRIVATE alone, a feed or an endpoint on a private address is refused and nothing is fetched', async () => {
  files.set('/internal.csv', csv('Title;Artist', 'Internal;Service'));
  const g = await tenant(t);
  const api = client(t, g.key);
  const hook = await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['webhook.test'] });
  expect([hook.status, JSON.stringify(hook.body)]).toEqual([400, expect.stringContaining('https')]);
  const local = await api.post('/v1/webhooks', { url: 'https://127.0.0.1:9/hook', events: ['webhook.test'] });
  expect([local.status, JSON.stringify(local.body)]).toEqual([400, expect.stringContaining('address not allowed')]);

  const feed = await api.post('/v1/feeds', { url: files.url('/internal.csv'), kind: 'artworks' });
  expect(feed.status).toBe(201);
  let run: { status: string; error: string | null } | undefined;
  for (const started = Date.now(); Date.now() - started < 15_000; await new Promise((r) => setTimeout(r, 50))) {
    run = (await api.get(`/v1/feeds/${feed.body.id}`)).body.last_run;
    if (run && !['queued', 'running'].includes(run.status)) break;
  }
  expect(run).toMatchObject({ status: 'failed', error: 'address not allowed: a private or local address (FETCH_ALLOW_PRIVATE=true allows it in development)' });

  const editor = await signedIn(t, base, g.entityId, 'editor');
  await editor.get('/console/feeds');
  const connected = await editor.post('/console/feeds/connect', { url: files.url('/internal.csv'), kind: 'artworks' });
  expect(connected.status).toBe(400);
  expect(connected.text).toContain('address not allowed');
  const owner = await signedIn(t, base, g.entityId, 'owner');
  await owner.get('/console/webhooks');
  expect((await owner.post('/console/webhooks', { url: 'http://127.0.0.1:9/hook', events: 'webhook.test' })).status).toBe(400);
  expect(files.requests.filter((r) => r.path === '/internal.csv')).toEqual([]);
});
