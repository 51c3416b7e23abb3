import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, uploadToImport as upload, type ConsoleSession } from '../support/console.js';
import { workbook, zipBomb } from '../support/spreadsheets.js';

/** The Import page through real HTTP (docs/console.md, Import), on both dialects: upload → encoding → columns → preview → Apply → summary. */

const FIXTURES = join(import.meta.dirname, '..', 'fixtures');

/** A messy export: Windows-1252 bytes, semicolons, headers in mixed case and languages, a column to leave out, a price for people. */
const LATIN1_CSV = Buffer.from([
  'TITLE;Artist_Name;Jahr;Inventar-Nr.;Price;Notiz',
  'Mädchen am Fenster;Käthe Kollwitz;1912;KK-12;4500;gerahmt',
  'Straße im Regen;Günther Förg;1989;GF-89;"12.500,00 €";',
  'Café Noir;Françoise Gilot;1950;FG-50;3200;signiert',
  'Café Noir;Françoise Gilot;1950;FG-50;3300;Dublette',
].join('\r\n').replace('€', '\x80'), 'latin1'); // Windows-1252 writes € as 0x80

/** Follows the Apply's progress page until the summary shows (the page refreshes itself without JavaScript). */
async function applyAndWait(session: ConsoleSession, id: string) {
  const applied = await session.post(`/console/import/${id}/apply`);
  expect(applied.status).toBe(303);
  for (let i = 0; i < 200; i++) {
    const page = await session.get(`/console/import/${id}/progress`);
    if (!page.text.includes('id="import-bar"')) return page;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the import did not finish');
}

const uploadId = (location: string | null) => /\/console\/import\/([\w-]+)$/.exec(location ?? '')![1]!;

describe('console import', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let editor: ConsoleSession & { email: string };

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Import' });
    editor = await signedIn(t, base, gallery.entityId, 'editor');
  }, 120_000);
  afterAll(async () => t.close());

  const changelogTotal = async () => (await client(t, gallery.key).get('/v1/changelog')).body.total;

  test('a Latin-1 semicolon CSV: the encoding is offered, columns are suggested and mapped, the preview writes nothing, Apply writes as console:<user id>', async () => {
    const before = await changelogTotal();
    const uploaded = await upload(editor, 'Bestand.csv', LATIN1_CSV);
    expect(uploaded.status).toBe(303);
    const id = uploadId(uploaded.location);

    const encoding = await editor.get(`/console/import/${id}`);
    expect(encoding.text).toContain('is not valid UTF-8: line 2 has the byte 0xE4');
    expect(encoding.text).toContain('Mädchen am Fenster;Käthe Kollwitz');
    expect((await editor.post(`/console/import/${id}/encoding`, { encoding: 'latin1' })).status).toBe(303);

    const columns = await editor.get(`/console/import/${id}`);
    expect(columns.text).toContain('read as Windows-1252');
    const selected = (i: number) => /<option value="([^"]*)" selected>/.exec(columns.text.split(`name="column_${i}"`)[1]!)![1];
    // TITLE and Artist_Name are field names in another case; Jahr and Inventar-Nr. are the gallery's words for two more; Notiz is private.
    expect([0, 1, 2, 3, 4, 5].map(selected)).toEqual(['title', 'artist_name', 'creation_year', 'external_id', 'price', '']);

    const previewed = await editor.post(`/console/import/${id}/columns`, {
      column_0: 'title', column_1: 'artist_name', column_2: 'creation_year', column_3: 'external_id', column_4: 'price', column_5: '',
    });
    expect(previewed.status).toBe(303);
    const preview = await editor.get(`/console/import/${id}/preview`);
    // "12.500,00 €" is read as galleries write it: 12500 EUR (docs/push.md, How values are read).
    expect(preview.text).toContain('dry run, nothing written: 4 rows: would create 3, update 0, leave unchanged 0, duplicate 1, failed 0');
    // Prices naming no currency (the profile has none) are written, and shown as warnings.
    expect(preview.text).toContain('Written with a warning (2)');
    expect(preview.text).toContain('price: no currency');
    expect(preview.text).toContain('same artwork as line 4 (external_id &#34;FG-50&#34;): not sent');
    expect(await changelogTotal()).toBe(before);

    const summary = await applyAndWait(editor, id);
    expect(summary.text).toContain('4 rows: created 3, updated 0, unchanged 0, duplicate 1, failed 0');
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.title, a.artist_name, a.creation_year, a.external_id, a.price, a.currency])).toEqual([
      ['Mädchen am Fenster', 'Käthe Kollwitz', 1912, 'KK-12', 4500, null], ['Straße im Regen', 'Günther Förg', 1989, 'GF-89', 12500, 'EUR'],
      ['Café Noir', 'Françoise Gilot', 1950, 'FG-50', 3200, null],
    ]);
    const userId = (await t.handle.db.selectFrom('users').select('id').where('email', '=', editor.email).executeTakeFirstOrThrow()).id;
    const sources = (await client(t, gallery.key).get('/v1/changelog?limit=100')).body.changes.filter((c: any) => c.entity_type === 'artwork').map((c: any) => c.source);
    expect(sources).toEqual([`console:${userId}`, `console:${userId}`, `console:${userId}`]);
    // The Apply is a run (docs/api.md, Runs): listed with its counts, each of its writes naming it.
    const [run] = (await client(t, gallery.key).get('/v1/runs')).body.runs;
    expect(run).toMatchObject({
      kind: 'import', feed_id: null, record_kind: 'artworks', source: `console:${userId}`, status: 'applied', undone_by: null,
      counts: { rows: 4, created: 3, updated: 0, unchanged: 0, deleted: 0, refused: 0, duplicates: 1 },
    });
    const ofRun = (await client(t, gallery.key).get(`/v1/changelog?run_id=${run.id}`)).body.changes;
    expect(ofRun.filter((c: any) => c.entity_type === 'artwork').map((c: any) => [c.action, c.run_id])).toEqual([['create', run.id], ['create', run.id], ['create', run.id]]);
  });

  test('choosing UTF-8 for a file that is not UTF-8 answers the line and the byte, and what to choose instead', async () => {
    const id = uploadId((await upload(editor, 'Bestand.csv', LATIN1_CSV)).location);
    const refused = await editor.post(`/console/import/${id}/encoding`, { encoding: 'utf8' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Line 2 is not valid UTF-8 (byte 0xE4). If the file was saved by an older spreadsheet program, upload it again and choose Windows-1252 / Latin-1.');
  });

  test('an .xlsx saved by LibreOffice imports after its two unknown columns are mapped; a second import of it changes nothing', async () => {
    const bytes = readFileSync(join(FIXTURES, 'gallery-stock.xlsx'));
    const id = uploadId((await upload(editor, 'gallery-stock.xlsx', bytes)).location);
    const columns = await editor.get(`/console/import/${id}`);
    expect(columns.text).toContain('3 rows of artworks');
    const choice = { column_0: 'external_id', column_1: 'title', column_2: 'artist_name', column_3: 'creation_year', column_4: 'price', column_5: 'currency', column_6: 'availability' };
    await editor.post(`/console/import/${id}/columns`, choice);
    expect((await editor.get(`/console/import/${id}/preview`)).text).toContain('would create 3, update 0, leave unchanged 0, duplicate 0, failed 0');
    expect((await applyAndWait(editor, id)).text).toContain('3 rows: created 3, updated 0, unchanged 0, duplicate 0, failed 0');
    const again = uploadId((await upload(editor, 'gallery-stock.xlsx', bytes)).location);
    await editor.post(`/console/import/${again}/columns`, choice);
    expect((await applyAndWait(editor, again)).text).toContain('Nothing changed in the catalog.');
    const stock = (await client(t, gallery.key).get('/v1/artworks?limit=100')).body.artworks.filter((a: any) => a.external_id?.startsWith('LO-'));
    expect(stock.map((a: any) => [a.external_id, a.title, a.creation_year, a.price, a.currency, a.availability])).toEqual([
      ['LO-1', 'Morning Field', 2021, 4800, 'EUR', 'available'], ['LO-2', 'Evening Field', 2022, 5200, 'EUR', 'reserved'], ['LO-3', 'Salt Marsh', 2019, 3100, 'EUR', 'sold'],
    ]);
  });

  test('a workbook of several sheets asks which one to read; a sheet that cannot be read says why and the workbook stays held for another', async () => {
    const bytes = await workbook({
      Notes: [['Kept by the registrar']],
      Bestand: [['Title', 'Artist', 'Year', 'Inventory No.'], ['Blue Hour', 'Anna Berg', 2019, 'SH-1'], ['Low Tide', 'Anna Berg', 2020, 'SH-2']],
      Empty: [],
    });
    const id = uploadId((await upload(editor, 'Workbook.xlsx', bytes)).location);
    const choice = await editor.get(`/console/import/${id}`);
    expect(choice.status).toBe(200);
    expect(choice.text).toContain('<b>Workbook.xlsx</b> has 3 sheets');
    expect([...choice.text.matchAll(/name="sheet" value="([^"]*)"( checked)?/g)].map((m) => [m[1], m[2] !== undefined])).toEqual([['Notes', true], ['Bestand', false], ['Empty', false]]);

    const unknown = await editor.post(`/console/import/${id}/sheet`, { sheet: 'Sheet9' });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain('Choose one of the sheets below.');
    const headerOnly = await editor.post(`/console/import/${id}/sheet`, { sheet: 'Notes' });
    expect(headerOnly.status).toBe(400);
    expect(headerOnly.text).toContain('The sheet &#34;Notes&#34; has a header row but no data rows.');
    expect(headerOnly.text).toContain('name="sheet" value="Bestand"');
    expect((await editor.post(`/console/import/${id}/sheet`, { sheet: 'Empty' })).text).toContain('The sheet &#34;Empty&#34; is empty.');

    expect((await editor.post(`/console/import/${id}/sheet`, { sheet: 'Bestand' })).status).toBe(303);
    const columns = await editor.get(`/console/import/${id}`);
    expect(columns.text).toContain('2 rows of artworks from the sheet <b>Bestand</b>');
    // Once read, the choice is closed: a late post of another sheet changes nothing.
    expect((await editor.post(`/console/import/${id}/sheet`, { sheet: 'Notes' })).status).toBe(303);
    expect((await editor.get(`/console/import/${id}`)).text).toContain('from the sheet <b>Bestand</b>');
    await editor.post(`/console/import/${id}/columns`, { column_0: 'title', column_1: 'artist_name', column_2: 'creation_year', column_3: 'external_id' });
    expect((await applyAndWait(editor, id)).text).toContain('2 rows: created 2, updated 0, unchanged 0, duplicate 0, failed 0');
    const read = (await client(t, gallery.key).get('/v1/artworks?limit=100')).body.artworks.filter((a: any) => a.external_id?.startsWith('SH-'));
    expect(read.map((a: any) => [a.external_id, a.title, a.creation_year])).toEqual([['SH-1', 'Blue Hour', 2019], ['SH-2', 'Low Tide', 2020]]);
  });

  test('a file that could not be read is let go: its page answers 404 and says to upload it again, never a 500', async () => {
    const id = uploadId((await upload(editor, 'Bestand.csv', LATIN1_CSV)).location);
    expect((await editor.post(`/console/import/${id}/encoding`, { encoding: 'utf8' })).status).toBe(400);
    const page = await editor.get(`/console/import/${id}`);
    expect(page.status).toBe(404);
    expect(page.text).toContain('Upload the file again.');
  });

  test('a page asked for while its file is being read waits for the read: a double click on Continue shows the columns', async () => {
    const stock = [['Title', 'Artist', 'Inventory No.'], ...Array.from({ length: 8000 }, (_, i) => [`Work ${i}`, 'Anna Berg', `DC-${i}`])];
    const id = uploadId((await upload(editor, 'Big.xlsx', await workbook({ Notes: [['Kept by the registrar']], Stock: stock }))).location);
    // The page is asked for once the server has begun the read (not before: a GET that arrives first
    // rightly shows the sheet choice still), so it must wait for the read, however the requests interleave.
    const held = t.app.heldImports;
    const readTurn = held.readTurn.bind(held);
    let started!: () => void;
    const readStarted = new Promise<void>((resolve) => (started = resolve));
    held.readTurn = (...args) => {
      started();
      return readTurn(...args);
    };
    try {
      const posts = [
        editor.post(`/console/import/${id}/sheet`, { sheet: 'Stock' }),
        editor.post(`/console/import/${id}/sheet`, { sheet: 'Stock' }),
      ];
      await readStarted;
      const [first, second, page] = await Promise.all([...posts, editor.get(`/console/import/${id}`)]);
      expect([first.status, second!.status]).toEqual([303, 303]);
      expect(page!.status).toBe(200);
      expect(page!.text).toContain('8,000 rows of artworks from the sheet <b>Stock</b>');
    } finally {
      // The instance's own property goes; its class's method answers again.
      delete (held as Partial<typeof held>).readTurn;
    }
  });

  test('while two files are being read in the process, an upload waits its turn; one that gets none is 503 with Retry-After', async () => {
    const csv = Buffer.from('Title,Artist\nBlue Hour,Anna Berg\n');
    // Another gallery reads two files (both of the process's turns).
    const turns = [(await t.app.heldImports.readTurn(-1))!, (await t.app.heldImports.readTurn(-1))!];
    const refused = await upload(editor, 'Waiting.csv', csv);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(refused.text).toContain('The server is reading other large files right now');
    const waiting = upload(editor, 'Waiting.csv', csv);
    setTimeout(turns[0]!, 300);
    const answer = await waiting;
    expect(answer.status).toBe(303);
    turns[1]!();
    expect((await editor.get(`/console/import/${uploadId(answer.location)}`)).status).toBe(200);
  });

  test('mirror deletes at most half of the records unless the deletions are confirmed', async () => {
    const other = await tenant(t, { name: 'Galerie Spiegel' });
    const mirrorEditor = await signedIn(t, base, other.entityId, 'editor');
    await client(t, other.key).post('/v1/artworks/batch', { items: ['A', 'B', 'C', 'D'].map((title) => ({ title })) });
    const id = uploadId((await upload(mirrorEditor, 'one.csv', Buffer.from('title\nA\n'))).location);
    await mirrorEditor.post(`/console/import/${id}/columns`, { column_0: 'title', mirror: 'yes' });
    const blocked = await mirrorEditor.get(`/console/import/${id}/preview`);
    expect(blocked.text).toContain('Not mirrored: mirroring would delete 3 of the 4 artworks, more than half');
    expect(blocked.text).toContain('Yes, delete 3 artworks, more than half');
    expect(blocked.text).not.toContain('>Apply</button>');
    await mirrorEditor.post(`/console/import/${id}/columns`, { column_0: 'title', mirror: 'yes', force: 'yes' });
    expect((await mirrorEditor.get(`/console/import/${id}/preview`)).text).toContain('would create 0, update 0, leave unchanged 1, duplicate 0, failed 0, delete 3');
    expect((await applyAndWait(mirrorEditor, id)).text).toContain('1 rows: created 0, updated 0, unchanged 1, duplicate 0, failed 0, deleted 3');
    expect((await client(t, other.key).get('/v1/artworks')).body.artworks.map((a: any) => a.title)).toEqual(['A']);
  });

  test('a viewer gets 403 on the Import page and on an upload, and nothing is held or written', async () => {
    const viewer = await signedIn(t, base, gallery.entityId, 'viewer');
    expect((await viewer.get('/console/import')).status).toBe(403);
    const form = new FormData();
    form.append('kind', 'artworks');
    form.append('file', new Blob(['title\nViewer Work\n']), 'v.csv');
    const before = await changelogTotal();
    expect((await viewer.request('POST', `/console/import?_csrf=${encodeURIComponent(viewer.csrf)}`, form)).status).toBe(403);
    expect(await changelogTotal()).toBe(before);
  });

  test('another user cannot open an upload by its id: 404', async () => {
    const id = uploadId((await upload(editor, 'mine.csv', Buffer.from('title\nMine\n'))).location);
    const colleague = await signedIn(t, base, gallery.entityId, 'editor');
    expect((await colleague.get(`/console/import/${id}`)).status).toBe(404);
    expect((await colleague.post(`/console/import/${id}/apply`)).status).toBe(404);
  });

  test.each([
    ['a file over 20 MB', 'big.csv', () => Buffer.alloc(21 * 1024 * 1024, 0x61), 413, 'The file is larger than 20 MB, the most an upload may be.'],
    ['a CSV of one 20 MB line', 'line.csv', () => Buffer.alloc(20_000_000, 0x61), 400, 'Line 1 starts a record of more than 1,048,576 characters: not a CSV file with one row per line.'],
    ['a zip bomb .xlsx', 'bomb.xlsx', () => zipBomb(8 * 1024 * 1024, 1000), 400, 'inflates to more than the 1000 bytes it declares'],
    ['an empty file', 'empty.csv', () => Buffer.alloc(0), 400, 'The file is empty.'],
  ])('%s is refused on the upload page with a clear message', async (_, name, bytes, status, message) => {
    const answer = await upload(editor, name, bytes());
    expect(answer.status).toBe(status);
    expect(answer.text).toContain(message);
  });
});
