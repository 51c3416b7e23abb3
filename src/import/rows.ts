import { artworkFromPost } from '../domain/artwork.js';
import { ApiError } from '../domain/errors.js';
import { eventFromPost } from '../domain/event.js';
import { ArtworkPost } from '../schemas/artworks.js';
import { EventPost } from '../schemas/events.js';
import { compileBodyValidator } from '../schemas/validator.js';
import { matchColumns, type ColumnMap, type Kind } from './columns.js';
import { readRegularFile } from './open.js';
import { priceProblem } from './price.js';
import { readTable, type ReadOptions, type Table } from './table.js';

export type { Kind } from './columns.js';

export interface Row {
  /** Where the row stands, for messages: `line 12` (CSV), `row 12` (Excel) or `item 3` (JSON). */
  label: string;
  body: Record<string, unknown>;
  /** Cells that could not be read as their field (a price written with a currency sign): the row is refused. */
  problems: string[];
}

export interface RowProblem {
  label: string;
  message: string;
}

/** Text cells of these fields are whole numbers in the API. */
const INTEGER_FIELDS = new Set(['creation_year', 'price']);

/**
 * The rows of a table as request bodies, its columns matched to fields once for the whole file (one
 * error for every unknown column, not one per row).
 */
export function tableRows(table: Table, kind: Kind, map?: ColumnMap): Row[] {
  const fields = matchColumns(table.columns, kind, map);
  const text = table.format !== 'json';
  return table.rows.map(({ label, cells }) => {
    const body: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const [i, cell] of cells.entries()) {
      const field = fields[i];
      if (!field || cell === undefined) continue;
      if (!text || typeof cell !== 'string') {
        body[field] = cell;
        continue;
      }
      // An empty cell means "not sent".
      if (cell === '') continue;
      const value = cell.trim();
      if (INTEGER_FIELDS.has(field) && /^-?\d+$/.test(value)) {
        body[field] = Number(value);
        continue;
      }
      const refused = field === 'price' ? priceProblem(cell, table.columns[i]!) : undefined;
      if (refused) problems.push(`price: ${refused}`);
      else body[field] = cell;
    }
    return { label, body, problems };
  });
}

/** A file `push` names: a regular file of bounded size, read as a table, its rows matched to the fields. */
export async function readRows(file: string, kind: Kind, options: Omit<ReadOptions, 'name'> & { map?: ColumnMap } = {}): Promise<Row[]> {
  const table = await readTable(await readRegularFile(file), { ...options, name: file });
  return tableRows(table, kind, options.map);
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

/** Every problem of a row: its cells' and the server's rules', in one line. */
export const rowProblems = (kind: Kind, row: Row): string[] => [...row.problems, ...checkRow(kind, row.body)];

export const formatProblem = ({ field, message }: { field: string; message: string }): string =>
  (field ? `${field}: ${message}` : message);

