import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse } from 'csv-parse/sync';
import { artworkFromPost } from '../domain/artwork.js';
import { ApiError } from '../domain/errors.js';
import { eventFromPost } from '../domain/event.js';
import { ArtworkPost } from '../schemas/artworks.js';
import { EventPost } from '../schemas/events.js';
import { compileBodyValidator } from '../schemas/validator.js';

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

/** Reads a CSV (header row = field names) or a JSON array of objects. */
export async function readRows(file: string): Promise<Row[]> {
  const text = await readFile(file, 'utf8');
  const isJson = extname(file).toLowerCase() === '.json' || /^\s*\[/.test(text);
  return isJson ? jsonRows(text) : csvRows(text);
}

function jsonRows(text: string): Row[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new Error(`not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  if (!Array.isArray(data)) throw new Error('a JSON file must hold an array of objects');
  return data.map((body, i) => ({ label: `item ${i + 1}`, body: body as Record<string, unknown> }));
}

function csvRows(text: string): Row[] {
  const records: { record: Record<string, string>; info: { lines: number } }[] = parse(text, {
    bom: true, columns: true, skip_empty_lines: true, info: true, relax_column_count: false, trim: false,
  });
  let nextLine = 2;
  return records.map(({ record, info }) => {
    const row = { label: `line ${nextLine}`, body: csvBody(record) };
    nextLine = info.lines + 1;
    return row;
  });
}

/** An empty cell means "not sent"; integer fields become numbers when they look like integers. */
function csvBody(record: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [field, cell] of Object.entries(record)) {
    if (cell === '') continue;
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
