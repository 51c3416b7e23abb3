import { MAX_CELLS, MAX_COLUMNS, MAX_COLUMN_NAME_CHARS, MAX_ROWS } from './limits.js';
import { FileProblem } from './problem.js';

// What every reader (CSV, JSON, Excel) makes and the bounds they all check, apart from table.ts, which
// picks the reader: xlsx.ts imports these without importing the file that imports it.

/** A file read as a table: its column names and its rows, before any column is matched to a field. */
export interface Table {
  format: 'csv' | 'json' | 'xlsx';
  /** Column names as the file writes them (JSON: every key used by some item, in order of appearance). */
  columns: string[];
  rows: TableRows;
}

/**
 * A table's rows, read one at a time. The readers hold them packed (src/import/packed-rows.ts), each row
 * made again when it is read; an array of rows is one too.
 */
export interface TableRows extends Iterable<TableRow> {
  readonly length: number;
  at(index: number): TableRow | undefined;
  map<T>(read: (row: TableRow, index: number) => T): T[];
  slice(start?: number, end?: number): TableRow[];
  find(test: (row: TableRow) => boolean): TableRow | undefined;
  /** Each column's first value that is neither empty nor missing, when noted while reading. */
  firstValues?(): unknown[];
  /** About the heap the rows hold, when they know it. */
  heldBytes?(): number;
}

export interface TableRow {
  /** Where the row stands, for messages: `line 12` (CSV), `row 12` (Excel) or `item 3` (JSON). */
  label: string;
  /** The number in the label: the line, row or item a problem names (src/import/planner.ts). */
  line: number;
  /**
   * One value per column. CSV and Excel cells are text ('' = empty), converted to the fields' types
   * later; JSON values are sent as they are (undefined = the item lacks the key).
   */
  cells: unknown[];
}

/**
 * Each column's first value that is neither empty nor missing (the columns step shows it): noted by the
 * readers as they read, as finding it again would parse every row of a column left empty.
 */
export function firstValues(table: Table): unknown[] {
  const { rows } = table;
  return rows.firstValues?.() ?? table.columns.map((_, i) => rows.find((row) => row.cells[i] !== undefined && row.cells[i] !== '')?.cells[i]);
}

/** A file's columns are bounded (docs/api.md, Bounds on what a file may hold): past a bound, one message and nothing read further. */
export function checkColumns(columns: readonly string[], what: 'column' | 'key' = 'column'): void {
  if (columns.length > MAX_COLUMNS) throw tooManyColumns('the header has', 'columns');
  for (const column of columns) checkColumnName(column, what);
}

export function checkColumnName(name: string, what: 'column' | 'key'): void {
  if (name.length > MAX_COLUMN_NAME_CHARS) {
    throw new FileProblem(`a ${what} name is ${name.length.toLocaleString('en-US')} characters long (${JSON.stringify(name.slice(0, 40))}…); a name may be at most ${MAX_COLUMN_NAME_CHARS} characters`);
  }
}

export const tooManyColumns = (subject: string, what: string) =>
  new FileProblem(`${subject} more than ${MAX_COLUMNS} ${what}; a file may have at most ${MAX_COLUMNS} columns`);

/**
 * Rows × columns at most MAX_CELLS, and rows at most MAX_ROWS: a file of many short rows and many columns,
 * or of very many narrow (even empty) rows, is refused before its cells are made.
 */
export function checkCells(rows: number, columns: number, what: string): void {
  if (rows > MAX_ROWS) {
    throw new FileProblem(`the file holds more than ${MAX_ROWS.toLocaleString('en-US')} ${what}, more than one import may read; split it into several files`);
  }
  if (rows * columns > MAX_CELLS) {
    throw new FileProblem(`${rows.toLocaleString('en-US')} ${what} of ${columns} columns are more than the ${MAX_CELLS.toLocaleString('en-US')} cells one import may hold; split the file`);
  }
}
