import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, tenant, type TestApp } from '../helpers.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { closeFeeds, startFeeds } from '../support/feeds.js';

/** Feed runs as jobs of the app's one queue (src/feeds/job.ts): queued by the API, run by the runner, the next one scheduled. */

let t: TestApp;
let files: FileServer;
let api: ReturnType<typeof client>;

// Runs are made by the app's job runner, one at a time.
beforeAll(async () => ({ t, files, api } = await startFeeds('1')));
afterAll(() => closeFeeds({ t, files }));

test('a feed added through the API is run by the job queue at once, and its next run is scheduled an interval later', async () => {
  files.set('/queue.csv', csv('title;external_id', 'Queued Work;Q-1'));
  const created = await api.post('/v1/feeds', { url: files.url('/queue.csv'), kind: 'artworks', interval_minutes: 15 });
  expect(created.status).toBe(201);
  const feed = await lastRunOf(api, created.body.id, 'applied');
  expect(feed.last_run.counts).toMatchObject({ created: 1 });
  expect(Date.parse(feed.next_run_at) - Date.parse(feed.last_run.finished_at)).toBe(15 * 60_000);
  expect((await api.get('/v1/artworks')).body.artworks.map((a: { title: string }) => a.title)).toEqual(['Queued Work']);
});

test('Run now is run by the job queue; the same file again is unchanged', async () => {
  const [feed] = (await api.get('/v1/feeds')).body.feeds;
  const queued = await api.post(`/v1/feeds/${feed.id}/runs`, {});
  expect(queued.status).toBe(202);
  const after = await lastRunOf(api, feed.id, 'unchanged');
  expect(after.last_run.id).toBe(queued.body.id);
  expect((await api.get(`/v1/feeds/${feed.id}/runs`)).body.runs).toHaveLength(2);
});

test('a deleted feed leaves no job behind', async () => {
  const [feed] = (await api.get('/v1/feeds')).body.feeds;
  expect((await api.delete(`/v1/feeds/${feed.id}`)).status).toBe(204);
  const { jobsLeft } = await import('../../src/store/jobs.js');
  expect(await jobsLeft(t.handle.db, 'feed_run')).toBe(0);
});

test('round-robin between entities: a gallery\'s 10 due feeds on a slow server do not starve another gallery\'s one feed', async () => {
  // Every answer takes 400 ms: A's 10 runs take 4 s or more at FEED_CONCURRENCY=1. What is asserted is
  // the order the runs fetched their files in, not a time.
  const slow = await fileServer({ delayMs: 400 });
  for (const id of [...Array.from({ length: 10 }, (_, i) => `a${i}`), 'b']) slow.set(`/${id}.csv`, csv('title;external_id', `Slow ${id};${id}`));
  const fetched = () => slow.requests.map((r) => r.path);
  try {
    const a = client(t, (await tenant(t, { name: 'Many Feeds' })).key);
    const b = client(t, (await tenant(t, { name: 'One Feed' })).key);
    // Created paused (a feed created running reads its file at once: docs/api.md, Feeds), then resumed: A's 10 runs are due together.
    const aFeeds: number[] = [];
    for (let i = 0; i < 10; i++) {
      const created = await a.post('/v1/feeds', { url: slow.url(`/a${i}.csv`), kind: 'artworks', interval_minutes: 1440, paused: true });
      expect(created.status).toBe(201);
      aFeeds.push(created.body.id);
    }
    const created = await b.post('/v1/feeds', { url: slow.url('/b.csv'), kind: 'artworks', interval_minutes: 1440, paused: true });
    expect(created.status).toBe(201);
    // Resumed, each is due an interval later; made due now together.
    const dueNow = async (ids: number[]) => {
      for (const id of ids) await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${id}`}`.execute(t.handle.db);
      t.app.jobs.nudge('feed_run');
    };
    for (const id of aFeeds) expect((await a.put(`/v1/feeds/${id}`, { paused: false })).status).toBe(200);
    expect((await b.put(`/v1/feeds/${created.body.id}`, { paused: false })).status).toBe(200);
    await dueNow(aFeeds);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A's runs already fetched when B is due: the one in progress (and, at most, one taken just before).
    const aFetchedBefore = fetched().length;
    await dueNow([created.body.id]);
    const bRun = (await lastRunOf(b, created.body.id, 'applied')).last_run;
    const aRuns = [];
    for (const id of aFeeds) aRuns.push((await lastRunOf(a, id, 'applied')).last_run);

    const aBeforeB = fetched().indexOf('/b.csv');
    expect(aBeforeB).toBeLessThanOrEqual(aFetchedBefore + 1);
    expect(aBeforeB).toBeLessThan(10);
    // The runs' own record says the same: B's run started before A's later runs did.
    const aStartedAfterB = aRuns.filter((run) => Date.parse(run.started_at) > Date.parse(bRun.started_at));
    expect(aStartedAfterB.length).toBe(10 - aBeforeB);
  } finally {
    await slow.close();
  }
}, 60_000);

async function lastRunOf(caller: ReturnType<typeof client>, feedId: number, status: string) {
  for (let i = 0; i < 300; i++) {
    const feed = (await caller.get(`/v1/feeds/${feedId}`)).body;
    if (feed.last_run?.status === status) return feed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`feed ${feedId} did not reach ${status}`);
}
