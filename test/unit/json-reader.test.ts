import { describe, expect, test } from 'vitest';
import { readTable } from '../../src/import/table.js';

/**
 * The one reader's JSON files (console Import, push, feeds) are parsed in slices, as CSV files are: the event
 * loop turns between them, so a large file or the issue's JSON bomb (50,000 items with a key each, which
 * `JSON.parse` held the loop 40-100 ms for) never holds the other galleries' requests.
 */

/** How many turns of the event loop passed while `work` ran: 0 when it ran in one block. */
async function turnsDuring(work: () => Promise<unknown>): Promise<{ turns: number; outcome: unknown }> {
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns += 1;
    setImmediate(tick);
  };
  setImmediate(tick);
  let outcome: unknown;
  try {
    outcome = await work();
  } catch (error) {
    outcome = error;
  } finally {
    running = false;
  }
  return { turns, outcome };
}

const json = (items: unknown[]) => Buffer.from(JSON.stringify(items));

describe('JSON files read in slices', () => {
  test('a 5 MB file of 10,000 works is read with the event loop turning between slices, every value kept', async () => {
    const works = Array.from({ length: 10_000 }, (_, i) => ({ title: `Work ${i}`, price: i, description: 'd'.repeat(480), sold: i % 2 === 0, tags: null }));
    const { turns, outcome } = await turnsDuring(() => readTable(json(works), { name: 'stock.json' }));
    const table = outcome as Awaited<ReturnType<typeof readTable>>;
    expect(table.columns).toEqual(['title', 'price', 'description', 'sold', 'tags']);
    expect(table.rows).toHaveLength(10_000);
    expect(table.rows.at(9_999)).toEqual({ label: 'item 10000', line: 10_000, cells: ['Work 9999', 9999, 'd'.repeat(480), false, null] });
    // ~5 MB in 64 KB slices: about 80 turns; one block would be none.
    expect(turns).toBeGreaterThan(40);
  });

  test('the JSON bomb is refused at its 201st key, without reading the rest of the file', async () => {
    const bomb = Buffer.from(`[${Array.from({ length: 50_000 }, (_, i) => `{"k${i}":1}`).join(',')}]`);
    const { outcome } = await turnsDuring(() => readTable(bomb, { name: 'bomb.json' }));
    expect((outcome as Error).message).toBe('the items use more than 200 distinct keys; a file may have at most 200 columns');
  });

  test.each([
    ['an object at the top', '{"a": {"b": 1}}', 'a JSON file must hold an array of objects'],
    ['a string at the top', '"hello"', 'a JSON file must hold an array of objects'],
    ['an array of arrays', '[[1, 2]]', 'a JSON file must hold an array of objects'],
    ['an array with a number', '[{"a": 1}, 2]', 'a JSON file must hold an array of objects'],
    ['a cut-off file', '[{"a": 1},', /^not valid JSON: /],
    ['text after the array', '[{"a": 1}] more', /^not valid JSON: /],
    ['an empty array', '[]', 'the file holds no items'],
  ])('%s is refused with one line', async (_name, text, message) => {
    await expect(readTable(Buffer.from(text), { name: 'file.json' })).rejects.toThrow(message);
  });

  test('a "__proto__" key is a column like any other, and no item gets a prototype from the file', async () => {
    const table = await readTable(Buffer.from('[{"__proto__": {"title": "planted"}, "medium": "Oil"}]'), { name: 'odd.json' });
    expect(table.columns).toEqual(['__proto__', 'medium']);
    expect(table.rows.at(0)!.cells).toEqual([{ title: 'planted' }, 'Oil']);
    expect(({} as Record<string, unknown>).title).toBeUndefined();
  });
});
