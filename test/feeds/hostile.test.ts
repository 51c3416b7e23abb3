import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, keyFor, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { closeFeeds, startFeeds } from '../support/feeds.js';

/** Feeds against a hostile file or caller (docs/api.md, Feeds), on both dialects, reading files from a local server. */

let t: TestApp;
let files: FileServer;
let gallery: Tenant;
let api: ReturnType<typeof client>;

// Runs are driven by the test (runFeed, as the feed's job does), not by the app's job runner.
beforeAll(async () => ({ t, files, gallery, api } = await startFeeds()));
afterAll(() => closeFeeds({ t, files }));

const allowAll = feedFetcher(() => true);

let base: string | undefined;
/** The app listening for the console's pages (once per file). */
const listening = async () => (base ??= await t.app.listen({ port: 0, host: '127.0.0.1' }));

async function runNow(feedId: number) {
  await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db);
  await runFeed({ db: t.handle.db, fetch: allowAll }, feedId);
  return (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs[0];
}

describe('a run\'s problems', () => {
  test('quote at most 100 characters of a cell, and a run keeps at most 100 of them', async () => {
    const huge = `€ ${'1'.repeat(100_145)}`;
    const rows = [`H1;Huge;Ada Berg;${huge}`, ...Array.from({ length: 150 }, (_, i) => `P${i};Piece ${i};Ada Berg;€ 1.200,50`)];
    files.set('/problems.csv', csv('Inventory No.;Title;Artist;Price', ...rows));
    const created = await api.post('/v1/feeds', { url: files.url('/problems.csv'), kind: 'artworks', mapping: { 'Inventory No.': 'external_id', Artist: 'artist_name' } });
    expect(created.status).toBe(201);
    const run = await runNow(created.body.id);
    expect(run).toMatchObject({ status: 'applied', counts: { rows: 151, refused: 151 } });
    expect(run.problems).toHaveLength(100);
    const first = run.problems[0];
    expect(first).toMatchObject({ line: 2, column: 'Price' });
    expect(first.message).toContain(`"€ ${'1'.repeat(98)}…"`);
    for (const problem of run.problems) expect(problem.message.length).toBeLessThan(400);
    expect(JSON.stringify(run).length).toBeLessThan(40_000);
  });
});

describe('Pause and Resume', () => {
  const feedJobDue = async (feedId: number) => (await sql<{ due_at: string }>`select due_at from jobs where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db)).rows[0]!.due_at;
  const runsOf = async (feedId: number) => (await api.get(`/v1/feeds/${feedId}/runs?limit=100`)).body.runs as { id: number }[];

  test('do not start a run, through the API or the console: the next run is one interval from the resume; Run now stays once a minute', async () => {
    files.set('/paused.csv', csv('Inventory No.;Title;Artist', 'Q1;Quiet;Ada Berg'));
    const created = await api.post('/v1/feeds', { url: files.url('/paused.csv'), kind: 'artworks', interval_minutes: 60 });
    const id = created.body.id;
    // The file is read once at creation, its mapping stored (docs/api.md, Feeds); what follows counts the runs' reads.
    const readAtCreation = files.requests.filter((r) => r.path === '/paused.csv').length;
    await runFeed({ db: t.handle.db, fetch: allowAll }, id);
    expect((await api.post(`/v1/feeds/${id}/runs`, {})).status).toBe(202);
    await runFeed({ db: t.handle.db, fetch: allowAll }, id);
    const before = (await runsOf(id)).length;

    for (let round = 0; round < 3; round++) {
      expect((await api.put(`/v1/feeds/${id}`, { paused: true })).status).toBe(200);
      const resumedAt = Date.now();
      const resumed = await api.put(`/v1/feeds/${id}`, { paused: false });
      expect(resumed.status).toBe(200);
      expect(Date.parse(resumed.body.next_run_at) - resumedAt).toBeGreaterThan(59 * 60_000);
      // The feed's job, the one schedule, is not due before then: nothing runs.
      expect(Date.parse(await feedJobDue(id)) - resumedAt).toBeGreaterThan(59 * 60_000);
    }
    expect(await runsOf(id)).toHaveLength(before);
    const now = await api.post(`/v1/feeds/${id}/runs`, {});
    expect(now.status).toBe(429);

    const editor = await signedIn(t, await listening(), gallery.entityId, 'editor');
    expect((await editor.post(`/console/feeds/${id}/pause`)).location).toBe('/console/feeds?done=paused');
    const consoleResumedAt = Date.now();
    expect((await editor.post(`/console/feeds/${id}/pause`)).location).toBe('/console/feeds?done=resumed');
    expect(Date.parse(await feedJobDue(id)) - consoleResumedAt).toBeGreaterThan(59 * 60_000);
    expect(await runsOf(id)).toHaveLength(before);
    expect((await editor.post(`/console/feeds/${id}/run`)).status).toBe(429);
    expect(files.requests.filter((r) => r.path === '/paused.csv')).toHaveLength(readAtCreation + 2);
  });
});

describe('a feed URL', () => {
  test('with a user name or password is refused with 400 (API create and change, console Connect), and nothing is fetched', async () => {
    files.set('/private.csv', csv('Title;Artist', 'Secret;Ada Berg'));
    const fetchedBefore = files.requests.length;
    const withCredentials = files.url('/private.csv').replace('http://', 'http://reader:hunter2@');
    const refused = await api.post('/v1/feeds', { url: withCredentials, kind: 'artworks' });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('must not hold a user name or password');
    expect((await api.post('/v1/feeds', { url: files.url('/private.csv').replace('http://', 'http://reader@'), kind: 'artworks' })).status).toBe(400);
    const feed = await api.post('/v1/feeds', { url: files.url('/private.csv'), kind: 'artworks', paused: true });
    expect(feed.status).toBe(201);
    expect((await api.put(`/v1/feeds/${feed.body.id}`, { url: withCredentials })).status).toBe(400);
    expect((await api.get(`/v1/feeds/${feed.body.id}`)).body.url).toBe(files.url('/private.csv'));

    const editor = await signedIn(t, await listening(), gallery.entityId, 'editor');
    await editor.get('/console/feeds');
    const page = await editor.post('/console/feeds/connect', { url: withCredentials, kind: 'artworks' });
    expect(page.status).toBe(400);
    expect(page.text).toContain('must not hold a user name or password');
    expect(page.text).not.toContain('hunter2');
    expect(files.requests.length).toBe(fetchedBefore);
  });

  test('shows its query string as ?… to keys without the kind\'s write scope and to console viewers', async () => {
    const g = await tenant(t);
    const writer = client(t, g.key);
    const reader = client(t, (await keyFor(t, g.entityId, { scopes: ['artworks:read', 'events:write'] })).key);
    const url = `${files.url('/gone.csv')}?token=s3cr3t-t0ken&format=csv`;
    const created = await writer.post('/v1/feeds', { url, kind: 'artworks' });
    expect(created.status).toBe(201);
    expect(created.body.url).toBe(url);
    const masked = `${files.url('/gone.csv')}?…`;
    expect((await reader.get(`/v1/feeds/${created.body.id}`)).body.url).toBe(masked);
    expect((await reader.get('/v1/feeds')).body.feeds.map((f: { url: string }) => f.url)).toEqual([masked]);
    expect((await writer.get(`/v1/feeds/${created.body.id}`)).body.url).toBe(url);
    expect((await writer.get('/v1/feeds')).body.feeds.map((f: { url: string }) => f.url)).toEqual([url]);

    // A failed run puts the feed on the Overview: a viewer sees it without its token, an editor whole.
    await runFeed({ db: t.handle.db, fetch: allowAll }, created.body.id);
    const base = await listening();
    const viewer = await signedIn(t, base, g.entityId, 'viewer');
    const overview = await viewer.get('/console');
    expect(overview.text).toContain('Feeds that need you');
    expect(overview.text).toContain(`${files.url('/gone.csv')}?…`);
    expect(overview.text).not.toContain('s3cr3t-t0ken');
    const editor = await signedIn(t, base, g.entityId, 'editor');
    expect((await editor.get('/console')).text).toContain('s3cr3t-t0ken');
    const feedsPage = await editor.get('/console/feeds');
    expect(feedsPage.status, feedsPage.text.slice(0, 3000)).toBe(200);
    expect(feedsPage.text).toContain('s3cr3t-t0ken');
  });
});

describe('fetching a file for the console', () => {
  test('takes one of the gallery\'s two import slots before it starts: a third Connect or Edit mapping at once is 429 with Retry-After, and is not fetched', async () => {
    const slow = await fileServer({ delayMs: 1500 });
    try {
      slow.set('/slow.csv', csv('Title;Artist', 'Slow;Ada Berg'));
      const g = await tenant(t);
      const base_ = await listening();
      const sessions = await Promise.all([1, 2, 3, 4].map(() => signedIn(t, base_, g.entityId, 'editor')));
      for (const s of sessions) await s.get('/console/feeds');
      const feed = await client(t, g.key).post('/v1/feeds', { url: slow.url('/slow.csv'), kind: 'artworks', paused: true });
      const answers = await Promise.all([
        sessions[0]!.post('/console/feeds/connect', { url: slow.url('/slow.csv'), kind: 'artworks' }),
        sessions[1]!.post('/console/feeds/connect', { url: slow.url('/slow.csv'), kind: 'events' }),
        new Promise((r) => setTimeout(r, 300)).then(() => sessions[2]!.post('/console/feeds/connect', { url: slow.url('/slow.csv'), kind: 'artworks' })),
        new Promise((r) => setTimeout(r, 300)).then(() => sessions[3]!.post(`/console/feeds/${feed.body.id}/mapping`)),
      ]);
      expect(answers.map((a) => a.status)).toEqual([303, 303, 429, 429]);
      for (const busy of answers.slice(2)) {
        expect(busy.headers.get('retry-after')).toBe('30');
        expect(busy.text).toContain('at most two at once');
      }
      expect(slow.requests.filter((r) => r.path === '/slow.csv')).toHaveLength(2);
      // Once read, the files are held as uploads are (the gallery's two slots): another gallery is not affected.
      const other = await tenant(t);
      const theirs = await signedIn(t, base_, other.entityId, 'editor');
      await theirs.get('/console/feeds');
      expect((await theirs.post('/console/feeds/connect', { url: slow.url('/slow.csv'), kind: 'artworks' })).status).toBe(303);
    } finally {
      await slow.close();
    }
  });
});

describe('the caps under concurrent requests', () => {
  test('20 feeds created at once at 9 existing: exactly one is created, the others 400; 20 endpoints at 9 likewise', async () => {
    const g = await tenant(t);
    const own = client(t, g.key);
    for (let i = 0; i < 9; i++) expect((await own.post('/v1/feeds', { url: files.url(`/cap-${i}.csv`), kind: 'artworks', paused: true })).status).toBe(201);
    const feeds = await Promise.all(Array.from({ length: 20 }, (_, i) => own.post('/v1/feeds', { url: files.url(`/race-${i}.csv`), kind: 'artworks', paused: true })));
    expect(feeds.map((a) => a.status).sort()).toEqual([201, ...Array.from({ length: 19 }, () => 400)]);
    expect((await own.get('/v1/feeds')).body.feeds).toHaveLength(10);

    for (let i = 0; i < 9; i++) expect((await own.post('/v1/webhooks', { url: `http://127.0.0.1:9/cap-${i}`, events: ['webhook.test'] })).status).toBe(201);
    const hooks = await Promise.all(Array.from({ length: 20 }, (_, i) => own.post('/v1/webhooks', { url: `http://127.0.0.1:9/race-${i}`, events: ['webhook.test'] })));
    expect(hooks.map((a) => a.status).sort()).toEqual([201, ...Array.from({ length: 19 }, () => 400)]);
    expect((await own.get('/v1/webhooks')).body.webhooks).toHaveLength(10);
  });
});
