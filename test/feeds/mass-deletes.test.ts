import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';

/**
 * Mass deletes wait for a person (docs/api.md, Feeds: mass deletes): past the larger of 10 % of the
 * feed's own records and 10 over 24 hours, a mirror run lists its pending deletes, and confirm-deletes
 * deletes exactly those, to the trash, reading nothing again.
 */

let t: TestApp;
let files: FileServer;
let base: string;

beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => {
  await t?.close();
  await files?.close();
});

const allowAll = feedFetcher(() => true);
/** A file of works 1..n: inventory number M<i>, title "Work <i>". */
const stock = (n: number, from = 1) => csv('Inventory No.;Title;Year', ...Array.from({ length: n }, (_, i) => `M${from + i};Work ${from + i};${1900 + from + i}`));
let fileCount = 0;

async function mirrorOf(rows: number) {
  const g = await tenant(t);
  const api = client(t, g.key);
  const path = `/mass/${++fileCount}.csv`;
  files.set(path, stock(rows));
  const feedId = (await api.post('/v1/feeds', { url: files.url(path), kind: 'artworks', mode: 'mirror', mapping: { 'Inventory No.': 'external_id' } })).body.id as number;
  /** Makes the feed due now and runs it as its job would; the finished run as the API shows it. */
  const runNow = async () => {
    await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db);
    await runFeed({ db: t.handle.db, fetch: allowAll }, feedId);
    return (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs[0];
  };
  const count = async () => (await api.get('/v1/artworks?limit=1')).body.total as number;
  const trash = async () => (await api.get('/v1/trash?kind=artworks&limit=100')).body.items as Array<{ id: number; title: string; deleted_by: string }>;
  const fetches = () => files.requests.filter((r) => r.path === path).length;
  expect(await runNow()).toMatchObject({ status: 'applied', counts: { created: rows } });
  return { g, api, feedId, path, runNow, count, trash, fetches };
}

describe('a mirror feed\'s mass delete', { timeout: 120_000 }, () => {
  test('a 30-row file shrinking to 18 stops with the 12 listed; confirming deletes exactly those 12 to the trash, fetching nothing', async () => {
    const { api, feedId, path, runNow, count, trash, fetches } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    expect(stopped).toMatchObject({ status: 'needs_attention', counts: { rows: 18, unchanged: 18, deleted: 0 } });
    expect(stopped.error).toMatch(/would delete 12 of the feed's 30 artworks, more than 10/);
    expect(stopped.pending_deletes.map((p: { external_id: string }) => p.external_id).sort())
      .toEqual(Array.from({ length: 12 }, (_, i) => `M${19 + i}`).sort());
    expect(stopped.pending_deletes[0]).toEqual({ id: expect.any(Number), title: expect.stringMatching(/^Work \d+$/), external_id: expect.stringMatching(/^M\d+$/) });
    expect(await count()).toBe(30);
    expect(await trash()).toEqual([]);
    expect((await api.get(`/v1/runs/${stopped.id}`)).body.pending_deletes).toEqual(stopped.pending_deletes);

    // The next scheduled run finds the file unchanged: that does not void the list.
    expect(await runNow()).toMatchObject({ status: 'unchanged', pending_deletes: null });

    const before = fetches();
    const confirmed = await api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {});
    expect(confirmed.status).toBe(202);
    expect(confirmed.body).toMatchObject({ id: stopped.id, status: 'applied', counts: { deleted: 12 }, pending_deletes: null, error: null });
    expect(fetches()).toBe(before);
    expect(await count()).toBe(18);
    const trashed = await trash();
    expect(trashed.map((item) => item.id).sort()).toEqual(stopped.pending_deletes.map((p: { id: number }) => p.id).sort());
    expect(new Set(trashed.map((item) => item.deleted_by))).toEqual(new Set([`feed:${feedId}`]));
    const ofRun = (await api.get(`/v1/changelog?run_id=${stopped.id}&limit=100`)).body.changes as Array<{ action: string; source: string }>;
    expect(ofRun.filter((c) => c.action === 'delete')).toHaveLength(12);
    expect(new Set(ofRun.map((c) => c.source))).toEqual(new Set([`feed:${feedId}`]));
    expect((await api.get(`/v1/feeds/${feedId}/runs/${stopped.id}`)).body).toEqual(confirmed.body);

    const again = await api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {});
    expect(again.status).toBe(409);
    expect(again.body.error).toBe('conflict');
    expect(await count()).toBe(18);

    // The confirmed deletes count toward the feed's 24 hours: one more work leaving the file waits too.
    files.set(path, stock(17));
    expect(await runNow()).toMatchObject({ status: 'needs_attention', counts: { deleted: 0 }, pending_deletes: [{ external_id: 'M18' }] });
  });

  test('records of a confirmed list that are back (restored, or left by a confirm cut short) are found by the next run and wait again', async () => {
    const { api, feedId, path, runNow, count, fetches } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    expect((await api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {})).status).toBe(202);
    const back = (stopped.pending_deletes as Array<{ id: number; external_id: string }>).slice(0, 3);
    for (const { id } of back) expect((await api.post(`/v1/artworks/${id}/restore`, {})).status).toBe(200);
    expect(await count()).toBe(21);
    // The same file: read whole again, not short-cut as unchanged.
    const before = fetches();
    const next = await runNow();
    expect(fetches()).toBe(before + 1);
    expect(next).toMatchObject({ status: 'needs_attention', counts: { deleted: 0 } });
    expect(next.pending_deletes.map((p: { external_id: string }) => p.external_id).sort()).toEqual(back.map((p) => p.external_id).sort());
    expect(await count()).toBe(21);
  });

  test('two confirms of one run at once: one deletes the 12, the other is 409 conflict', async () => {
    const { api, feedId, path, runNow, count, trash } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    const answers = await Promise.all([1, 2].map(() => api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {})));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 409]);
    expect(answers.find((a) => a.status === 202)!.body.counts.deleted).toBe(12);
    expect(await count()).toBe(18);
    expect(await trash()).toHaveLength(12);
  });

  test('a record edited since the run, or deleted since, is skipped and listed; the others are deleted', async () => {
    const { api, feedId, path, runNow, count } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    const [edited, gone] = stopped.pending_deletes as Array<{ id: number; title: string; external_id: string }>;
    const current = (await api.get(`/v1/artworks/${edited!.id}`)).body;
    expect((await api.put(`/v1/artworks/${edited!.id}`, { title: 'Kept By Hand', external_id: current.external_id, creation_year: current.creation_year })).status).toBe(200);
    expect((await api.delete(`/v1/artworks/${gone!.id}`)).status).toBe(200);

    const confirmed = await api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {});
    expect(confirmed.status).toBe(202);
    expect(confirmed.body.counts.deleted).toBe(10);
    expect(confirmed.body.problems).toEqual(expect.arrayContaining([
      { line: null, column: null, message: `#${edited!.id} "${edited!.title}" not deleted: changed since the run` },
      { line: null, column: null, message: `#${gone!.id} "${gone!.title}" not deleted: gone since the run` },
    ]));
    expect((await api.get(`/v1/artworks/${edited!.id}`)).body.title).toBe('Kept By Hand');
    expect(await count()).toBe(19);
  });

  test('a confirm after a later run ended applied is 409 conflict, and deletes nothing', async () => {
    const { api, feedId, path, runNow, count } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    expect(stopped.status).toBe('needs_attention');
    files.set(path, stock(30));
    expect(await runNow()).toMatchObject({ status: 'applied', counts: { deleted: 0 } });
    const late = await api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {});
    expect(late.status).toBe(409);
    expect(late.body.error).toBe('conflict');
    expect(await count()).toBe(30);
  });

  test('deletes compound over 24 hours: 5 deleted, then 7 more the next run stop (12 > 10)', async () => {
    const { api, feedId, path, runNow, count } = await mirrorOf(30);
    files.set(path, stock(25));
    expect(await runNow()).toMatchObject({ status: 'applied', counts: { deleted: 5 } });
    files.set(path, stock(18));
    const stopped = await runNow();
    expect(stopped).toMatchObject({ status: 'needs_attention', counts: { deleted: 0 } });
    expect(stopped.pending_deletes).toHaveLength(7);
    expect(stopped.error).toMatch(/after 5 deleted in the last 24 hours/);
    expect(await count()).toBe(25);
    // A day later the first run's deletes no longer count.
    await sql`update changelog set created_at = ${'2001-01-01T00:00:00.000Z'} where source = ${`feed:${feedId}`} and action = 'delete'`.execute(t.handle.db);
    files.set(path, csv('Inventory No.;Title;Year', ...Array.from({ length: 18 }, (_, i) => `M${i + 1};Work ${i + 1};${1901 + i}`), 'M99;New;2001'));
    expect(await runNow()).toMatchObject({ status: 'applied', counts: { created: 1, deleted: 7 } });
    expect((await api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {})).status).toBe(409);
  });

  test('another entity\'s feed or run is 404; a read-only key is 403; nothing is deleted', async () => {
    const { g, api, feedId, path, runNow, count } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    const other = await mirrorOf(1);
    expect((await other.api.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {})).status).toBe(404);
    expect((await api.post(`/v1/feeds/${other.feedId}/runs/${stopped.id}/confirm-deletes`, {})).status).toBe(404);
    const firstOfOther = (await other.api.get(`/v1/feeds/${other.feedId}/runs`)).body.runs[0].id;
    expect((await api.post(`/v1/feeds/${feedId}/runs/${firstOfOther}/confirm-deletes`, {})).status).toBe(404);
    const reader = client(t, (await keyFor(t, g.entityId, { tier: 'free', scopes: ['artworks:read'] })).key);
    const refused = await reader.post(`/v1/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`, {});
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect(await count()).toBe(30);
    expect((await api.get(`/v1/feeds/${feedId}/runs/${stopped.id}`)).body.status).toBe('needs_attention');
  });

  test('the console lists what a run would delete, title and inventory number, then "Delete these 12" deletes them', async () => {
    const { g, api, feedId, path, runNow, count, trash } = await mirrorOf(30);
    files.set(path, stock(18));
    const stopped = await runNow();
    const editor = await signedIn(t, base, g.entityId, 'editor');
    const page = await editor.get('/console/feeds');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Delete these 12');
    expect(page.text).not.toContain('Delete them anyway');
    for (const p of stopped.pending_deletes as Array<{ title: string; external_id: string }>) {
      expect(page.text).toContain(`>${p.title}</td>`);
      expect(page.text).toContain(`>${p.external_id}</td>`);
    }
    const action = `/console/feeds/${feedId}/runs/${stopped.id}/confirm-deletes`;
    expect(page.text).toContain(`action="${action}"`);
    expect((await editor.post(action, { _csrf: 'forged' })).status).toBe(403);
    expect(await count()).toBe(30);
    const done = await editor.post(action);
    expect(done.status).toBe(303);
    expect(done.location).toBe('/console/feeds?done=confirmed');
    expect(await count()).toBe(18);
    expect(await trash()).toHaveLength(12);
    const after = await editor.get('/console/feeds?done=confirmed');
    expect(after.text).not.toContain('Delete these');
    expect((await editor.post(action)).status).toBe(409);
    const viewer = await signedIn(t, base, g.entityId, 'viewer');
    expect((await viewer.post(action)).status).toBe(403);
    expect((await api.get('/v1/artworks?limit=1')).body.total).toBe(18);
  });
});
