import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { publicAddress } from '../../src/fetch/index.js';
import { sweepFeedRuns } from '../../src/store/feeds.js';
import { client, tenant, type TestApp } from '../helpers.js';
import { csv, type FileServer } from '../support/file-server.js';
import { closeFeeds, startFeeds } from '../support/feeds.js';

/** Feeds through the API (docs/api.md, Feeds), on both dialects, reading files from a local server. */

let t: TestApp;
let files: FileServer;
let api: ReturnType<typeof client>;

// Runs are driven by the test (runFeed, as the feed's job does), not by the app's job runner.
beforeAll(async () => ({ t, files, api } = await startFeeds()));
afterAll(() => closeFeeds({ t, files }));

const allowAll = feedFetcher(() => true);

/** Makes a feed due now and runs it as its job would; the finished run as the API shows it. */
async function runNow(feedId: number, fetch = allowAll) {
  await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db);
  await runFeed({ db: t.handle.db, fetch }, feedId);
  const runs = await api.get(`/v1/feeds/${feedId}/runs?limit=1`);
  return runs.body.runs[0];
}

/** The changelog entries of artworks (an artist's creation has its own entry) written by `source`. */
async function changelogOf(source: string) {
  const page = await api.get('/v1/changelog?limit=100');
  return (page.body.changes as { source: string; action: string; entity_type: string; field_changes: Record<string, unknown> }[]).filter((e) => e.source === source && e.entity_type !== 'artist');
}

const titles = async () => ((await api.get('/v1/artworks?limit=100')).body.artworks as { title: string }[]).map((a) => a.title).sort();

describe('a feed of artworks', () => {
  let feedId: number;
  const file = (...rows: string[]) => csv('Inventory No.;Title;Künstler;Year', ...rows);

  test('a CSV published at a URL becomes the catalog, each record with a changelog entry from the feed', async () => {
    files.set('/inventory.csv', file('A1;Blue Hour;Ada Berg;2019', 'A2;Red Field;Ada Berg;2020', 'A3;Night Harbour;Cem Ak;2021'));
    const created = await api.post('/v1/feeds', {
      url: files.url('/inventory.csv'), kind: 'artworks', mapping: { 'Inventory No.': 'external_id', Künstler: 'artist_name', Year: 'creation_year' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ kind: 'artworks', encoding: 'utf-8', mode: 'merge', interval_minutes: 60, paused: false, last_run: { status: 'queued' } });
    feedId = created.body.id;
    await runFeed({ db: t.handle.db, fetch: allowAll }, feedId);
    const feed = (await api.get(`/v1/feeds/${feedId}`)).body;
    expect(feed.last_run).toMatchObject({ status: 'applied', http_status: 200, error: null, counts: { rows: 3, created: 3, updated: 0, unchanged: 0, deleted: 0, refused: 0, duplicates: 0 } });
    expect(await titles()).toEqual(['Blue Hour', 'Night Harbour', 'Red Field']);
    expect(await changelogOf(`feed:${feedId}`)).toHaveLength(3);
    const status = (await api.get('/v1/sync/status')).body;
    expect(status.artworks.last_synced).toBe(feed.last_run.finished_at);
  });

  test('a 304 to the last ETag writes nothing and makes no changelog entry, but advances the sync time', async () => {
    const before = (await api.get('/v1/sync/status')).body.artworks.last_synced;
    const run = await runNow(feedId);
    expect(run).toMatchObject({ status: 'unchanged', counts: null, http_status: 304 });
    expect(files.requests.at(-1)).toMatchObject({ path: '/inventory.csv', ifNoneMatch: expect.stringMatching(/^"/) });
    expect(await changelogOf(`feed:${feedId}`)).toHaveLength(3);
    expect((await api.get('/v1/sync/status')).body.artworks.last_synced > before).toBe(true);
  });

  test('a row edited in the file is one update at the next run and nothing else', async () => {
    files.set('/inventory.csv', file('A1;Blue Hour;Ada Berg;2019', 'A2;Red Field (II);Ada Berg;2020', 'A3;Night Harbour;Cem Ak;2021'));
    const run = await runNow(feedId);
    expect(run).toMatchObject({ status: 'applied', counts: { rows: 3, created: 0, updated: 1, unchanged: 2 } });
    const entries = await changelogOf(`feed:${feedId}`);
    expect(entries).toHaveLength(4);
    expect(entries.at(-1)).toMatchObject({ action: 'update', field_changes: { title: { old: 'Red Field', new: 'Red Field (II)' } } });
  });

  test('a removed row is kept in merge mode', async () => {
    files.set('/inventory.csv', file('A1;Blue Hour;Ada Berg;2019', 'A2;Red Field (II);Ada Berg;2020'));
    const run = await runNow(feedId);
    expect(run).toMatchObject({ status: 'applied', counts: { rows: 2, deleted: 0, unchanged: 2 } });
    expect(await titles()).toContain('Night Harbour');
  });

  test('a removed row is deleted in mirror mode', async () => {
    const changed = await api.put(`/v1/feeds/${feedId}`, { mode: 'mirror' });
    expect(changed.status).toBe(200);
    expect(changed.body.mode).toBe('mirror');
    const run = await runNow(feedId);
    expect(run).toMatchObject({ status: 'applied', counts: { rows: 2, deleted: 1 } });
    expect(await titles()).toEqual(['Blue Hour', 'Red Field (II)']);
    expect((await changelogOf(`feed:${feedId}`)).at(-1)).toMatchObject({ action: 'delete' });
  });

  test('a renamed mapped column fails the run with the column\'s name and writes nothing', async () => {
    const before = (await changelogOf(`feed:${feedId}`)).length;
    files.set('/inventory.csv', csv('Inventory No.;Title;Artist;Year', 'A1;Blue Hour;Someone Else;2019'));
    const run = await runNow(feedId);
    expect(run).toMatchObject({ status: 'failed', error: "column 'Künstler' is no longer in the file", counts: null });
    expect(await changelogOf(`feed:${feedId}`)).toHaveLength(before);
    expect(await titles()).toEqual(['Blue Hour', 'Red Field (II)']);
  });

  test('a mirror deletes up to 10 of its records without asking (more than half of them here); allow_mass_delete is withdrawn (400 naming the confirm route)', async () => {
    files.set('/inventory.csv', file(
      'A1;Blue Hour;Ada Berg;2019', 'A2;Red Field (II);Ada Berg;2020', 'B1;One;Dana Lu;2001', 'B2;Two;Dana Lu;2002', 'B3;Three;Dana Lu;2003',
    ));
    expect((await runNow(feedId)).status).toBe('applied');
    // 3 of the 5 records leave the file (60 %); one that stays is edited.
    files.set('/inventory.csv', file('A1;Blue Hour;Ada Berg;2019', 'A2;Red Field (III);Ada Berg;2020'));
    const run = await runNow(feedId);
    expect(run).toMatchObject({ status: 'applied', counts: { updated: 1, deleted: 3 }, pending_deletes: null });
    expect(await titles()).toEqual(['Blue Hour', 'Red Field (III)']);

    const withdrawn = await api.post(`/v1/feeds/${feedId}/runs`, { allow_mass_delete: true });
    expect(withdrawn.status).toBe(400);
    expect(withdrawn.body.details).toEqual([{ field: 'allow_mass_delete', message: expect.stringContaining('/v1/feeds/:id/runs/:run_id/confirm-deletes') }]);
    const queued = await api.post(`/v1/feeds/${feedId}/runs`, {});
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({ status: 'queued', started_at: null, pending_deletes: null });
  });

  test('Run now is refused with 429 within a minute of the last one', async () => {
    const again = await api.post(`/v1/feeds/${feedId}/runs`, {});
    expect(again.status).toBe(429);
    expect(again.body.error).toBe('rate_limited');
    expect(again.body.retry_after).toBeGreaterThan(0);
  });

  test('the runs sweep forgets runs that ended more than 90 days ago, and keeps the others', async () => {
    const runs = (await api.get(`/v1/feeds/${feedId}/runs?limit=100`)).body.runs;
    const old = runs.at(-1);
    await sql`update feed_runs set finished_at = ${'2001-01-01T00:00:00.000Z'} where id = ${old.id}`.execute(t.handle.db);
    expect(await sweepFeedRuns(t.handle.db)).toBe(1);
    expect((await api.get(`/v1/feeds/${feedId}/runs/${old.id}`)).status).toBe(404);
    expect((await api.get(`/v1/feeds/${feedId}/runs/${runs[0].id}`)).status).toBe(200);
  });

  test('runs page newest first by cursor', async () => {
    const first = await api.get(`/v1/feeds/${feedId}/runs?limit=2`);
    expect(first.status).toBe(200);
    expect(first.body.runs).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    expect(first.body.runs[0].id).toBeGreaterThan(first.body.runs[1].id);
    const next = await api.get(`/v1/feeds/${feedId}/runs?limit=100&after=${first.body.next_after}`);
    expect(next.body.runs[0].id).toBeLessThan(first.body.runs[1].id);
    expect(next.body.has_more).toBe(false);
    expect(next.body.next_after).toBeNull();
  });
});

describe('feeds and the rules around them', () => {
  test('a Latin-1 file with its encoding set imports without mojibake', async () => {
    files.set('/latin1.csv', Buffer.from(csv('title;artist_name', 'Mädchen am Fenster;Käthe Kollwitz'), 'latin1'));
    const other = await tenant(t);
    const own = client(t, other.key);
    const wrong = await own.post('/v1/feeds', { url: files.url('/latin1.csv'), kind: 'artworks' });
    await runFeed({ db: t.handle.db, fetch: allowAll }, wrong.body.id);
    expect((await own.get(`/v1/feeds/${wrong.body.id}`)).body.last_run).toMatchObject({ status: 'failed', error: 'not valid UTF-8 at line 2: choose Windows-1252' });
    expect((await own.put(`/v1/feeds/${wrong.body.id}`, { encoding: 'windows-1252' })).status).toBe(200);
    await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${wrong.body.id}`}`.execute(t.handle.db);
    await runFeed({ db: t.handle.db, fetch: allowAll }, wrong.body.id);
    expect((await own.get(`/v1/feeds/${wrong.body.id}`)).body.last_run.status).toBe('applied');
    expect((await own.get('/v1/artworks')).body.artworks[0]).toMatchObject({ title: 'Mädchen am Fenster', artist_name: 'Käthe Kollwitz' });
  });

  test('another entity\'s feed answers 404', async () => {
    const other = await tenant(t);
    const theirs = await client(t, other.key).post('/v1/feeds', { url: files.url('/theirs.csv'), kind: 'events', paused: true });
    expect(theirs.status).toBe(201);
    for (const reply of [
      await api.get(`/v1/feeds/${theirs.body.id}`), await api.put(`/v1/feeds/${theirs.body.id}`, { paused: false }),
      await api.post(`/v1/feeds/${theirs.body.id}/runs`, {}), await api.get(`/v1/feeds/${theirs.body.id}/runs`), await api.delete(`/v1/feeds/${theirs.body.id}`),
    ]) expect(reply.status).toBe(404);
  });

  test('one URL is one feed per entity and kind, and an entity has at most 10 feeds', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    expect((await own.post('/v1/feeds', { url: files.url('/a.csv'), kind: 'artworks', paused: true })).status).toBe(201);
    const same = await own.post('/v1/feeds', { url: files.url('/a.csv'), kind: 'artworks', paused: true });
    expect(same.status).toBe(409);
    expect(same.body.error).toBe('duplicate');
    expect((await own.post('/v1/feeds', { url: files.url('/a.csv'), kind: 'events', paused: true })).status).toBe(201);
    for (let i = 0; i < 8; i++) expect((await own.post('/v1/feeds', { url: files.url(`/n${i}.csv`), kind: 'artworks', paused: true })).status).toBe(201);
    const eleventh = await own.post('/v1/feeds', { url: files.url('/n11.csv'), kind: 'artworks', paused: true });
    expect(eleventh.status).toBe(400);
    expect(eleventh.body.message).toMatch(/at most 10 feeds/);
    expect((await own.get('/v1/feeds')).body.feeds).toHaveLength(10);
  });

  test('a feed is refused with 400 for a bad interval, an unknown field in its mapping or a URL that is not http', async () => {
    for (const body of [
      { url: files.url('/x.csv'), kind: 'artworks', interval_minutes: 5 },
      { url: files.url('/x.csv'), kind: 'artworks', mapping: { Artist: 'painter' } },
      { url: 'ftp://example.org/x.csv', kind: 'artworks' },
      { url: files.url('/x.csv'), kind: 'artworks', surprise: true },
    ]) expect((await api.post('/v1/feeds', body)).status).toBe(400);
  });

  test('deleting a feed answers 204 and keeps its records', async () => {
    files.set('/keep.csv', csv('title', 'Kept Work'));
    const other = await tenant(t);
    const own = client(t, other.key);
    const feed = await own.post('/v1/feeds', { url: files.url('/keep.csv'), kind: 'artworks' });
    await runFeed({ db: t.handle.db, fetch: allowAll }, feed.body.id);
    const deleted = await own.delete(`/v1/feeds/${feed.body.id}`);
    expect(deleted.status).toBe(204);
    expect((await own.get(`/v1/feeds/${feed.body.id}`)).status).toBe(404);
    expect((await own.get('/v1/artworks')).body.artworks.map((a: { title: string }) => a.title)).toEqual(['Kept Work']);
  });

  test('five failed runs in a row pause the feed with the reason', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    const feed = await own.post('/v1/feeds', { url: files.url('/missing.csv'), kind: 'artworks' });
    for (let i = 0; i < 5; i++) {
      await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feed.body.id}`}`.execute(t.handle.db);
      await runFeed({ db: t.handle.db, fetch: allowAll }, feed.body.id);
    }
    const paused = (await own.get(`/v1/feeds/${feed.body.id}`)).body;
    expect(paused).toMatchObject({ paused: true, next_run_at: null, last_run: { status: 'failed', error: 'HTTP 404', http_status: 404 } });
    expect(paused.paused_reason).toMatch(/5 runs in a row failed; the last: HTTP 404/);
    const resumed = await own.put(`/v1/feeds/${feed.body.id}`, { paused: false });
    expect(resumed.body).toMatchObject({ paused: false, paused_reason: null });
  });

  test('a feed on a private address is refused when private addresses are not allowed, a redirect to one included', async () => {
    files.set('/private.csv', csv('title', 'Secret'));
    files.redirect('/hop.csv', files.url('/private.csv'));
    const other = await tenant(t);
    const own = client(t, other.key);
    const feed = await own.post('/v1/feeds', { url: files.url('/hop.csv'), kind: 'artworks' });
    await runFeed({ db: t.handle.db, fetch: feedFetcher(publicAddress) }, feed.body.id);
    expect((await own.get(`/v1/feeds/${feed.body.id}`)).body.last_run).toMatchObject({ status: 'failed', error: 'address not allowed: a private or local address (FETCH_ALLOW_PRIVATE=true allows it in development)' });
    expect((await own.get('/v1/artworks')).body.artworks).toEqual([]);
  });

  test('a file of 30 MB is refused and writes nothing', async () => {
    files.set('/huge.csv', Buffer.concat([Buffer.from('title\r\n'), Buffer.alloc(30 * 1024 * 1024, 'a\r\n')]));
    const other = await tenant(t);
    const own = client(t, other.key);
    const feed = await own.post('/v1/feeds', { url: files.url('/huge.csv'), kind: 'artworks' });
    await runFeed({ db: t.handle.db, fetch: allowAll }, feed.body.id);
    const run = (await own.get(`/v1/feeds/${feed.body.id}`)).body.last_run;
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/^too large/);
    expect((await own.get('/v1/artworks')).body.artworks).toEqual([]);
  });
});
