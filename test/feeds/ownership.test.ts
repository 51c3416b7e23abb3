import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { workbook } from '../support/spreadsheets.js';

/** A mirror deletes only what it owns, and every write of a run names it (docs/api.md, Feeds; Runs). */

let t: TestApp;
let files: FileServer;

beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' });
});
afterAll(async () => {
  await t?.close();
  await files?.close();
});

const allowAll = feedFetcher(() => true);

async function gallery() {
  const g = await tenant(t);
  const api = client(t, g.key);
  /** Makes a feed due now and runs it as its job would; the finished run as the API shows it. */
  const runNow = async (feedId: number) => {
    await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db);
    await runFeed({ db: t.handle.db, fetch: allowAll }, feedId);
    return (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs[0];
  };
  const titles = async () => ((await api.get('/v1/artworks?limit=100')).body.artworks as { title: string }[]).map((a) => a.title).sort();
  return { g, api, runNow, titles };
}

describe('two feeds of one gallery', () => {
  test('the CSV in mirror never deletes the six works the Excel feed created, nor the API\'s', async () => {
    const { api, runNow, titles } = await gallery();
    files.set('/own/stock.csv', csv('Inventory No.;Title;Year', 'C1;Csv One;2001', 'C2;Csv Two;2002'));
    files.set('/own/loans.xlsx', await workbook({
      Loans: [['Inventory No.', 'Title', 'Year'], ...[1, 2, 3, 4, 5, 6].map((n) => [`X${n}`, `Excel ${n}`, 2010 + n])],
    }));
    const mirror = (await api.post('/v1/feeds', { url: files.url('/own/stock.csv'), kind: 'artworks', mode: 'mirror', mapping: { 'Inventory No.': 'external_id' } })).body.id;
    const merge = (await api.post('/v1/feeds', { url: files.url('/own/loans.xlsx'), kind: 'artworks', mode: 'merge', mapping: { 'Inventory No.': 'external_id' } })).body.id;
    expect(await runNow(mirror)).toMatchObject({ status: 'applied', counts: { created: 2 } });
    expect(await runNow(merge)).toMatchObject({ status: 'applied', counts: { created: 6 } });
    const byApi = await api.post('/v1/artworks', { title: 'Api Work', creation_year: 1999 });

    const works = (await api.get('/v1/artworks?limit=100')).body.artworks as Array<{ id: number; title: string }>;
    const feedOf = async (title: string) => (await api.get(`/v1/artworks/${works.find((w) => w.title === title)!.id}`)).body.feed_id;
    expect([await feedOf('Csv One'), await feedOf('Excel 3'), await feedOf('Api Work')]).toEqual([mirror, merge, null]);

    // The mirror's file loses one of its own rows: only that one goes.
    files.set('/own/stock.csv', csv('Inventory No.;Title;Year', 'C1;Csv One;2001'));
    expect(await runNow(mirror)).toMatchObject({ status: 'applied', counts: { deleted: 1 } });
    expect(await titles()).toEqual(['Api Work', 'Csv One', 'Excel 1', 'Excel 2', 'Excel 3', 'Excel 4', 'Excel 5', 'Excel 6']);
    expect((await api.get(`/v1/artworks/${byApi.body.id}`)).status).toBe(200);

    // A feed deleted: its records stay, nobody's own.
    expect((await api.delete(`/v1/feeds/${merge}`)).status).toBe(204);
    expect(await feedOf('Excel 3')).toBeNull();
  });
});

describe('runs', () => {
  test('a feed\'s run is listed among the entity\'s runs, and the changelog lists its writes by run_id', async () => {
    const { g, api, runNow } = await gallery();
    files.set('/runs/works.csv', csv('Inventory No.;Title;Year', 'R1;Run One;2001', 'R2;Run Two;2002'));
    const feedId = (await api.post('/v1/feeds', { url: files.url('/runs/works.csv'), kind: 'artworks', mapping: { 'Inventory No.': 'external_id' } })).body.id;
    const run = await runNow(feedId);
    expect(run).toMatchObject({ kind: 'feed', feed_id: feedId, record_kind: 'artworks', source: `feed:${feedId}`, undone_by: null, status: 'applied' });
    const byApi = await api.post('/v1/artworks', { title: 'Not In A Run', creation_year: 1990 });

    const listed = await api.get('/v1/runs');
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ runs: [run], has_more: false, next_after: null });
    expect((await api.get(`/v1/runs/${run.id}`)).body).toEqual(run);

    const ofRun = await api.get(`/v1/changelog?run_id=${run.id}`);
    expect(ofRun.status).toBe(200);
    expect(ofRun.body.total).toBe(2);
    expect(ofRun.body.changes.map((c: { action: string; run_id: number }) => [c.action, c.run_id])).toEqual([['create', run.id], ['create', run.id]]);
    const all = (await api.get('/v1/changelog')).body.changes as Array<{ entity_id: number; run_id: number | null }>;
    expect(all.find((c) => c.entity_id === byApi.body.id)!.run_id).toBeNull();
    // Page by page, by cursor, nothing lost.
    const first = await api.get(`/v1/changelog?run_id=${run.id}&limit=1`);
    const second = await api.get(`/v1/changelog?run_id=${run.id}&limit=1&after=${first.body.next_after}`);
    expect([...first.body.changes, ...second.body.changes]).toEqual(ofRun.body.changes);
    expect(second.body.has_more).toBe(false);
    expect((await api.get(`/v1/changelog?run_id=${run.id}&page=1`)).status).toBe(400);

    // Another entity's run is 404; a key that may not read artworks neither lists nor reads it.
    const other = await gallery();
    expect((await other.api.get(`/v1/runs/${run.id}`)).status).toBe(404);
    expect((await other.api.get('/v1/runs')).body.runs).toEqual([]);
    expect((await other.api.get(`/v1/changelog?run_id=${run.id}`)).body.changes).toEqual([]);
    const eventsOnly = client(t, (await keyFor(t, g.entityId, { tier: 'free', scopes: ['events:read'] })).key);
    expect((await eventsOnly.get('/v1/runs')).body.runs).toEqual([]);
    expect((await eventsOnly.get(`/v1/runs/${run.id}`)).status).toBe(403);
  });
});
