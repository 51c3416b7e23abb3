import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse } from 'csv-parse/sync';
import { artworkFromPost } from '../domain/artwork.js';
import { ApiError } from '../domain/errors.js';
import { eventFromPost } from '../domain/event.js';
import { ArtworkPost, WRITABLE_ARTWORK_FIELDS } from '../schemas/artworks.js';
import { EventPost, WRITABLE_EVENT_FIELDS } from '../schemas/events.js';
import { compileBodyValidator } from '../schemas/validator.js';
import { decodeFile, detectDelimiter, FileProblem, type Encoding } from './file-text.js';
import { closest } from './suggest.js';

export type Kind = 'artworks' | 'events';

export interface Row {
  /** Where the row stands, for messages: `line 12` (CSV) or `item 3` (JSON). */
  label: string;
  body: Record<string, unknown>;
}

export interface RowProblem {
  label: string;
  message: string;
}

/** CSV cells are text; these fields are whole numbers in the API. */
const INTEGER_FIELDS = new Set(['creation_year', 'price']);

/** The names a file may use for each kind: the POST body's fields (read-only ones are sent and ignored). */
const FIELDS: Record<Kind, string[]> = {
  artworks: Object.keys(ArtworkPost.properties),
  events: Object.keys(EventPost.properties),
};

/** The fields a row may set, per kind. */
export const WRITABLE: Record<Kind, readonly string[]> = { artworks: WRITABLE_ARTWORK_FIELDS, events: WRITABLE_EVENT_FIELDS };

/**
 * Reads a CSV (header row = field names, `,` `;` or tab) or a JSON array of objects, and checks the
 * file as a whole once — encoding, column names, at least one row — so that a file-wide mistake is one
 * message, not one per row.
 */
export async function readRows(file: string, kind: Kind, encoding: Encoding = 'utf8'): Promise<Row[]> {
  const text = decodeFile(await readFile(file), encoding);
  if (text.trim() === '') throw new FileProblem('the file is empty');
  const isJson = extname(file).toLowerCase() === '.json' || /^\s*\[/.test(text);
  const rows = isJson ? jsonRows(text, kind) : csvRows(text, kind);
  if (rows.length === 0) throw new FileProblem(isJson ? 'the file holds no items' : 'the file has a header row but no data rows');
  return rows;
}

function jsonRows(text: string, kind: Kind): Row[] {
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
  if (items.length === 0) return [];
  const names = fieldNames([...new Set(items.flatMap((item) => Object.keys(item)))], kind);
  return items.map((item, i) => ({
    label: `item ${i + 1}`,
    body: Object.fromEntries(Object.entries(item).map(([name, value]) => [names.get(name)!, value])),
  }));
}

function csvRows(text: string, kind: Kind): Row[] {
  let records: { record: string[]; info: { lines: number }; raw: string }[];
  try {
    records = parse(text, {
      delimiter: detectDelimiter(text), columns: false, skip_empty_lines: true, info: true, raw: true,
      relax_column_count: false, trim: false,
    }) as unknown as typeof records;
  } catch (error) {
    throw new FileProblem(`not a readable CSV file: ${(error as Error).message}`, { cause: error });
  }
  const [header, ...data] = records;
  if (!header) return [];
  const names = fieldNames(header.record, kind);
  const fields = header.record.map((name) => names.get(name)!);
  return data
    // A row of empty cells (`;;;;` at the end of a spreadsheet export) is no row.
    .filter(({ record }) => record.some((cell) => cell.trim() !== ''))
    .map(({ record, info, raw }) => ({ label: `line ${firstLine(info.lines, raw)}`, body: csvBody(fields, record) }));
}

/** The line a record starts on: csv-parse tells the last one, and a quoted cell may span several. */
function firstLine(lastLine: number, raw: string): number {
  const text = raw.replace(/^[\r\n]+/, '').replace(/\r?\n$/, '');
  return lastLine - (text.match(/\n/g)?.length ?? 0);
}

/** Maps each column name to its field, case-insensitively; every unknown name in one message, with a suggestion. */
function fieldNames(names: string[], kind: Kind): Map<string, string> {
  const known = FIELDS[kind];
  const map = new Map<string, string>();
  const unknown: string[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const field = name.trim().toLowerCase().replace(/[\s-]+/g, '_');
    if (!known.includes(field)) {
      const suggestion = closest(field, known);
      unknown.push(`"${name}"${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`);
      continue;
    }
    const earlier = seen.get(field);
    if (earlier !== undefined && earlier !== name) throw new FileProblem(`columns "${earlier}" and "${name}" are both ${field}`);
    seen.set(field, name);
    map.set(name, field);
  }
  if (unknown.length > 0) {
    throw new FileProblem(`unknown column${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; the ${kind} fields are ${WRITABLE[kind].join(', ')}`);
  }
  if (!map.size || ![...map.values()].includes('title')) throw new FileProblem('no title column: every row needs a title');
  return map;
}

/** An empty cell means "not sent"; integer fields become numbers when they look like integers. */
function csvBody(fields: string[], cells: string[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [i, cell] of cells.entries()) {
    if (cell === '') continue;
    const field = fields[i]!;
    body[field] = INTEGER_FIELDS.has(field) && /^-?\d+$/.test(cell.trim()) ? Number(cell.trim()) : cell;
  }
  return body;
}

const validators = {
  artworks: { schema: compileBodyValidator(ArtworkPost, 'row'), rules: artworkFromPost },
  events: { schema: compileBodyValidator(EventPost, 'row'), rules: eventFromPost },
} as const;

/** The problems the server would answer 400 for, found before sending: `field: problem` each. */
export function checkRow(kind: Kind, body: unknown): string[] {
  const { schema, rules } = validators[kind];
  const problems = schema(body);
  if (problems.length === 0) {
    try {
      rules(structuredClone(body) as never);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return (error.extras.details ?? [{ field: '', message: error.message }]).map(formatProblem);
    }
  }
  return problems.map(formatProblem);
}

export const formatProblem = ({ field, message }: { field: string; message: string }): string =>
  (field ? `${field}: ${message}` : message);
