import type { TableRow, TableRows } from './table-shape.js';

/**
 * A table's rows held compactly: each row is the JSON text of its cells, and the texts of CHUNK rows are
 * one string, with each row's end in a typed array. A row is made again (parsed) when it is read, so to
 * every caller it is what it was, `{ label, cells }`. As objects — a label string, a cells array and a
 * string per cell — the 380,000 rows of two short cells of a 19 MB CSV held 134 MB of heap; packed,
 * 21.5 MB (`node bench/held-table.mjs`; docs/performance.md, Bounds on held imports). The console
 * holds uploads between the Import's steps (src/console/held-imports.ts), so their size is what bounds
 * how many the process can hold.
 */
const CHUNK = 256;
/** A string's characters are one byte each unless one of them is past U+00FF; and a string has a header. */
const WIDE = /[\u0100-\uffff]/;
const STRING_HEADER = 24;

abstract class PackedRows implements TableRows {
  private readonly chunks: string[] = [];
  /** The texts of the rows since the last whole chunk. */
  private pending: string[] = [];
  /** Row i's text ends at ends[i] in its chunk, and starts where row i - 1's ends (or at 0). */
  private ends = new Uint32Array(1024);
  /** The number in each row's label (its line, row or item). */
  private numbers = new Uint32Array(1024);
  private count = 0;
  /** The chunks' heap: a chunk with any character past U+00FF is two bytes a character. */
  private chunkBytes = 0;

  constructor(private readonly labelOf: (number: number) => string) {}

  get length(): number {
    return this.count;
  }

  /** The cells of row `index` from its text. */
  protected abstract cellsOf(text: string, index: number): unknown[];

  /** The first value of each column that is neither empty nor missing, in column order: what the columns step shows. */
  abstract firstValues(): unknown[];

  protected add(number: number, text: string): void {
    if (this.count === this.ends.length) {
      this.ends = grown(this.ends);
      this.numbers = grown(this.numbers);
    }
    const at = this.pending.length;
    this.ends[this.count] = (at === 0 ? 0 : this.ends[this.count - 1]!) + text.length;
    this.numbers[this.count] = number;
    this.pending.push(text);
    this.count++;
    if (this.pending.length === CHUNK) {
      const chunk = this.pending.join('');
      this.chunks.push(chunk);
      this.chunkBytes += STRING_HEADER + chunk.length * (WIDE.test(chunk) ? 2 : 1);
      this.pending = [];
    }
  }

  /** About the heap the rows hold (the rows not yet in a chunk counted two bytes a character). */
  heldBytes(): number {
    return this.chunkBytes + this.pending.reduce((sum, text) => sum + STRING_HEADER + text.length * 2, 0) + this.ends.byteLength + this.numbers.byteLength;
  }

  at(index: number): TableRow | undefined {
    if (index < 0) index += this.count;
    if (!(index >= 0 && index < this.count)) return undefined;
    const chunk = Math.floor(index / CHUNK);
    const text = chunk < this.chunks.length
      ? this.chunks[chunk]!.slice(index % CHUNK === 0 ? 0 : this.ends[index - 1], this.ends[index])
      : this.pending[index % CHUNK]!;
    const line = this.numbers[index]!;
    return { label: this.labelOf(line), line, cells: this.cellsOf(text, index) };
  }

  *[Symbol.iterator](): IterableIterator<TableRow> {
    for (let i = 0; i < this.count; i++) yield this.at(i)!;
  }

  map<T>(read: (row: TableRow, index: number) => T): T[] {
    const out: T[] = [];
    for (let i = 0; i < this.count; i++) out.push(read(this.at(i)!, i));
    return out;
  }

  slice(start = 0, end = this.count): TableRow[] {
    const out: TableRow[] = [];
    for (let i = Math.max(0, start); i < Math.min(end, this.count); i++) out.push(this.at(i)!);
    return out;
  }

  find(test: (row: TableRow) => boolean): TableRow | undefined {
    for (let i = 0; i < this.count; i++) {
      const row = this.at(i)!;
      if (test(row)) return row;
    }
    return undefined;
  }
}

const grown = (array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> => {
  const next = new Uint32Array(array.length * 2);
  next.set(array);
  return next;
};

const filled = (value: unknown): boolean => value !== undefined && value !== '';

/** Rows of text cells, one per column (CSV and Excel). */
export class PackedCells extends PackedRows {
  private readonly first: unknown[] = [];

  push(number: number, cells: string[]): void {
    for (const [i, cell] of cells.entries()) if (this.first[i] === undefined && filled(cell)) this.first[i] = cell;
    this.add(number, JSON.stringify(cells));
  }

  protected cellsOf(text: string): unknown[] {
    return JSON.parse(text) as string[];
  }

  firstValues(): unknown[] {
    return this.first;
  }
}

/** A JSON file's items: each held as its own JSON, its cells read by the columns the whole file uses. */
export class PackedItems extends PackedRows {
  private readonly first = new Map<string, unknown>();
  /** Every key some item uses, in order of appearance: set once the file is read. */
  columns: string[] = [];

  /** Items JSON text cannot give back as they were read (a number past the doubles' range is Infinity), by row. */
  private readonly odd = new Map<number, Record<string, unknown>>();

  push(number: number, item: Record<string, unknown>): void {
    for (const [key, value] of Object.entries(item)) if (!this.first.has(key) && filled(value)) this.first.set(key, value);
    let odd = false;
    const text = JSON.stringify(item, (_, value: unknown) => {
      if (typeof value === 'number' && (!Number.isFinite(value) || Object.is(value, -0))) odd = true;
      return value;
    });
    // Held as it is, and its text as a stand-in: such items are few, and JSON would write `null` or `0`.
    if (odd) this.odd.set(this.length, item);
    this.add(number, odd ? '{}' : text);
  }

  protected cellsOf(text: string, index: number): unknown[] {
    const item = this.odd.get(index) ?? JSON.parse(text) as Record<string, unknown>;
    return this.columns.map((column) => (Object.hasOwn(item, column) ? item[column] : undefined));
  }

  firstValues(): unknown[] {
    return this.columns.map((column) => this.first.get(column));
  }
}
