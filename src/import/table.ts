import { extname } from 'node:path';
import { JSONParser, TokenType } from '@streamparser/json';
import { parse } from 'csv-parse';
import { MAX_COLUMNS, MAX_JSON_DEPTH, MAX_RECORD_CHARS } from './limits.js';
import { FileProblem } from './problem.js';
import { PackedCells, PackedItems } from './packed-rows.js';
import { checkCells, checkColumnName, checkColumns, tooManyColumns, type Table } from './table-shape.js';
import { decodeFile, detectDelimiter, type Encoding } from './text.js';
import { xlsxTable } from './xlsx.js';

export type { Table, TableRow, TableRows } from './table-shape.js';

export interface ReadOptions {
  /** The file's name: its extension tells JSON and Excel from CSV. */
  name: string;
  encoding?: Encoding;
  /** Excel: the sheet to read (default: the first). */
  sheet?: string | undefined;
  /** Excel with no sheet named: a workbook of several sheets is a SheetToChoose instead of its first sheet. */
  chooseSheet?: boolean;
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0]);

/** Reads CSV, JSON or Excel bytes as a table; a file-wide problem (encoding, format, emptiness) is a FileProblem. */
export async function readTable(bytes: Buffer, { name, encoding = 'utf8', sheet, chooseSheet = false }: ReadOptions): Promise<Table> {
  const extension = extname(name).toLowerCase();
  if (bytes.subarray(0, 4).equals(OLE_MAGIC) || extension === '.xls') {
    throw new FileProblem('this is the old Excel format (.xls): save it as .xlsx (Excel Workbook) or as CSV');
  }
  if (bytes.subarray(0, 4).equals(ZIP_MAGIC) || extension === '.xlsx') return xlsxTable(bytes, sheet, chooseSheet);
  if (sheet !== undefined) throw new FileProblem('a sheet was named, but this is not an Excel (.xlsx) file');
  // The file's text in parts of about a megabyte (text.ts).
  const parts = await decodeFile(bytes, encoding);
  const head = parts.find((part) => part.trim() !== '');
  if (head === undefined) throw new FileProblem('the file is empty');
  const isJson = extension === '.json' || /^\s*\[/.test(head);
  const table = isJson ? await jsonTable(parts, head) : await csvTable(parts);
  if (table.rows.length === 0) throw new FileProblem(isJson ? 'the file holds no items' : 'the file has a header row but no data rows');
  return table;
}

/** Text fed to a streaming parser per turn of the event loop (JSON and CSV alike). */
const SLICE = 64 * 1024;
const yieldTurn = () => new Promise((resolve) => setImmediate(resolve));

/** The text's parts in slices of at most SLICE characters, in order. */
function* slices(parts: string[]): Generator<string> {
  for (const part of parts) for (let at = 0; at < part.length; at += SLICE) yield part.slice(at, at + SLICE);
}

/**
 * A JSON array of objects, parsed in slices as the CSV is: `JSON.parse` holds the event loop for the whole
 * file, and for a file of many differently keyed items (50,000 one-key objects, 650 KB) that is 40-100 ms
 * before the key bound can refuse it. Keys are bounded item by item as the items come (docs/architecture.md,
 * The event-loop budget).
 */
async function jsonTable(parts: string[], head: string): Promise<Table> {
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  // Each item is packed as it comes: the parsed objects are not held side by side.
  let items = new PackedItems((n) => `item ${n}`);
  const seen = new Set<string>();
  let problem: Error | undefined;
  parser.onError = (error) => {
    problem ??= new FileProblem(`not valid JSON: ${error.message}`, { cause: error });
  };
  // Nesting is counted token by token: the parser keeps a frame per open level, so a file of `[[[[…` is
  // refused within the slice that passes the bound, before it holds millions of frames.
  let depth = 0;
  parser.onToken = ({ token }) => {
    if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
      if (++depth > MAX_JSON_DEPTH) problem ??= new FileProblem(`the JSON nests deeper than ${MAX_JSON_DEPTH} levels; a file holds an array of items of plain values`);
    } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) {
      depth--;
    }
  };
  parser.onValue = ({ value, parent }) => {
    if (problem !== undefined) return;
    try {
      if (!Array.isArray(parent) || typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw new FileProblem('a JSON file must hold an array of objects');
      }
      const item = value as Record<string, unknown>;
      for (const key of Object.keys(item)) {
        if (seen.has(key)) continue;
        seen.add(key);
        checkColumnName(key, 'key');
        if (seen.size > MAX_COLUMNS) throw tooManyColumns('the items use', 'distinct keys');
      }
      checkCells(items.length + 1, seen.size, 'items');
      items.push(items.length + 1, item);
    } catch (error) {
      // A bound passed: what was read so far is let go, and the rest of the file is not read.
      items = new PackedItems((n) => `item ${n}`);
      problem = error as Error;
    }
  };
  for (const slice of slices(parts)) {
    if (problem !== undefined) break;
    parser.write(slice);
    await yieldTurn();
  }
  // The parser ends by itself once the top-level value closes.
  if (problem === undefined && !parser.isEnded) parser.end();
  if (problem !== undefined) throw problem;
  // A single object, string or number at the top is valid JSON that holds no array.
  if (!/^\s*\[/.test(head)) throw new FileProblem('a JSON file must hold an array of objects');
  items.columns = [...seen];
  return { format: 'json', columns: items.columns, rows: items };
}

interface CsvRecord { record: string[]; info: { lines: number }; raw: string }

/** A CSV, parsed as a stream in slices so that a large file never holds the event loop for long. */
async function csvTable(parts: string[]): Promise<Table> {
  const parser = parse({
    // The first part holds the header: a megabyte decodes to more characters than the header scan reads.
    delimiter: detectDelimiter(parts[0]!), columns: false, skip_empty_lines: true, info: true, raw: true,
    relax_column_count: false, trim: false, max_record_size: MAX_RECORD_CHARS,
  });
  let header: string[] | undefined;
  let rows = new PackedCells((n) => `line ${n}`);
  // Each record becomes its row as it is read, within the slice that read it.
  parser.on('readable', () => {
    let parsed: CsvRecord | null;
    try {
      while ((parsed = parser.read() as CsvRecord | null) !== null) {
        const { record, info, raw } = parsed;
        if (!header) {
          checkColumns(record);
          header = record;
        } else if (record.some((cell) => cell.trim() !== '')) {
          // A row of empty cells (`;;;;` at the end of a spreadsheet export) is no row.
          checkCells(rows.length + 1, header.length, 'rows');
          rows.push(firstLine(info.lines, raw), record);
        }
      }
    } catch (error) {
      // A bound passed: the parser stops with it, and the rows read so far are let go.
      rows = new PackedCells((n) => `line ${n}`);
      parser.destroy(error as Error);
    }
  });
  let failure: unknown;
  const done = new Promise<void>((resolve, reject) => {
    parser.on('end', resolve);
    parser.on('error', (error) => {
      failure = error;
      reject(error);
    });
  });
  // Awaited below; the handler keeps an early error from being reported as unhandled meanwhile.
  done.catch(() => undefined);
  try {
    for (const slice of slices(parts)) {
      if (failure !== undefined) break;
      if (!parser.write(slice)) await Promise.race([new Promise((resolve) => parser.once('drain', resolve)), done]);
      await yieldTurn();
    }
    parser.end();
    await done;
  } catch (error) {
    parser.destroy();
    if (error instanceof FileProblem) throw error;
    const { code, lines } = error as { code?: string; lines?: number };
    if (code === 'CSV_MAX_RECORD_SIZE') {
      throw new FileProblem(`line ${lines ?? 1} starts a record of more than ${MAX_RECORD_CHARS.toLocaleString('en-US')} characters: not a CSV file with one row per line`, { cause: error });
    }
    throw new FileProblem(`not a readable CSV file: ${(error as Error).message}`, { cause: error });
  }
  return { format: 'csv', columns: header ?? [], rows };
}

/** The line a record starts on: csv-parse tells the last one, and a quoted cell may span several. */
function firstLine(lastLine: number, raw: string): number {
  const text = raw.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '');
  return lastLine - (text.match(/\n/g)?.length ?? 0);
}
