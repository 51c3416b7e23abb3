import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readTable } from '../../src/import/table.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, type ConsoleSession } from '../support/console.js';
import { hostileXlsx, unzip, workbook, zip } from '../support/spreadsheets.js';

/**
 * Zips whose entries as exceljs (through JSZip) reads them are not the entries a checker trusting the end
 * record would check (docs/api.md, Bounds on what a file may hold; docs/security-testing.md): each is
 * refused on the console's Import page in one line, nothing written, the process alive, its memory bounded.
 */

const ROWS = [['title', 'external_id'], ['Hidden Work', 'H-1']];

async function upload(session: ConsoleSession, name: string, bytes: Buffer) {
  const page = await session.get('/console/import');
  const action = /action="(\/console\/import\?_csrf=[^"]+)"/.exec(page.text)![1]!.replace(/&amp;/g, '&');
  const form = new FormData();
  form.append('kind', 'artworks');
  form.append('file', new Blob([new Uint8Array(bytes)]), name);
  return session.request('POST', action, form);
}

/** The page's one message, as the editor reads it. */
const shown = (html: string): string => {
  const notice = /<div class="notice notice-error" role="alert">([^<]*)<\/div>/.exec(html)?.[1];
  return notice === undefined ? html.slice(0, 300) : notice.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#34;/g, '"').replace(/&amp;/g, '&');
};

describe('hostile zips on the console Import page', { timeout: 180_000 }, () => {
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

  test('the 1 GiB entry hidden by the understated count: the process stays under 400 MB while refusing it, another gallery answered meanwhile', async () => {
    const bytes = await hostileXlsx('understated', ROWS);
    expect(bytes.length).toBeLessThan(2 * 1024 * 1024);
    let highest = process.memoryUsage().rss;
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
    expect(highest).toBeLessThan(400 * 1024 * 1024);
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
});

describe('the reader\'s view of the zip is the checker\'s', () => {
  const refusal = (bytes: Buffer) => readTable(bytes, { name: 'x.xlsx' }).then(() => 'read', (error: unknown) => (error as Error).message);

  test('a workbook exceljs wrote (sizes after the data, in descriptors) is read', async () => {
    const table = await readTable(await workbook({ Sheet1: ROWS }), { name: 'ok.xlsx' });
    expect(table.rows).toHaveLength(1);
  });

  test.each([
    ['a name resolved elsewhere by the reader', 'a/../xl/worksheets/sheet1.xml', /^not a valid xlsx file: the part name "a\/\.\.\/xl\/worksheets\/sheet1\.xml" is not one a spreadsheet has$/],
    ['a name with a leading slash', '/xl/worksheets/sheet1.xml', /^not a valid xlsx file: the part name "\/xl\/worksheets\/sheet1\.xml" is not one a spreadsheet has$/],
  ])('%s is refused', async (_, name, message) => {
    const parts = unzip(await workbook({ Sheet1: ROWS })).map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, name } : part));
    expect(await refusal(zip(parts))).toMatch(message);
  });

  test('a part twice, or bytes after the end record, are refused', async () => {
    const parts = unzip(await workbook({ Sheet1: ROWS }));
    expect(await refusal(zip([...parts, parts[0]!]))).toMatch(/^not a valid xlsx file: the part ".+" is in it twice$/);
    expect(await refusal(Buffer.concat([zip(parts), Buffer.from('trailing')]))).toBe('not a valid xlsx file: bytes follow its zip end record');
  });

  test('a part that declares a DTD (where entity expansion lives) is refused', async () => {
    const bomb = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>';
    const parts = unzip(await workbook({ Sheet1: ROWS })).map((part) => (part.name === 'xl/sharedStrings.xml'
      ? { ...part, data: Buffer.from(part.data.toString('utf8').replace(/^<\?xml[^>]*\?>/, bomb)) } : part));
    expect(await refusal(zip(parts))).toBe('not a valid xlsx file: the part "xl/sharedStrings.xml" declares a DTD');
  });

  test('shared strings written <si >, <si\\n> are counted against their bound', async () => {
    const strings = `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${Array.from({ length: 1_000_001 }, (_, i) => `<si${i % 2 ? '\n' : ' '}><t>${i}</t></si>`).join('')}</sst>`;
    const parts = unzip(await workbook({ Sheet1: ROWS })).map((part) => (part.name === 'xl/sharedStrings.xml' ? { ...part, data: Buffer.from(strings) } : part));
    expect(await refusal(zip(parts))).toBe('the workbook holds more than 1,000,000 shared strings, more than one import may read; split it into several files');
  }, 60_000);
});
