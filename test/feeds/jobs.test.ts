import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';

/** Feed runs as jobs of the app's one queue (src/feeds/job.ts): queued by the API, run by the runner, the next one scheduled. */

let t: TestApp;
let files: FileServer;
let gallery: Tenant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '1' });
  gallery = await tenant(t);
  api = client(t, gallery.key);
});
afterAll(async () => {
  await t?.close();
  await files?.close();
});

async function lastRunOf(feedId: number, status: string) {
  for (let i = 0; i < 300; i++) {
    const feed = (await api.get(`/v1/feeds/${feedId}`)).body;
    if (feed.last_run?.status === status) return feed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`feed ${feedId} did not reach ${status}`);
}

test('a feed added through the API is run by the job queue at once, and its next run is scheduled an interval later', async () => {
  files.set('/queue.csv', csv('title;external_id', 'Queued Work;Q-1'));
  const created = await api.post('/v1/feeds', { url: files.url('/queue.csv'), kind: 'artworks', interval_minutes: 15 });
  expect(created.status).toBe(201);
  const feed = await lastRunOf(created.body.id, 'applied');
  expect(feed.last_run.counts).toMatchObject({ created: 1 });
  expect(Date.parse(feed.next_run_at) - Date.parse(feed.last_run.finished_at)).toBe(15 * 60_000);
  expect((await api.get('/v1/artworks')).body.artworks.map((a: { title: string }) => a.title)).toEqual(['Queued Work']);
});

test('Run now is run by the job queue; the same file again is unchanged', async () => {
  const [feed] = (await api.get('/v1/feeds')).body.feeds;
  const queued = await api.post(`/v1/feeds/${feed.id}/runs`, {});
  expect(queued.status).toBe(202);
  const after = await lastRunOf(feed.id, 'unchanged');
  expect(after.last_run.id).toBe(queued.body.id);
  expect((await api.get(`/v1/feeds/${feed.id}/runs`)).body.runs).toHaveLength(2);
});

test('a deleted feed leaves no job behind', async () => {
  const [feed] = (await api.get('/v1/feeds')).body.feeds;
  expect((await api.delete(`/v1/feeds/${feed.id}`)).status).toBe(204);
  const { jobsLeft } = await import('../../src/store/jobs.js');
  expect(await jobsLeft(t.handle.db, 'feed-run')).toBe(0);
});
