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
const INTEGER_FIELDS = new Set(['creation_year', 'price', 'edition_size', 'edition_number', 'artist_proofs']);
/** Text cells of these fields are measures: `30`, `30.5` or `30,5` (a comma before one or two digits is a decimal comma). */
const MEASURE_FIELDS = new Set(['height', 'width', 'depth']);

/**
 * The usual words for "price on request" in a price column (docs/api.md, Import: price on request):
 * the row gets `price_display: on_request` and no price.
 */
const ON_REQUEST = new Set(['poa', 'p.o.a.', 'p.o.a', 'por', 'p.o.r.', 'p.o.r', 'price on request', 'price on application', 'on request',
  'auf anfrage', 'preis auf anfrage', 'sur demande', 'prix sur demande', 'su richiesta', 'prezzo su richiesta', 'a consultar', 'precio a consultar']);
export const isPriceOnRequest = (cell: string): boolean => ON_REQUEST.has(cell.trim().toLowerCase().replace(/\s+/g, ' '));

/** Several image URLs in one cell, separated by whitespace or `|`. */
const urlsOf = (cell: string): string[] => cell.split(/[\s|]+/).filter((url) => url !== '');

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
    const views = new Views();
    let onRequest = false;
    for (const [i, cell] of cells.entries()) {
      const field = fields[i];
      if (!field || cell === undefined) continue;
      if (typeof cell === 'string' && views.take(field, cell)) continue;
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
      if (MEASURE_FIELDS.has(field) && /^\d+(?:[.,]\d{1,2})?$/.test(value)) {
        body[field] = Number(value.replace(',', '.'));
        continue;
      }
      if (field === 'price' && isPriceOnRequest(value)) {
        onRequest = true;
        continue;
      }
      const refused = field === 'price' ? priceProblem(cell, table.columns[i]!) : undefined;
      if (refused) problems.push(`price: ${refused}`);
      else body[field] = cell;
    }
    // A price_display column says what it says; a price cell reading "on request" says it otherwise.
    if (onRequest && body.price_display === undefined) body.price_display = 'on_request';
    views.into(body);
    return { label, body, problems };
  });
}

/**
 * The views a row gives: the URLs after the first in its image_url cell, then its additional_images
 * cell's, then its image_url_2 … image_url_21 columns', in that order.
 */
class Views {
  private readonly extra: string[] = [];
  private readonly listed: string[] = [];
  private readonly numbered = new Map<number, string>();
  private image: string | undefined;

  /** Whether the cell was a view's (or the image_url cell, whose first URL it keeps as the main image). */
  take(field: string, cell: string): boolean {
    if (field === 'image_url') {
      const [first, ...rest] = urlsOf(cell);
      this.image = first;
      this.extra.push(...rest);
      return true;
    }
    if (field === 'additional_images') {
      this.listed.push(...urlsOf(cell));
      return true;
    }
    const numbered = /^image_url_(\d+)$/.exec(field);
    if (!numbered) return false;
    const [url] = urlsOf(cell);
    if (url !== undefined) this.numbered.set(Number(numbered[1]), url);
    return true;
  }

  into(body: Record<string, unknown>): void {
    if (this.image !== undefined) body.image_url = this.image;
    const urls = [...this.extra, ...this.listed, ...[...this.numbered.entries()].sort(([a], [b]) => a - b).map(([, url]) => url)];
    if (urls.length > 0) body.additional_images = urls.map((url) => ({ url }));
  }
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

