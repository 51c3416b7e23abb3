import { describe, expect, test } from 'vitest';
import { firstValues } from '../../src/import/table-shape.js';
import { readTable } from '../../src/import/table.js';
import { workbook } from '../support/spreadsheets.js';

/**
 * Every reader holds a table's rows packed (src/import/packed-rows.ts; docs/performance.md, Bounds on held
 * imports): each row is made again when it is read, and must be the row as it was read, whatever its cells.
 */

const ODD = ['', ' ', 'a "quoted" word', 'line\nbreak', 'Straße ☃ 🎨', '\\', '\u0000', '{"not":"json"}', 'x'.repeat(5000)];

describe('packed rows read back as they were read', () => {
  test('a CSV of 1,000 rows of odd cells: every row, its label and cells, across the chunks of 256 rows', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) => [`Work ${i}`, ODD[i % ODD.length]!, i % 7 === 0 ? '' : `E-${i}`]);
    const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
    const csv = `title,notes,external_id\n${rows.map((row) => row.map(quote).join(',')).join('\n')}\n`;
    const table = await readTable(Buffer.from(csv), { name: 'odd.csv' });
    expect(table.rows.length).toBe(1000);
    // Each multi-line cell moves the next rows' line numbers on.
    let line = 2;
    const expected = rows.map((cells) => {
      const row = { label: `line ${line}`, line, cells };
      line += 1 + (cells[1]!.match(/\n/g)?.length ?? 0);
      return row;
    });
    expect([...table.rows]).toEqual(expected);
    expect(table.rows.slice(250, 260)).toEqual(expected.slice(250, 260));
    expect(table.rows.at(-1)).toEqual(expected.at(-1));
    expect(table.rows.at(1000)).toBeUndefined();
    expect(table.rows.map((row, i) => `${i}:${row.label}`)[511]).toBe(`511:${expected[511]!.label}`);
    expect(table.rows.find((row) => row.cells[0] === 'Work 700')).toEqual(expected[700]);
    expect(firstValues(table)).toEqual(['Work 0', ' ', 'E-1']);
  });

  test('a JSON file\'s items: values as they were (numbers, nested values, -0 and numbers past the doubles\' range), a key an item lacks undefined', async () => {
    const json = `[{"title":"A","year":1912,"tags":["x",{"y":null}]},{"title":"B","big":1e400,"zero":-0},{"notes":"${'n'.repeat(300)}"}]`;
    const table = await readTable(Buffer.from(json), { name: 'items.json' });
    expect(table.columns).toEqual(['title', 'year', 'tags', 'big', 'zero', 'notes']);
    expect([...table.rows]).toEqual([
      { label: 'item 1', line: 1, cells: ['A', 1912, ['x', { y: null }], undefined, undefined, undefined] },
      { label: 'item 2', line: 2, cells: ['B', undefined, undefined, Infinity, -0, undefined] },
      { label: 'item 3', line: 3, cells: [undefined, undefined, undefined, undefined, undefined, 'n'.repeat(300)] },
    ]);
    expect(Object.is(table.rows.at(1)!.cells[4], -0)).toBe(true);
    expect(firstValues(table)).toEqual(['A', 1912, ['x', { y: null }], Infinity, -0, 'n'.repeat(300)]);
  });

  test('an Excel sheet of several: labels name the row and the sheet', async () => {
    const table = await readTable(await workbook({ Notes: [['x']], Stock: [['Title', 'Year'], ['Blue Hour', '1912'], ['', ''], ['Red', '']] }), { name: 'w.xlsx', sheet: 'Stock' });
    expect([...table.rows]).toEqual([
      { label: 'row 2 of sheet "Stock"', line: 2, cells: ['Blue Hour', '1912'] },
      { label: 'row 4 of sheet "Stock"', line: 4, cells: ['Red', ''] },
    ]);
  });

  test('a file decoded a megabyte at a time: a byte-order mark dropped, characters cut by a megabyte\'s end whole (UTF-8 and Windows-1252)', async () => {
    const cell = `Käthe 🎨 ${'ä'.repeat(100)}`;
    const rows = Array.from({ length: 30_000 }, (_, i) => `${cell} ${i},K-${i}`);
    const utf8 = await readTable(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(`title,external_id\n${rows.join('\n')}\n`)]), { name: 'big.csv' });
    expect(utf8.columns).toEqual(['title', 'external_id']);
    expect(utf8.rows.length).toBe(30_000);
    expect([...utf8.rows].every((row, i) => row.cells[0] === `${cell} ${i}` && row.cells[1] === `K-${i}`)).toBe(true);
    const latin = await readTable(Buffer.from(`title;price\n${Array.from({ length: 20_000 }, (_, i) => `Mädchen ${'é'.repeat(60)} ${i};12\x80`).join('\n')}\n`, 'latin1'), { name: 'old.csv', encoding: 'latin1' });
    expect(latin.rows.length).toBe(20_000);
    expect(latin.rows.at(19_999)).toEqual({ label: 'line 20001', line: 20_001, cells: [`Mädchen ${'é'.repeat(60)} 19999`, '12€'] });
  });
});
