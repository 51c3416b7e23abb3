import { extname } from 'node:path';
import { parse } from 'csv-parse';
import { MAX_COLUMNS, MAX_RECORD_CHARS } from './limits.js';
import { FileProblem } from './problem.js';
import { checkCells, checkColumnName, checkColumns, tooManyColumns, type Table, type TableRow } from './table-shape.js';
import { decodeFile, detectDelimiter, type Encoding } from './text.js';
import { xlsxTable } from './xlsx.js';

export type { Table, TableRow } from './table-shape.js';

export interface ReadOptions {
  /** The file's name: its extension tells JSON and Excel from CSV. */
  name: string;
  encoding?: Encoding;
  /** Excel: the sheet to read (default: the first). */
  sheet?: string | undefined;
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0]);

/** Reads CSV, JSON or Excel bytes as a table; a file-wide problem (encoding, format, emptiness) is a FileProblem. */
export async function readTable(bytes: Buffer, { name, encoding = 'utf8', sheet }: ReadOptions): Promise<Table> {
  const extension = extname(name).toLowerCase();
  if (bytes.subarray(0, 4).equals(OLE_MAGIC) || extension === '.xls') {
    throw new FileProblem('this is the old Excel format (.xls): save it as .xlsx (Excel Workbook) or as CSV');
  }
  if (bytes.subarray(0, 4).equals(ZIP_MAGIC) || extension === '.xlsx') return xlsxTable(bytes, sheet);
  if (sheet !== undefined) throw new FileProblem('a sheet was named, but this is not an Excel (.xlsx) file');
  const text = decodeFile(bytes, encoding);
  if (text.trim() === '') throw new FileProblem('the file is empty');
  const isJson = extension === '.json' || /^\s*\[/.test(text);
  const table = isJson ? jsonTable(text) : await csvTable(text);
  if (table.rows.length === 0) throw new FileProblem(isJson ? 'the file holds no items' : 'the file has a header row but no data rows');
  return table;
}

function jsonTable(text: string): Table {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new FileProblem(`not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(data) || !data.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
    throw new FileProblem('a JSON file must hold an array of objects');
  }
  const items = data as Record<string, unknown>[];
  // Keys are gathered item by item and bounded as they come, before any row is made.
  const seen = new Set<string>();
  for (const item of items) {
    for (const key of Object.keys(item)) {
      if (seen.has(key)) continue;
      seen.add(key);
      checkColumnName(key, 'key');
      if (seen.size > MAX_COLUMNS) throw tooManyColumns('the items use', 'distinct keys');
    }
  }
  const columns = [...seen];
  checkCells(items.length, columns.length, 'items');
  return { format: 'json', columns, rows: items.map((item, i) => ({ label: `item ${i + 1}`, cells: columns.map((column) => item[column]) })) };
}

interface CsvRecord { record: string[]; info: { lines: number }; raw: string }

/** A CSV, parsed as a stream in slices so that a large file never holds the event loop for long. */
async function csvTable(text: string): Promise<Table> {
  const parser = parse({
    delimiter: detectDelimiter(text), columns: false, skip_empty_lines: true, info: true, raw: true,
    relax_column_count: false, trim: false, max_record_size: MAX_RECORD_CHARS,
  });
  let header: string[] | undefined;
  const rows: TableRow[] = [];
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
          rows.push({ label: `line ${firstLine(info.lines, raw)}`, cells: record });
        }
      }
    } catch (error) {
      // A bound passed: the parser stops with it, and the rows read so far are let go.
      rows.length = 0;
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
    const SLICE = 64 * 1024;
    for (let at = 0; at < text.length && failure === undefined; at += SLICE) {
      if (!parser.write(text.slice(at, at + SLICE))) await Promise.race([new Promise((resolve) => parser.once('drain', resolve)), done]);
      await new Promise((resolve) => setImmediate(resolve));
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
