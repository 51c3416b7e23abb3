import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, uploadToImport as upload, type ConsoleSession } from '../support/console.js';
import { hostileXlsx, unzip, workbook, zip } from '../support/spreadsheets.js';

/** The JSON bomb: 650 KB, 50,000 items with a key each. */
const jsonBomb = (items = 50_000): Buffer => Buffer.from(`[${Array.from({ length: items }, (_, i) => `{"k${i}":1}`).join(',')}]`);

/**
 * The console's Import page under attack (docs/api.md, Bounds on what a file may hold; docs/security-testing.md):
 * zips whose entries as exceljs (through JSZip) reads them are not the entries a checker trusting the end
 * record would check, and files made to exhaust the reader. Each is refused in one line, nothing written,
 * the process alive, its memory bounded, another gallery answered meanwhile.
 */

const ROWS = [['title', 'external_id'], ['Hidden Work', 'H-1']];

/** The page's one message, as the editor reads it. */
const shown = (html: string): string => {
  const notice = /<div class="notice notice-error" role="alert">([^<]*)<\/div>/.exec(html)?.[1];
  return notice === undefined ? html.slice(0, 300) : notice.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#34;/g, '"').replace(/&amp;/g, '&');
};

describe('the console Import page under attack', { timeout: 180_000 }, () => {
  let t: TestApp;
  let base: string;
  let attacker: Tenant;
  let other: Tenant;
  let editor: ConsoleSession;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    attacker = await tenant(t, { name: 'Galerie Zip' });
    other = await tenant(t, { name: 'Galerie Bystander' });
    editor = await signedIn(t, base, attacker.entityId, 'editor');
    await client(t, other.key).post('/v1/artworks', { title: 'Still here' });
  }, 120_000);
  afterAll(async () => t.close());

  const changelogTotal = async () => (await client(t, attacker.key).get('/v1/changelog')).body.total;

  test('the same workbook zipped plainly is read (the shapes below differ from it only in their zip)', async () => {
    const answer = await upload(editor, 'plain.xlsx', zip(unzip(await workbook({ Sheet1: ROWS }))));
    expect(answer.status).toBe(303);
  });

  test('the 1 GiB entry hidden by the understated count: the process grows by less than 100 MB while refusing it (3 GB before), another gallery answered meanwhile', async () => {
    const bytes = await hostileXlsx('understated', ROWS);
    expect(bytes.length).toBeLessThan(2 * 1024 * 1024);
    const atRest = process.memoryUsage().rss;
    let highest = atRest;
    const sampler = setInterval(() => { highest = Math.max(highest, process.memoryUsage().rss); }, 5);
    try {
      const [answer, read] = await Promise.all([upload(editor, 'hidden.xlsx', bytes), client(t, other.key).get('/v1/artworks')]);
      expect(answer.status).toBe(400);
      expect(shown(answer.text)).toMatch(/^Not a valid xlsx file: /);
      expect(read.status).toBe(200);
      expect(read.body.artworks[0].title).toBe('Still here');
    } finally {
      clearInterval(sampler);
    }
    // This process is the server and the test runner, and other files may have run in it before: what is
    // asserted is what refusing the file added (gigabytes before the fix), which keeps a server at rest
    // (137 MB in the run) under 400 MB.
    expect(highest - atRest).toBeLessThan(100 * 1024 * 1024);
  });

  test.each([
    ['whose end record counts one entry fewer than it holds', 'understated', /^Not a valid xlsx file: its zip directory holds \d+ entries but its end record counts \d+\.$/],
    ['whose sheet\'s local header names it as the directory does not', 'renamed', /^Not a valid xlsx file: the part "xl\/media\/image9\.png" is named "xl\/worksheets\/sheet1\.xml" where its data is\.$/],
    ['with bytes before its first entry', 'prefixed', /^Not a valid xlsx file: bytes come before its first zip entry\.$/],
  ] as const)('a zip %s is refused in one line, nothing held or written', async (_, shape, message) => {
    const before = await changelogTotal();
    const answer = await upload(editor, `${shape}.xlsx`, await hostileXlsx(shape, ROWS));
    expect(answer.status).toBe(400);
    expect(shown(answer.text)).toMatch(message);
    expect(await changelogTotal()).toBe(before);
  });

  test('cells written <c\\tr=, <c\\nr=, <c\\r\\nr= are counted: 1,000,001 of them are refused by the cell bound', async () => {
    const answer = await upload(editor, 'whitespace.xlsx', await hostileXlsx('whitespace', ROWS, 1_000_001));
    expect(answer.status).toBe(400);
    expect(shown(answer.text)).toBe('The workbook holds more than 1,000,000 cells, more than one import may read; split it into several files.');
  });

  test.each([
    ['an Excel row with a value past its header after an empty cell (a TypeError, answered 500)', 'gap.xlsx',
      () => workbook({ Sheet1: [['title', 'external_id'], ['A', 'A-1', undefined, 'stray']] }), 'Row 2 has a value in column D, which has no header.'],
    ['a JSON file nested 2,000,000 levels deep', 'deep.json', async () => Buffer.from('['.repeat(2_000_000)), 'The JSON nests deeper than 32 levels; a file holds an array of items of plain values.'],
    ['a CSV of 400,001 one-cell rows', 'narrow.csv', async () => Buffer.from(`title\n${'ab\n'.repeat(400_001)}`), 'The file holds more than 400,000 rows, more than one import may read; split it into several files.'],
  ])('%s uploaded on the Import page: 400 with one message, nothing written', async (_, name, bytes, message) => {
    const before = (await client(t, attacker.key).get('/v1/changelog')).body.total;
    const answered = await upload(editor, name, await bytes());
    expect(answered.status).toBe(400);
    expect(answered.text).toContain(message);
    expect((await client(t, attacker.key).get('/v1/changelog')).body.total).toBe(before);
  });

  test('the JSON bomb uploaded on the Import page: one message, nothing written, the process alive, another gallery\'s reads answered meanwhile', async () => {
    const before = (await client(t, attacker.key).get('/v1/changelog')).body.total;
    const heapBefore = process.memoryUsage().heapUsed;
    const answered = await upload(editor, 'bomb.json', jsonBomb());
    expect(answered.status).toBe(400);
    expect(answered.text).toContain('The items use more than 200 distinct keys; a file may have at most 200 columns.');
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    expect((await client(t, attacker.key).get('/v1/changelog')).body.total).toBe(before);
    const durations: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const read = await client(t, other.key).get('/v1/artworks');
      durations.push(performance.now() - started);
      expect(read.status).toBe(200);
      expect(read.body.artworks[0].title).toBe('Still here');
    }
    durations.sort((a, b) => a - b);
    // No read waits behind the refused files (a stall would be seconds); the 50 ms budget is measured by benchmarks.
    expect(durations[18]).toBeLessThan(1_000);
  });
});
