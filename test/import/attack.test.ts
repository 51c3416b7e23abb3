import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readRows } from '../../src/import/rows.js';
import { closest } from '../../src/import/suggest.js';
import { readTable } from '../../src/import/table.js';
import { FileProblem } from '../../src/import/problem.js';
import { cpuMs } from '../support/cpu.js';
import { unzip, workbook, zip } from '../support/spreadsheets.js';

/**
 * What an editor or a key holder can hand the one reader of src/import (docs/api.md, Bounds on what a
 * file may hold): files made to exhaust memory or hold the event loop. Each is refused with one clear
 * message, nothing is written, and another gallery's API keeps answering meanwhile.
 */

const ROWS = [['title', 'external_id'], ['Hidden Work', 'H-1']];

/** The JSON bomb: 650 KB, 50,000 items with a key each, that the old reader made 2.5 billion cells of. */
const jsonBomb = (items = 50_000): Buffer => Buffer.from(`[${Array.from({ length: items }, (_, i) => `{"k${i}":1}`).join(',')}]`);

const refusal = async (bytes: Buffer, name: string): Promise<string> => {
  const error = await readTable(bytes, { name }).then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FileProblem);
  return (error as Error).message;
};

/** An .xlsx whose one sheet has `cells` number cells (each with its own value, so the XML does not compress like a bomb). */
function xlsxOfCells(cells: number): Buffer {
  const parts: string[] = ['<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'];
  for (let i = 0; i < cells; i++) parts.push(`<c r="A${i + 1}"><v>${(i * 7919) % 1_000_003}</v></c>`);
  parts.push('</sheetData></worksheet>');
  return zip([
    { name: '[Content_Types].xml', data: Buffer.from('<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>') },
    { name: 'xl/worksheets/sheet1.xml', data: Buffer.from(parts.join('')) },
  ]);
}

describe('the reader refuses files made to exhaust it', () => {
  test('the JSON bomb of the issue (50,000 items, a key each) is refused in seconds at most, before any row is made', async () => {
    const { value, ms } = await cpuMs(() => refusal(jsonBomb(), 'bomb.json'));
    expect(value).toBe('the items use more than 200 distinct keys; a file may have at most 200 columns');
    // CPU time, generous; the reader before the bound ran out of memory instead.
    expect(ms).toBeLessThan(10_000);
  });

  test('a JSON key, a CSV header cell and an Excel header cell of 201 characters are refused, naming the bound', async () => {
    const long = 'x'.repeat(201);
    expect(await refusal(Buffer.from(JSON.stringify([{ title: 'A', [long]: 1 }])), 'long.json')).toMatch(/^a key name is 201 characters long \("x{40}"…\); a name may be at most 200 characters$/);
    expect(await refusal(Buffer.from(`title,${long}\nA,1\n`), 'long.csv')).toMatch(/^a column name is 201 characters long/);
    expect(await refusal(await workbook({ Sheet1: [['title', long], ['A', 1]] }), 'long.xlsx')).toMatch(/^a column name is 201 characters long/);
  });

  test('201 columns are refused in a CSV header, an Excel header and a JSON file; 200 are read', async () => {
    const names = (n: number) => ['title', ...Array.from({ length: n - 1 }, (_, i) => `c${i}`)];
    expect(await refusal(Buffer.from(`${names(201).join(',')}\n${names(201).map(() => '1').join(',')}\n`), 'wide.csv'))
      .toBe('the header has more than 200 columns; a file may have at most 200 columns');
    expect(await refusal(await workbook({ Sheet1: [names(201), names(201).map(() => 1)] }), 'wide.xlsx'))
      .toBe('the header has more than 200 columns; a file may have at most 200 columns');
    expect(await refusal(Buffer.from(JSON.stringify([Object.fromEntries(names(201).map((n) => [n, 1]))])), 'wide.json'))
      .toBe('the items use more than 200 distinct keys; a file may have at most 200 columns');
    expect((await readTable(Buffer.from(`${names(200).join(',')}\n${names(200).map(() => '1').join(',')}\n`), { name: 'ok.csv' })).columns).toHaveLength(200);
  });

  test('a JSON file of many empty items after one wide item is refused by its cells as the item that passes the bound is read (20,001 of 200 columns), not made into millions of them', async () => {
    const wide = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`c${i}`, 1]));
    const bytes = Buffer.from(`[${JSON.stringify(wide)}${',{}'.repeat(30_000)}]`);
    expect(await refusal(bytes, 'sparse.json')).toBe('20,001 items of 200 columns are more than the 4,000,000 cells one import may hold; split the file');
  });

  test('an Excel sheet of more than 1,000,000 cells is refused while its archive is checked, before exceljs loads it', async () => {
    const bytes = xlsxOfCells(1_000_001);
    const { value, ms } = await cpuMs(() => refusal(bytes, 'cells.xlsx'));
    expect(value).toBe('the workbook holds more than 1,000,000 cells, more than one import may read; split it into several files');
    expect(ms).toBeLessThan(30_000);
  }, 60_000);

  test('a JSON file nested 2,000,000 levels deep is refused at the 33rd level, not held (19 MB of "[" ran the process out of memory)', async () => {
    const { ms } = await cpuMs(async () => {
      expect(await refusal(Buffer.from('['.repeat(2_000_000)), 'deep.json')).toBe('the JSON nests deeper than 32 levels; a file holds an array of items of plain values');
      expect(await refusal(Buffer.from(`[{"title":"A","n":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}]`), 'deep.json')).toBe('the JSON nests deeper than 32 levels; a file holds an array of items of plain values');
    });
    expect(ms).toBeLessThan(10_000);
  });

  test('a file of 400,001 rows is refused however narrow its rows: 4,000,000 one-cell CSV rows took 1.6 GB, 6,300,000 empty JSON items 1.2 GB', async () => {
    expect(await refusal(Buffer.from(`title\n${'ab\n'.repeat(400_001)}`), 'narrow.csv')).toBe('the file holds more than 400,000 rows, more than one import may read; split it into several files');
    expect(await refusal(Buffer.from(`[${'{},'.repeat(400_000)}{}]`), 'empty.json')).toBe('the file holds more than 400,000 items, more than one import may read; split it into several files');
    expect((await readTable(Buffer.from(`title\n${'ab\n'.repeat(400_000)}`), { name: 'ok.csv' })).rows).toHaveLength(400_000);
  }, 60_000);

  test('an Excel row with a value past its header after an empty cell is named, not a crash (a 500 on the Import page)', async () => {
    const bytes = await workbook({ Sheet1: [['title', 'external_id'], ['A', 'A-1', undefined, 'stray']] });
    expect(await refusal(bytes, 'gap.xlsx')).toBe('row 2 has a value in column D, which has no header');
  });

  test('an Excel sheet of 50,000 rows with a cell at column XFD each costs its cells, not 16,384 columns a row', async () => {
    const sheet = ['<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>',
      '<row r="1"><c r="A1" t="inlineStr"><is><t>title</t></is></c></row>'];
    for (let row = 2; row <= 50_001; row++) sheet.push(`<row r="${row}"><c r="A${row}" t="inlineStr"><is><t>w${row}</t></is></c><c r="XFD${row}"><v>${row}</v></c></row>`);
    sheet.push('</sheetData></worksheet>');
    const parts = unzip(await workbook({ Sheet1: [['title'], ['A']] })).map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, data: Buffer.from(sheet.join('')) } : part));
    const { value, ms } = await cpuMs(() => refusal(zip(parts), 'far.xlsx'));
    expect(value).toBe('row 2 has a value in column XFD, which has no header');
    // CPU time, generous: the reader that made each row's 16,384 columns failed with a TypeError after 3.6 s, holding the loop 1.5 s.
    expect(ms).toBeLessThan(10_000);
  }, 60_000);

  test('a suggestion for a 5,000,000-character column name takes well under the 88 s it took unbounded', async () => {
    const { ms } = await cpuMs(() => {
      expect(closest('t'.repeat(5_000_000), ['title', 'artist_name', 'creation_year'])).toBeUndefined();
      expect(closest('titel', ['title', 'artist_name'])).toBe('title');
    });
    // CPU time, generous (milliseconds when quiet): the unbounded edit distance took 88 s.
    expect(ms).toBeLessThan(2_000);
  });

  test('push reads files through the same reader: the JSON bomb stops it with the same message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attack-'));
    try {
      writeFileSync(join(dir, 'bomb.json'), jsonBomb());
      await expect(readRows(join(dir, 'bomb.json'), 'artworks')).rejects.toThrow('the items use more than 200 distinct keys');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the reader\'s view of the zip is the checker\'s', () => {
  const outcome = (bytes: Buffer) => readTable(bytes, { name: 'x.xlsx' }).then(() => 'read', (error: unknown) => (error as Error).message);

  test('a workbook exceljs wrote (sizes after the data, in descriptors) is read', async () => {
    const table = await readTable(await workbook({ Sheet1: ROWS }), { name: 'ok.xlsx' });
    expect(table.rows).toHaveLength(1);
  });

  test.each([
    ['a name resolved elsewhere by the reader', 'a/../xl/worksheets/sheet1.xml', /^not a valid xlsx file: the part name "a\/\.\.\/xl\/worksheets\/sheet1\.xml" is not one a spreadsheet has$/],
    ['a name with a leading slash', '/xl/worksheets/sheet1.xml', /^not a valid xlsx file: the part name "\/xl\/worksheets\/sheet1\.xml" is not one a spreadsheet has$/],
  ])('%s is refused', async (_, name, message) => {
    const parts = unzip(await workbook({ Sheet1: ROWS })).map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, name } : part));
    expect(await outcome(zip(parts))).toMatch(message);
  });

  test('a part twice, or bytes after the end record, are refused', async () => {
    const parts = unzip(await workbook({ Sheet1: ROWS }));
    expect(await outcome(zip([...parts, parts[0]!]))).toMatch(/^not a valid xlsx file: the part ".+" is in it twice$/);
    expect(await outcome(Buffer.concat([zip(parts), Buffer.from('trailing')]))).toBe('not a valid xlsx file: bytes follow its zip end record');
  });

  test('a part that declares a DTD (where entity expansion lives) is refused', async () => {
    const bomb = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>';
    const parts = unzip(await workbook({ Sheet1: ROWS })).map((part) => (part.name === 'xl/sharedStrings.xml'
      ? { ...part, data: Buffer.from(part.data.toString('utf8').replace(/^<\?xml[^>]*\?>/, bomb)) } : part));
    expect(await outcome(zip(parts))).toBe('not a valid xlsx file: the part "xl/sharedStrings.xml" declares a DTD');
  });

  test('shared strings written <si >, <si\\n> are counted against their bound', async () => {
    const strings = `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${Array.from({ length: 1_000_001 }, (_, i) => `<si${i % 2 ? '\n' : ' '}><t>${i}</t></si>`).join('')}</sst>`;
    const parts = unzip(await workbook({ Sheet1: ROWS })).map((part) => (part.name === 'xl/sharedStrings.xml' ? { ...part, data: Buffer.from(strings) } : part));
    expect(await outcome(zip(parts))).toBe('the workbook holds more than 1,000,000 shared strings, more than one import may read; split it into several files');
  }, 60_000);
});
