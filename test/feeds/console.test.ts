import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runFeed } from '../../src/feeds/run.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, type ConsoleSession } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { workbook } from '../support/spreadsheets.js';

/** The console's Feeds page through real HTTP (docs/console.md, Feeds): connect → columns → preview → Save, then the feed's buttons. */

describe('console feeds', { timeout: 120_000 }, () => {
  let t: TestApp;
  let files: FileServer;
  let base: string;
  let gallery: Tenant;
  let editor: ConsoleSession & { email: string };

  beforeAll(async () => {
    files = await fileServer();
    // Runs are driven by the test (runFeed, as the feed's job does), not by the app's job runner.
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Feeds' });
    editor = await signedIn(t, base, gallery.entityId, 'editor');
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await files?.close();
  });

  const run = (feedId: number) => runFeed({ db: t.handle.db, fetch: t.app.feedFetch }, feedId);

  test('an editor connects a URL, maps its columns as in Import, sees the preview, saves, and the first run fills the catalog', async () => {
    files.set('/bestand.csv', csv('Inventar-Nr.;Titel;Künstler', 'K1;Mohn;Ida Kerkovius', 'K2;Winter;Ida Kerkovius'));
    const page = await editor.get('/console/feeds');
    expect(page.status).toBe(200);
    expect(page.text).toContain('Google Sheets');
    const connected = await editor.post('/console/feeds/connect', { url: files.url('/bestand.csv'), kind: 'artworks' });
    expect(connected.status).toBe(303);
    const id = /\/console\/import\/([\w-]+)$/.exec(connected.location ?? '')![1]!;
    const columns = await editor.get(`/console/import/${id}`);
    expect(columns.text).toContain('Match the columns');
    // A feed's flow offers another address, not another file; targets are named in the gallery's words, never read-only fields.
    expect(columns.text).toContain('>Use another address</a>');
    expect(columns.text).not.toContain('Upload another file');
    expect(columns.text).toContain('>Inventory number</option>');
    expect(columns.text).toContain('>Price on request (yes/no)</option>');
    expect(columns.text).not.toMatch(/value="(source_fingerprint|id|created_at|last_synced_at)"/);
    expect(columns.text).toContain('Connect');
    expect((await editor.post(`/console/import/${id}/columns`, { column_0: 'external_id', column_1: 'title', column_2: 'artist_name' })).status).toBe(303);
    const preview = await editor.get(`/console/import/${id}/preview`);
    expect(preview.text).toContain('would create 2');
    expect(preview.text).toContain('action="/console/feeds/save/');
    // The preview of a feed is saved, never applied from the Import page.
    expect((await editor.post(`/console/import/${id}/apply`)).location).toBe(`/console/import/${id}/preview`);
    const saved = await editor.post(`/console/feeds/save/${id}`, { mode: 'mirror', interval_minutes: '30' });
    expect(saved.status).toBe(303);
    const api = client(t, gallery.key);
    const [feed] = (await api.get('/v1/feeds')).body.feeds;
    expect(feed).toMatchObject({ url: files.url('/bestand.csv'), mode: 'mirror', interval_minutes: 30, mapping: { 'Inventar-Nr.': 'external_id', Titel: 'title', Künstler: 'artist_name' }, last_run: { status: 'queued' } });
    await run(feed.id);
    expect((await api.get('/v1/artworks')).body.artworks.map((a: { title: string }) => a.title)).toEqual(['Mohn', 'Winter']);
    const source = (await api.get('/v1/changelog')).body.changes.find((c: { entity_type: string }) => c.entity_type === 'artwork').source;
    expect(source).toBe(`feed:${feed.id}`);
    const list = await editor.get('/console/feeds');
    expect(list.text).toContain('<b>applied</b>');
    expect(list.text).toContain('created 2');
  });

  test('a failed run shows on the Overview and on the feed, Run now is once a minute, Pause and Delete work', async () => {
    const api = client(t, gallery.key);
    const [feed] = (await api.get('/v1/feeds')).body.feeds;
    files.set('/bestand.csv', csv('Inventar-Nr.;Titel;Artist', 'K1;Mohn;Ida Kerkovius'));
    expect((await editor.post(`/console/feeds/${feed.id}/run`)).status).toBe(303);
    await run(feed.id);
    const overview = await editor.get('/console');
    expect(overview.text).toContain('Feeds that need you');
    expect(overview.text).toContain('column &#39;Künstler&#39; is no longer in the file');
    const again = await editor.post(`/console/feeds/${feed.id}/run`);
    expect(again.status).toBe(429);
    expect(again.text).toContain('less than a minute ago');
    expect((await editor.post(`/console/feeds/${feed.id}/pause`)).location).toBe('/console/feeds?done=paused');
    expect((await api.get(`/v1/feeds/${feed.id}`)).body.paused).toBe(true);
    expect((await editor.post(`/console/feeds/${feed.id}/delete`)).location).toBe('/console/feeds?done=deleted');
    expect((await api.get('/v1/feeds')).body.feeds).toEqual([]);
    expect((await api.get('/v1/artworks')).body.artworks).toHaveLength(2);
  });

  test('a viewer may not open the Feeds page, and another entity\'s feed is not found', async () => {
    const viewer = await signedIn(t, base, gallery.entityId, 'viewer');
    expect((await viewer.get('/console/feeds')).status).toBe(403);
    const other = await tenant(t);
    const theirs = await client(t, other.key).post('/v1/feeds', { url: files.url('/theirs.csv'), kind: 'artworks', paused: true });
    expect((await editor.post(`/console/feeds/${theirs.body.id}/delete`)).status).toBe(404);
    expect((await client(t, other.key).get(`/v1/feeds/${theirs.body.id}`)).status).toBe(200);
  });

  test('an Excel workbook whose list is not its first sheet is connected by naming the sheet; a wrong name is said in one line', async () => {
    files.set('/inventar.xlsx', await workbook({
      Notes: [['Read me'], ['Prices are net.']],
      Bestand: [['Inv', 'Title'], ['X1', 'Blaue Stunde'], ['X2', 'Abendrot']],
    }), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect((await editor.get('/console/feeds')).text).toContain('name="sheet"');
    const wrong = await editor.post('/console/feeds/connect', { url: files.url('/inventar.xlsx'), kind: 'artworks', sheet: 'Stock' });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toMatch(/Stock/);
    const connected = await editor.post('/console/feeds/connect', { url: files.url('/inventar.xlsx'), kind: 'artworks', sheet: ' Bestand ' });
    expect(connected.status).toBe(303);
    const id = /\/console\/import\/([\w-]+)$/.exec(connected.location ?? '')![1]!;
    const columns = await editor.get(`/console/import/${id}`);
    expect(columns.text).toContain('2 rows');
    expect(columns.text).toContain('Blaue Stunde');
    expect((await editor.post(`/console/import/${id}/columns`, { column_0: 'external_id', column_1: 'title' })).status).toBe(303);
    expect((await editor.get(`/console/import/${id}/preview`)).text).toContain('would create 2');
    expect((await editor.post(`/console/feeds/save/${id}`, { mode: 'merge', interval_minutes: '60' })).status).toBe(303);
    const feed = (await client(t, gallery.key).get('/v1/feeds')).body.feeds.find((f: { url: string }) => f.url === files.url('/inventar.xlsx'));
    expect(feed).toMatchObject({ sheet: 'Bestand', mapping: { Inv: 'external_id', Title: 'title' } });
    await run(feed.id);
    expect((await client(t, gallery.key).get(`/v1/feeds/${feed.id}`)).body.last_run).toMatchObject({ status: 'applied', counts: { rows: 2, created: 2 } });
    // Edit mapping reads the same sheet again.
    const remap = await editor.post(`/console/feeds/${feed.id}/mapping`);
    expect(remap.status).toBe(303);
    expect((await editor.get(remap.location!)).text).toContain('Blaue Stunde');
  });
});
