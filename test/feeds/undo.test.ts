import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { sweepFeedRuns } from '../../src/store/feeds.js';
import { DIALECT, client, keyFor, startApp, tenant, type Tenant } from '../helpers.js';
import { signedIn } from '../support/console.js';
import { importFile, waitForRun, type Run } from '../support/runs.js';
import { closeFeeds, startFeeds, type FeedsSetup } from '../support/feeds.js';
import { csv } from '../support/file-server.js';

/**
 * Undo of a whole run (docs/api.md, Runs: undo a run), through real HTTP: what the run created goes to
 * the trash, what it changed gets its old values unless changed since (kept and listed), what it deleted
 * comes back (a restore meeting a live record with its identity is listed, not forced); the undo is a
 * run of its own, and a feed's undo pauses the feed and makes its next run read the file whole.
 */

let s: FeedsSetup;
let base: string;
beforeAll(async () => {
  s = await startFeeds('0');
  base = await s.t.app.listen({ port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(async () => closeFeeds(s));

const allowAll = feedFetcher(() => true);
type Api = ReturnType<typeof client>;

/** Undoes a run and waits for the undo run to end (the undo job runs in the app's job runner). */
async function undo(api: Api, runId: number): Promise<Run> {
  const started = await api.post(`/v1/runs/${runId}/undo`, {});
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  expect(started.body).toMatchObject({ kind: 'undo', source: `undo:${runId}`, feed_id: null, status: expect.stringMatching(/^(queued|running|applied)$/) });
  return waitForRun(api, started.body.id as number);
}

const byExternalId = async (api: Api, externalId: string) =>
  ((await api.get('/v1/artworks?limit=100')).body.artworks as Array<{ id: number; external_id: string }>).find((a) => a.external_id === externalId);

describe('undo of a run', { timeout: 120_000 }, () => {
  test('an import run: its new works go to the trash (an edited one too, listed), its changed fields come back, a field edited since is kept and listed', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const editor = await signedIn(s.t, base, g.entityId, 'editor');
    const kept = (await api.post('/v1/artworks', { title: 'Kept Work', external_id: 'K1', creation_year: 2001, medium: 'oil', price: 100 })).body.id as number;
    const run = await importFile(editor, api, csv('title;external_id;creation_year;medium;price',
      'Kept Work;K1;2002;acrylic;200', 'New One;N1;2020;ink;50', 'New Two;N2;2021;ink;60'));
    expect(run.counts).toMatchObject({ created: 2, updated: 1 });
    const n1 = (await byExternalId(api, 'N1'))!.id;
    const n2 = (await byExternalId(api, 'N2'))!.id;
    // Edited since the run: the price of the updated work, and the new work N2.
    expect((await api.put(`/v1/artworks/${kept}`, { price: 250 })).status).toBe(200);
    expect((await api.put(`/v1/artworks/${n2}`, { medium: 'charcoal' })).status).toBe(200);

    const done = await undo(api, run.id);
    expect(done).toMatchObject({ kind: 'undo', status: 'applied', source: `undo:${run.id}`, counts: { deleted: 2, updated: 1, created: 0 } });
    expect(done.problems).toEqual(expect.arrayContaining([
      { id: kept, field: 'price', message: 'changed since the run', level: 'warning' },
      { id: n2, field: 'medium', message: expect.stringContaining('changed since the run'), level: 'warning' },
    ]));
    expect(done.problems).toHaveLength(2);
    const work = (await api.get(`/v1/artworks/${kept}`)).body;
    expect([work.creation_year, work.medium, work.price]).toEqual([2001, 'oil', 250]);
    expect((await api.get(`/v1/artworks/${n1}`)).status).toBe(404);
    expect((await api.get(`/v1/artworks/${n2}`)).status).toBe(404);
    const trash = (await api.get('/v1/trash?kind=artworks')).body.items as Array<{ id: number; deleted_by: string }>;
    expect(trash.map((i) => [i.id, i.deleted_by]).sort()).toEqual([[n1, `undo:${run.id}`], [n2, `undo:${run.id}`]].sort());
    // The undo is a run of its own: its writes in the changelog under its run_id and source; the run knows its undo.
    const entries = (await api.get(`/v1/changelog?run_id=${done.id}&limit=100`)).body.changes as Array<{ action: string; source: string; entity_id: number }>;
    expect(entries.map((e) => [e.action, e.entity_id, e.source]).sort()).toEqual([
      ['delete', n1, `undo:${run.id}`], ['delete', n2, `undo:${run.id}`], ['update', kept, `undo:${run.id}`]].sort());
    expect((await api.get(`/v1/runs/${run.id}`)).body.undone_by).toBe(done.id);
    expect(((await api.get('/v1/runs')).body.runs as Run[])[0]).toMatchObject({ id: done.id, kind: 'undo' });

    // A run is undone once; an undo is not undone.
    const again = await api.post(`/v1/runs/${run.id}/undo`, {});
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ error: 'conflict', undone_by: done.id });
    const ofUndo = await api.post(`/v1/runs/${done.id}/undo`, {});
    expect(ofUndo.status).toBe(409);
    expect(ofUndo.body.message).toContain('Undo it by hand');
  });

  test('a feed run: deleted records come back (one meeting a live record with its identity is listed), changed fields back; the feed is paused and its next run reads the file whole', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const path = `/undo/${g.entityId}.csv`;
    const file = (...rows: string[]) => csv('Inventory No.;Title;Year', ...rows);
    s.files.set(path, file('M1;Blue Hour;2019', 'M2;Red Field;2020', 'M3;Green Room;2021', 'M4;Grey Day;2022'));
    const feedId = (await api.post('/v1/feeds', { url: s.files.url(path), kind: 'artworks', mode: 'mirror', mapping: { 'Inventory No.': 'external_id' } })).body.id as number;
    const runNow = async () => {
      await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(s.t.handle.db);
      await runFeed({ db: s.t.handle.db, fetch: allowAll }, feedId);
      return (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs[0] as Run;
    };
    expect(await runNow()).toMatchObject({ status: 'applied', counts: { created: 4 } });
    const ids = Object.fromEntries(await Promise.all(['M1', 'M3', 'M4'].map(async (m) => [m, (await byExternalId(api, m))!.id])));
    s.files.set(path, file('M1;Blue Hour (II);2019', 'M2;Red Field;2020'));
    const run = await runNow();
    expect(run).toMatchObject({ status: 'applied', counts: { updated: 1, deleted: 2 } });
    // A new work now holds M4's inventory number.
    const holder = (await api.post('/v1/artworks', { title: 'Another', external_id: 'M4' })).body.id as number;
    const hook = await api.post('/v1/webhooks', { url: s.files.url('/hook'), events: ['*'] });
    expect(hook.status).toBe(201);

    const done = await undo(api, run.id);
    // Its writes are sent as any write's are; an undo sends no feed.run.* message.
    const messages = (await api.get(`/v1/webhooks/${hook.body.id}/messages?limit=100`)).body.messages as Array<{ type: string }>;
    expect(messages.map((m) => m.type).sort()).toEqual(['artwork.created', 'artwork.updated']);
    expect(done).toMatchObject({ status: 'applied', counts: { created: 1, updated: 1, deleted: 0 } });
    expect(done.problems).toEqual([{ id: ids.M4, field: null, message: `not restored: a live record (#${holder}) now has its identity`, level: 'warning' }]);
    expect((await api.get(`/v1/artworks/${ids.M1}`)).body.title).toBe('Blue Hour');
    expect((await api.get(`/v1/artworks/${ids.M3}`)).body).toMatchObject({ title: 'Green Room', external_id: 'M3', feed_id: feedId });
    expect((await api.get(`/v1/artworks/${ids.M4}`)).status).toBe(404);
    expect((await api.get('/v1/trash?kind=artworks')).body.items.map((i: { id: number }) => i.id)).toEqual([ids.M4]);
    // The feed's latest run is still its own run, not the undo; the feed is paused with the reason.
    const feed = (await api.get(`/v1/feeds/${feedId}`)).body;
    expect(feed).toMatchObject({ paused: true, paused_reason: `run ${run.id} undone`, last_run: { id: run.id, undone_by: done.id } });

    // Resumed and run: the same file is applied again, not short-cut as unchanged.
    expect((await api.put(`/v1/feeds/${feedId}`, { paused: false })).status).toBe(200);
    const next = await runNow();
    expect(next).toMatchObject({ status: 'applied', counts: { updated: 1, deleted: 1 } });
    expect((await api.get(`/v1/artworks/${ids.M1}`)).body.title).toBe('Blue Hour (II)');
  });

  test('an import of events: the new event goes to the trash, the changed city comes back', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const editor = await signedIn(s.t, base, g.entityId, 'editor');
    const show = (await api.post('/v1/events', { title: 'Spring Show', location_city: 'Berlin', start_date: '2099-04-01' })).body.id as number;
    const run = await importFile(editor, api, csv('title;location_city;start_date', 'Spring Show;Hamburg;2099-04-01', 'Autumn Fair;Köln;2099-10-01'), 'events');
    expect(run.counts).toMatchObject({ created: 1, updated: 1 });
    const done = await undo(api, run.id);
    expect(done).toMatchObject({ status: 'applied', counts: { deleted: 1, updated: 1 }, problems: [] });
    expect((await api.get(`/v1/events/${show}`)).body.location_city).toBe('Berlin');
    expect((await api.get('/v1/events')).body.events.map((e: { title: string }) => e.title)).toEqual(['Spring Show']);
  });

  test('attacker pass: another entity\'s run 404, a read-only key 403, an undo while a run is queued or running 409, two undos at once: one 202, one 409', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const editor = await signedIn(s.t, base, g.entityId, 'editor');
    const run = await importFile(editor, api, csv('title;external_id', 'One;U1', 'Two;U2'));

    const other: Tenant = await tenant(s.t);
    const stranger = await client(s.t, other.key).post(`/v1/runs/${run.id}/undo`, {});
    expect(stranger.status).toBe(404);
    const readOnly = client(s.t, (await keyFor(s.t, g.entityId, { scopes: ['artworks:read', 'events:read'] })).key);
    expect((await readOnly.post(`/v1/runs/${run.id}/undo`, {})).status).toBe(403);
    const eventsOnly = client(s.t, (await keyFor(s.t, g.entityId, { scopes: ['artworks:read', 'events:write'] })).key);
    expect((await eventsOnly.post(`/v1/runs/${run.id}/undo`, {})).status).toBe(403);
    expect((await api.post('/v1/runs/999999/undo', {})).status).toBe(404);

    await sql`update feed_runs set status = 'running' where id = ${run.id}`.execute(s.t.handle.db);
    const running = await api.post(`/v1/runs/${run.id}/undo`, {});
    expect(running.status).toBe(409);
    expect(running.body.message).toContain('running');
    await sql`update feed_runs set status = 'applied' where id = ${run.id}`.execute(s.t.handle.db);

    const both = await Promise.all([api.post(`/v1/runs/${run.id}/undo`, {}), api.post(`/v1/runs/${run.id}/undo`, {})]);
    expect(both.map((r) => r.status).sort()).toEqual([202, 409]);
    const won = both.find((r) => r.status === 202)!.body.id as number;
    expect(both.find((r) => r.status === 409)!.body).toMatchObject({ error: 'conflict', undone_by: won });
    expect((await waitForRun(api, won))).toMatchObject({ status: 'applied', counts: { deleted: 2 } });
    expect(((await api.get('/v1/runs?limit=100')).body.runs as Run[]).filter((r) => r.kind === 'undo')).toHaveLength(1);
  });

  test('a run that ended longer ago than TRASH_DAYS is not undone (409), and records already gone are skipped and listed', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const editor = await signedIn(s.t, base, g.entityId, 'editor');
    const run = await importFile(editor, api, csv('title;external_id', 'Alpha;P1', 'Beta;P2'));
    const p1 = (await byExternalId(api, 'P1'))!.id;
    expect((await api.delete(`/v1/artworks/${p1}`)).status).toBe(200);
    const done = await undo(api, run.id);
    expect(done).toMatchObject({ counts: { deleted: 1 } });
    expect(done.problems).toEqual([{ id: p1, field: null, message: 'in the trash already: skipped', level: 'warning' }]);

    const older = await importFile(editor, api, csv('title;external_id', 'Gamma;P3'));
    await sql`update feed_runs set finished_at = ${'2001-01-01T00:00:00.000Z'} where id = ${older.id}`.execute(s.t.handle.db);
    const late = await api.post(`/v1/runs/${older.id}/undo`, {});
    expect(late.status).toBe(409);
    expect(late.body.message).toContain('more than 30 days ago');
  });
});

describe('runs kept while they may be undone', { timeout: 120_000 }, () => {
  test('a deleted feed\'s runs stay in /v1/runs (of no feed) and can still be undone; the records it created go to the trash', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const path = `/gone/${g.entityId}.csv`;
    s.files.set(path, csv('title;external_id', 'Left;L1', 'Right;L2'));
    const feedId = (await api.post('/v1/feeds', { url: s.files.url(path), kind: 'artworks', mapping: {} })).body.id as number;
    await runFeed({ db: s.t.handle.db, fetch: allowAll }, feedId);
    const [run] = (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs as Run[];
    expect(run).toMatchObject({ status: 'applied', counts: { created: 2 } });
    expect((await api.delete(`/v1/feeds/${feedId}`)).status).toBe(204);
    expect((await api.get(`/v1/runs/${run!.id}`)).body).toMatchObject({ id: run!.id, kind: 'feed', feed_id: null, source: `feed:${feedId}` });
    expect(await undo(api, run!.id)).toMatchObject({ status: 'applied', counts: { deleted: 2 } });
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
  });

  test('the runs sweep keeps runs for the longer of 90 days and TRASH_DAYS', async () => {
    const g = await tenant(s.t);
    const api = client(s.t, g.key);
    const editor = await signedIn(s.t, base, g.entityId, 'editor');
    const run = await importFile(editor, api, csv('title;external_id', 'Old;O1'));
    const day = 86_400_000;
    await sql`update feed_runs set finished_at = ${new Date(Date.now() - 100 * day).toISOString()} where id = ${run.id}`.execute(s.t.handle.db);
    await sweepFeedRuns(s.t.handle.db, Date.now(), 120);
    expect((await api.get(`/v1/runs/${run.id}`)).status).toBe(200);
    await sweepFeedRuns(s.t.handle.db, Date.now(), 30);
    expect((await api.get(`/v1/runs/${run.id}`)).status).toBe(404);
  });
});

describe('an undo the queue gives up', { timeout: 120_000 }, () => {
  test('ends failed, keeps what it did in its counts and the changelog, and lets its run go: a second undo does the rest', async () => {
    // A second app on the same database whose undos have a short time limit (as an image's, test/images/time-limit.test.ts).
    const limited = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' }, s.t.config.databaseUrl, { undoTimeoutMs: DIALECT === 'postgres' ? 2000 : 1 });
    let lock: pg.Client | undefined;
    try {
      // Partner: its runs are looked at often while the undo waits out its limit.
      const g = await tenant(s.t, { tier: 'partner' });
      const api = client(s.t, g.key);
      const ROWS = 250;
      const path = `/given-up/${g.entityId}.csv`;
      s.files.set(path, csv('title;external_id', ...Array.from({ length: ROWS }, (_, i) => `Work ${i};G${i}`)));
      const feedId = (await api.post('/v1/feeds', { url: s.files.url(path), kind: 'artworks', mapping: {} })).body.id as number;
      await runFeed({ db: s.t.handle.db, fetch: allowAll }, feedId);
      const [run] = (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs as Run[];
      expect(run).toMatchObject({ status: 'applied', counts: { created: ROWS } });
      if (DIALECT === 'postgres') {
        // The run's last work is held by another transaction: the undo does the records before it, then waits past its limit.
        lock = new pg.Client({ connectionString: s.t.config.databaseUrl });
        await lock.connect();
        await lock.query('begin');
        await lock.query('select id from artworks where entity_id = $1 and external_id = $2 for update', [g.entityId, `G${ROWS - 1}`]);
      }
      const started = await client(limited, g.key).post(`/v1/runs/${run!.id}/undo`, {});
      expect(started.status).toBe(202);
      const failed = await waitForRun(api, started.body.id as number);
      await lock?.query('rollback');
      expect(failed).toMatchObject({ kind: 'undo', status: 'failed', error: 'took too long' });
      // The run is free again: undone_by null, and Undo is offered again.
      expect((await api.get(`/v1/runs/${run!.id}`)).body.undone_by).toBeNull();
      // What the failed undo did stays: each record it moved is in the trash, in its counts and under its run in the changelog.
      const count = async (query: ReturnType<typeof sql<{ n: number }>>) => Number((await query.execute(s.t.handle.db)).rows[0]!.n);
      const moved = await count(sql<{ n: number }>`select count(*) as n from changelog where run_id = ${failed.id} and action = 'delete'`);
      expect(await count(sql<{ n: number }>`select count(*) as n from trash where owner_id = ${g.entityId}`)).toBe(moved);
      expect(failed.counts?.deleted ?? 0).toBe(moved);

      const again = await undo(api, run!.id);
      expect(again).toMatchObject({ status: 'applied', counts: { rows: ROWS, deleted: ROWS - moved, unchanged: moved }, problems: [] });
      expect((await api.get(`/v1/runs/${run!.id}`)).body.undone_by).toBe(again.id);
      expect((await api.get('/v1/artworks')).body.total).toBe(0);
      // Each record was moved once, by one undo or the other.
      expect(await count(sql<{ n: number }>`select count(*) as n from changelog where run_id in (${failed.id}, ${again.id}) and action = 'delete'`)).toBe(ROWS);
      expect(await count(sql<{ n: number }>`select count(distinct record_id) as n from changelog where run_id in (${failed.id}, ${again.id})`)).toBe(ROWS);
    } finally {
      await lock?.end();
      await limited.close();
    }
  });
});

describe('a run read a page at a time', { timeout: 120_000 }, () => {
  test('a record written on two pages of the run (600 entries, pages of 500) is undone once, as the run left it', async () => {
    const g = await tenant(s.t, { tier: 'partner' });
    const api = client(s.t, g.key);
    const ROWS = 600;
    const path = `/paged/${g.entityId}.csv`;
    s.files.set(path, csv('title;external_id', ...Array.from({ length: ROWS }, (_, i) => `Paged ${i};P${i}`)));
    const feedId = (await api.post('/v1/feeds', { url: s.files.url(path), kind: 'artworks', mapping: {} })).body.id as number;
    await runFeed({ db: s.t.handle.db, fetch: allowAll }, feedId);
    const [run] = (await api.get(`/v1/feeds/${feedId}/runs?limit=1`)).body.runs as Run[];
    expect(run).toMatchObject({ status: 'applied', counts: { created: ROWS } });
    // The run's first record written again by the run after its 600th entry, on the second page (raw rows, as the run would write them).
    const id = Number((await sql<{ id: number }>`select id from artworks where entity_id = ${g.entityId} and external_id = 'P0'`.execute(s.t.handle.db)).rows[0]!.id);
    await sql`update artworks set title = ${'Paged 0 (II)'} where id = ${id}`.execute(s.t.handle.db);
    await sql`insert into changelog (owner_id, entity_type, record_id, action, source, field_changes, created_at, run_id)
      values (${g.entityId}, 'artwork', ${id}, 'update', ${`feed:${feedId}`}, ${JSON.stringify({ title: { old: 'Paged 0', new: 'Paged 0 (II)' } })},
        ${new Date().toISOString()}, ${run!.id})`.execute(s.t.handle.db);
    const done = await undo(api, run!.id);
    expect(done).toMatchObject({ status: 'applied', counts: { rows: ROWS, deleted: ROWS, unchanged: 0 }, problems: [] });
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
    const deletes = await sql<{ n: number }>`select count(*) as n from changelog where run_id = ${done.id} and action = 'delete' and record_id = ${id}`.execute(s.t.handle.db);
    expect(Number(deletes.rows[0]!.n)).toBe(1);
  });
});
