import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
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
