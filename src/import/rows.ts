import { setImmediate as nextTurn } from 'node:timers/promises';
import { artworkFromPost } from '../domain/artwork.js';
import { ApiError } from '../domain/errors.js';
import { eventFromPost } from '../domain/event.js';
import { ArtworkPost } from '../schemas/artworks.js';
import { EventPost } from '../schemas/events.js';
import { compileBodyValidator } from '../schemas/validator.js';
import { EXTRA_TARGETS, readHeader, type ColumnMap, type HeaderOptions, type HeaderReading, type Kind } from './columns.js';
import { readRegularFile } from './open.js';
import type { Hint } from './problem.js';
import {
  quoteCell, readAvailability, readCurrency, readEdition, readMeasure, readPrice, readUnit, readYear, readYesNo, type Unit,
} from './values.js';
import { readTable, type ReadOptions, type Table } from './table.js';

export type { Kind } from './columns.js';

export interface Row {
  /** Where the row stands, for messages: `line 12` (CSV), `row 12` (Excel) or `item 3` (JSON). */
  label: string;
  /** The number in the label (src/import/table-shape.ts). */
  line: number;
  body: Record<string, unknown>;
  /** Cells that could not be read as their field (a price with cents, a word that is no availability): the row is refused. */
  problems: FieldProblem[];
  /** What the row is written with but should be told (level `warning`: "price: no currency"). */
  warnings?: FieldProblem[];
}

/** What is wrong with one field of a row (`field` '' for the row as a whole), before the planner places it in the file. */
export interface FieldProblem {
  field: string;
  message: string;
  hint?: Hint;
}

/** A row's problems in one line, as `push` and the console list them: `label` and `field: reason; field: reason`. */
export interface RowProblem {
  label: string;
  message: string;
}

/** Text cells of these fields are whole numbers in the API. */
const INTEGER_FIELDS = new Set(['creation_year', 'price', 'edition_size', 'edition_number', 'artist_proofs']);
const MEASURE_FIELDS = new Set(['height', 'width', 'depth']);

/**
 * The usual words for "price on request" in a price column (docs/api.md, Import: price on request):
 * the row gets `price_display: on_request` and no price.
 */
const ON_REQUEST = new Set(['poa', 'p.o.a.', 'p.o.a', 'por', 'p.o.r.', 'p.o.r', 'price on request', 'price on application', 'on request',
  'auf anfrage', 'preis auf anfrage', 'sur demande', 'prix sur demande', 'su richiesta', 'prezzo su richiesta', 'a consultar', 'precio a consultar',
  'op aanvraag', 'prijs op aanvraag']);
export const isPriceOnRequest = (cell: string): boolean => cell.length <= 100 && ON_REQUEST.has(cell.trim().toLowerCase().replace(/\s+/g, ' '));

/** Several image URLs in one cell, separated by whitespace or `|`. */
const urlsOf = (cell: string): string[] => cell.split(/[\s|]+/).filter((url) => url !== '');

export interface RowOptions extends HeaderOptions {
  /** The entity's currency for prices that name none (profile `default_currency`). */
  defaultCurrency?: string | null;
}

/** Rows read per turn of the event loop: a table's 400,000 rows read at once held it over a second. */
const ROWS_PER_TURN = 2_000;

/**
 * `readTableRows` a slice of rows per turn of the event loop, for a server reading a large file (the console's
 * Import, a feed's run and preview): each row is read on its own, so the slices read as the whole table would.
 */
export async function readTableRowsInTurns(table: Table, kind: Kind, options: RowOptions = {}): Promise<{ rows: Row[]; reading: HeaderReading }> {
  const reading = readHeader(table.columns, kind, options);
  const rows: Row[] = [];
  for (let at = 0; at < table.rows.length; at += ROWS_PER_TURN) {
    for (const row of rowsRead(table, kind, reading, options, table.rows.slice(at, at + ROWS_PER_TURN))) rows.push(row);
    await nextTurn();
  }
  return { rows, reading };
}

/**
 * The rows of a table as request bodies, its header read once for the whole file (src/import/columns.ts)
 * and each cell read as galleries write it (src/import/values.ts; docs/push.md, How values are read).
 */
export function readTableRows(table: Table, kind: Kind, options: RowOptions = {}): { rows: Row[]; reading: HeaderReading } {
  const reading = readHeader(table.columns, kind, options);
  return { rows: rowsRead(table, kind, reading, options, table.rows), reading };
}

/** `rows` of the table (all of them, or a slice) as request bodies, by the reading of its header. */
function rowsRead(table: Table, kind: Kind, { fields, hints }: HeaderReading, options: RowOptions, rows: Table['rows']): Row[] {
  const text = table.format !== 'json';
  const defaultCurrency = options.defaultCurrency ?? null;
  return rows.map(({ label, line, cells }): Row => {
    const body: Record<string, unknown> = {};
    const problems: FieldProblem[] = [];
    const warnings: FieldProblem[] = [];
    const views = new Views();
    let onRequest = false;
    let hidden = false;
    let priceCurrency: string | undefined;
    let priceColumn = -1;
    let cellUnit: Unit | undefined;
    const names: { first?: string; last?: string } = {};
    for (const [i, cell] of cells.entries()) {
      const field = fields[i];
      if (!field || cell === undefined) continue;
      if (typeof cell === 'string' && views.take(field, cell)) continue;
      if (typeof cell !== 'string' || (!text && !EXTRA_TARGETS[kind].includes(field))) {
        body[field] = cell;
        continue;
      }
      // An empty cell means "not sent".
      if (cell.trim() === '') continue;
      const value = cell.trim();
      const problem = (message: string) => problems.push({ field, message });
      if (INTEGER_FIELDS.has(field) && /^-?\d+$/.test(value)) {
        body[field] = Number(value);
        if (field === 'price') priceColumn = i;
        continue;
      }
      switch (field) {
        case 'creation_year': {
          const year = readYear(value);
          if ('value' in year) body.creation_year = year.value;
          else problem(year.problem);
          continue;
        }
        case 'price': {
          if (isPriceOnRequest(value)) {
            onRequest = true;
            continue;
          }
          const price = readPrice(value, defaultCurrency);
          if (price === undefined) problem(`${quoteCell(value)} in column ${JSON.stringify(table.columns[i])} is not a price; write a whole number such as 12500, 12.500 or € 12.500`);
          else if ('problem' in price) problem(`${price.problem} (column ${JSON.stringify(table.columns[i])})`);
          else {
            body.price = price.value.amount;
            priceCurrency = price.value.currency;
            priceColumn = i;
          }
          continue;
        }
        case 'currency': {
          const currency = readCurrency(value, defaultCurrency);
          body.currency = currency && 'value' in currency ? currency.value : cell;
          continue;
        }
        case 'availability': {
          const availability = readAvailability(value);
          if ('value' in availability) body.availability = availability.value;
          else problem(availability.problem);
          continue;
        }
        case 'edition': {
          const edition = readEdition(value);
          if ('value' in edition) Object.assign(body, edition.value);
          else problem(edition.problem);
          continue;
        }
        case 'price_on_request':
        case 'price_hidden': {
          const yes = readYesNo(value);
          if ('problem' in yes) problem(yes.problem);
          else if (field === 'price_on_request') onRequest ||= yes.value;
          else hidden ||= yes.value;
          continue;
        }
        case 'artist_first_name':
          names.first = value;
          continue;
        case 'artist_last_name':
          names.last = value;
          continue;
        case 'dimension_unit': {
          const unit = readUnit(value);
          body.dimension_unit = unit && 'value' in unit ? unit.value : cell;
          continue;
        }
        case 'dimensions': {
          const unit = hints[i]?.unit;
          // "Dimensions (cm)": the column's unit applies to cells that name none.
          body.dimensions = unit && /^[\d\s.,x×/¼½¾⅓⅔⅛⅜⅝⅞-]+$/u.test(value) ? `${value} ${unit}` : cell;
          continue;
        }
      }
      if (MEASURE_FIELDS.has(field)) {
        const measure = readMeasure(value);
        if (measure && 'value' in measure) {
          body[field] = measure.value.value;
          cellUnit ??= measure.value.unit ?? hints[i]?.unit;
          continue;
        }
      }
      body[field] = cell;
    }
    if (kind === 'artworks') {
      // A price_display column says what it says; yes/no columns or a price cell reading "on request" say it otherwise.
      if (body.price_display === undefined && (hidden || onRequest)) body.price_display = hidden ? 'hidden' : 'on_request';
      if (body.artist_name === undefined && (names.first || names.last)) body.artist_name = [names.first, names.last].filter(Boolean).join(' ');
      if (body.dimension_unit === undefined && cellUnit) body.dimension_unit = cellUnit;
      if (typeof body.price === 'number' && text && body.currency === undefined) {
        // A row's currency: its currency column, its price cell's sign or code, the price column's name, the entity's default.
        const currency = priceCurrency ?? hints[priceColumn]?.currency ?? defaultCurrency ?? undefined;
        if (currency) body.currency = currency;
        else warnings.push({ field: 'price', message: 'no currency', hint: { kind: 'currency' } });
      }
    }
    views.into(body);
    return warnings.length > 0 ? { label, line, body, problems, warnings } : { label, line, body, problems };
  });
}

/** The rows of a table as request bodies (see `readTableRows`). */
export function tableRows(table: Table, kind: Kind, map?: ColumnMap, options: Omit<RowOptions, 'map'> = {}): Row[] {
  return readTableRows(table, kind, { ...options, ...(map ? { map } : {}) }).rows;
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
export async function readRows(file: string, kind: Kind, options: Omit<ReadOptions, 'name'> & RowOptions = {}): Promise<{ rows: Row[]; reading: HeaderReading }> {
  return readTableRows(await readFileTable(file, options), kind, options);
}

/** A file on disk as a table (`push`): its cells not read yet, so a reader may first learn the entity's default currency. */
export async function readFileTable(file: string, options: Omit<ReadOptions, 'name'> = {}): Promise<Table> {
  return readTable(await readRegularFile(file), { ...options, name: file });
}

const validators = {
  artworks: { schema: compileBodyValidator(ArtworkPost, 'row'), rules: artworkFromPost },
  events: { schema: compileBodyValidator(EventPost, 'row'), rules: eventFromPost },
} as const;

/** The problems the server would answer 400 for, found before sending. */
export function checkFields(kind: Kind, body: unknown): FieldProblem[] {
  const { schema, rules } = validators[kind];
  const problems = schema(body);
  if (problems.length === 0) {
    try {
      rules(structuredClone(body) as never);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return error.extras.details ?? [{ field: '', message: error.message }];
    }
  }
  return problems;
}

/** `checkFields` as `field: problem` lines. */
export const checkRow = (kind: Kind, body: unknown): string[] => checkFields(kind, body).map(formatProblem);

/** Every problem of a row: its cells' and the server's rules'. */
export const rowProblems = (kind: Kind, row: Row): FieldProblem[] => [...row.problems, ...checkFields(kind, row.body)];

export const formatProblem = ({ field, message }: { field: string; message: string }): string =>
  (field ? `${field}: ${message}` : message);

