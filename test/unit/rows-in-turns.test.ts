import { expect, test, vi } from 'vitest';

// readHeader counted, as the real one (src/import/columns.ts).
vi.mock('../../src/import/columns.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/import/columns.js')>();
  return { ...actual, readHeader: vi.fn(actual.readHeader) };
});
// A worker that imported the real module before (vitest.config.ts: isolate false) would keep it: a fresh graph imports the mock.
vi.resetModules();
const columns = await import('../../src/import/columns.js');
const { readTable } = await import('../../src/import/table.js');
const { readTableRows, readTableRowsInTurns } = await import('../../src/import/rows.js');

test('a large file read in turns reads its header once and gives the rows and the reading of one whole read', async () => {
  // 5,000 rows: three slices of ROWS_PER_TURN (src/import/rows.ts).
  const lines = ['Inventar-Nr.;Titel;Preis', ...Array.from({ length: 5_000 }, (_, i) => `M${i};Werk ${i};€ ${1000 + i}`)];
  const table = await readTable(Buffer.from(lines.join('\n')), { name: 'bestand.csv' });
  vi.mocked(columns.readHeader).mockClear();
  const inTurns = await readTableRowsInTurns(table, 'artworks', { defaultCurrency: 'EUR' });
  expect(vi.mocked(columns.readHeader)).toHaveBeenCalledTimes(1);
  const whole = readTableRows(table, 'artworks', { defaultCurrency: 'EUR' });
  expect(inTurns.rows).toHaveLength(5_000);
  expect(inTurns).toEqual(whole);
});
