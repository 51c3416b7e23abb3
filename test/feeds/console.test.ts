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
  test('Connect shows the preview the API answers: the first rows as they would be written, in the gallery\'s words, with the problems and their level', async () => {
    const gallery2 = await tenant(t, { name: 'Galerie Vorschau' });
    const api = client(t, gallery2.key);
    const existing = await api.post('/v1/artworks', { title: 'Mohn (alt)', external_id: 'V1' });
    expect(existing.status).toBe(201);
    const staff = await signedIn(t, base, gallery2.entityId, 'editor');
    files.set('/vorschau.csv', csv(
      'Inventar-Nr.;Titel;Künstler;Preis;Preis auf Anfrage;Verfügbarkeit',
      'V1;Mohn;Ida Kerkovius;€ 12.500;nein;verfügbar',
      'V2;Winter;Ida Kerkovius;9800;ja;unverkäuflich',
      'V3;Herbst;Ida Kerkovius;12,50;;verkauft',
    ));
    const connected = await staff.post('/console/feeds/connect', { url: files.url('/vorschau.csv'), kind: 'artworks' });
    const id = /\/console\/import\/([\w-]+)$/.exec(connected.location ?? '')![1]!;
    const mapping = { 'Inventar-Nr.': 'external_id', Titel: 'title', Künstler: 'artist_name', Preis: 'price', 'Preis auf Anfrage': 'price_on_request', Verfügbarkeit: 'availability' };
    expect((await staff.post(`/console/import/${id}/columns`, Object.fromEntries(Object.values(mapping).map((field, i) => [`column_${i}`, field])))).status).toBe(303);
    const page = (await staff.get(`/console/import/${id}/preview`)).text;
    const answer = (await api.post('/v1/feeds/preview', { url: files.url('/vorschau.csv'), kind: 'artworks', mapping })).body;
    expect(answer.rows.map((r: { action: string }) => r.action)).toEqual(['update', 'create', 'refused']);
    // The same counts, rows and problems as the API's answer, the values as the gallery reads them.
    expect(page).toContain(`${answer.counts.rows} rows: ${answer.counts.created} to create, ${answer.counts.updated} to update, ${answer.counts.unchanged} unchanged, ${answer.counts.refused} refused`);
    expect(page).toContain('<td data-label="Column">Verfügbarkeit</td><td data-label="Field">Availability</td>');
    expect(page).toContain(`<td data-label="Action">Update</td><td data-label="Record"><a href="/console/artworks/${existing.body.id}">#${existing.body.id}</a></td>`);
    expect(page).toContain('<b>Price:</b> EUR 12,500');
    expect(page).toContain('<b>Availability:</b> Available');
    expect(page).toContain('<b>Price on request</b>');
    expect(page).toContain('<b>Availability:</b> Not for sale');
    expect(page).not.toMatch(/on_request|not_for_sale/);
    for (const problem of answer.problems as { line: number; message: string; level: string }[]) {
      expect(page).toContain(`<td data-label="Line">${problem.line}</td>`);
      expect(page).toContain(problem.level === 'error' ? '<b>refused</b>' : 'warning, written');
    }
    expect(answer.problems.map((p: { level: string }) => p.level)).toEqual(expect.arrayContaining(['error', 'warning']));
  });
  test('a long file\'s preview lists its first 20 rows, its counts covering every row', async () => {
    files.set('/lang.csv', csv('Inv;Titel', ...Array.from({ length: 25 }, (_, i) => `L${i + 1};Blatt ${i + 1}`)));
    const connected = await editor.post('/console/feeds/connect', { url: files.url('/lang.csv'), kind: 'artworks' });
    const id = /\/console\/import\/([\w-]+)$/.exec(connected.location ?? '')![1]!;
    expect((await editor.post(`/console/import/${id}/columns`, { column_0: 'external_id', column_1: 'title' })).status).toBe(303);
    const page = (await editor.get(`/console/import/${id}/preview`)).text;
    expect(page).toContain('25 rows: 25 to create, 0 to update');
    expect(page).toContain('The first 20 rows');
    expect(page).toContain('Blatt 20');
    expect(page).not.toContain('Blatt 21');
  });
});
