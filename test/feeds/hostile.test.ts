import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';

/** Feeds against a hostile file or caller (docs/api.md, Feeds), on both dialects, reading files from a local server. */

let t: TestApp;
let files: FileServer;
let gallery: Tenant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' });
  gallery = await tenant(t);
  api = client(t, gallery.key);
});
afterAll(async () => {
  await t?.close();
  await files?.close();
});

const allowAll = feedFetcher(() => true);

async function runNow(feedId: number) {
  await sql`update feeds set next_run_at = ${'2000-01-01T00:00:00.000Z'} where id = ${feedId}`.execute(t.handle.db);
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
  const runsOf = async (feedId: number) => (await api.get(`/v1/feeds/${feedId}/runs?limit=100`)).body.runs as { id: number }[];

  test('do not start a run, through the API or the console: the next run is one interval from the resume; Run now stays once a minute', async () => {
    files.set('/paused.csv', csv('Inventory No.;Title;Artist', 'Q1;Quiet;Ada Berg'));
    const created = await api.post('/v1/feeds', { url: files.url('/paused.csv'), kind: 'artworks', interval_minutes: 60 });
    const id = created.body.id;
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
      // As the feed's job would: nothing is due, so nothing runs.
      await runFeed({ db: t.handle.db, fetch: allowAll }, id);
    }
    expect(await runsOf(id)).toHaveLength(before);
    const now = await api.post(`/v1/feeds/${id}/runs`, {});
    expect(now.status).toBe(429);

    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const editor = await signedIn(t, base, gallery.entityId, 'editor');
    expect((await editor.post(`/console/feeds/${id}/pause`)).location).toBe('/console/feeds?done=paused');
    expect((await editor.post(`/console/feeds/${id}/pause`)).location).toBe('/console/feeds?done=resumed');
    await runFeed({ db: t.handle.db, fetch: allowAll }, id);
    expect(await runsOf(id)).toHaveLength(before);
    expect((await editor.post(`/console/feeds/${id}/run`)).status).toBe(429);
    expect(files.requests.filter((r) => r.path === '/paused.csv')).toHaveLength(2);
  });
});
