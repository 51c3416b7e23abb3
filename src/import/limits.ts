/**
 * What one import may cost. Every input is bounded before it is read whole: a file is at most a size
 * named here, a CSV record at most a megabyte, an Excel archive inflates to at most a bounded size.
 */

/** The largest file `push` reads. Its rows are held together (duplicates are found across the file). */
export const PUSH_MAX_BYTES = 64 * 1024 * 1024;

/** An upload to the console's Import page is at most 20 MB (docs/console.md, Import). */
export const UPLOAD_MAX_BYTES = 20 * 1024 * 1024;

/**
 * One CSV record (a row with its quoted line breaks), in characters. The longest row the API accepts is
 * about 40,000 characters (a 20,000-character description and a dozen 1,000-character fields).
 */
export const MAX_RECORD_CHARS = 1024 * 1024;

/** An Excel file's parts inflate to at most this many bytes in all: a 10,000-row sheet is about 5 MB, and exceljs holds a sheet as objects several times its size. */
export const XLSX_MAX_INFLATED_BYTES = 50 * 1024 * 1024;

/** Past this size a part may inflate at most this many times its compressed size (XML compresses 5–20×). */
export const XLSX_MAX_RATIO = 100;
export const XLSX_RATIO_FROM_BYTES = 1024 * 1024;

/** A size for messages: `20 MB`, `64 MiB`, `70.3 MiB`. */
export const megabytes = (bytes: number): string =>
  (bytes % 1e6 === 0 ? `${bytes / 1e6} MB` : `${Number((bytes / (1024 * 1024)).toFixed(1))} MiB`);

/**
 * A file's columns (docs/api.md, Bounds on what a file may hold): a header or a JSON file's distinct
 * keys at most 200, each name at most 200 characters. Checked while the file is read, before its rows
 * are held: a JSON file of 50,000 items with a key each would otherwise be 50,000 × 50,000 cells.
 */
export const MAX_COLUMNS = 200;
export const MAX_COLUMN_NAME_CHARS = 200;

/** A table's cells (rows × columns) at most: 20,000 rows of 200 columns, or 400,000 rows of 10. */
export const MAX_CELLS = 4_000_000;

/**
 * A table's rows at most, however narrow: each row costs a few hundred bytes before its cells, and a
 * 12 MB CSV of 4,000,000 one-cell rows (within the cell bound) took a process to 1.6 GB.
 */
export const MAX_ROWS = 400_000;

/** How deep a JSON file may nest: an array of items of plain values needs 2 levels; 19 MB of `[` ran a process out of memory. */
export const MAX_JSON_DEPTH = 32;

/**
 * An Excel file's cells and shared strings, counted in its parts' XML before the workbook is loaded
 * (exceljs holds each as an object of a few hundred bytes): 1,000,000 cells is 50,000 rows of 20 columns.
 */
export const XLSX_MAX_CELLS = 1_000_000;
export const XLSX_MAX_SHARED_STRINGS = 1_000_000;
