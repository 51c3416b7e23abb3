import { ArtworkPost, VIEWS_MAX, WRITABLE_ARTWORK_FIELDS } from '../schemas/artworks.js';
import { EventPost, WRITABLE_EVENT_FIELDS } from '../schemas/events.js';
import { escapeControlCharacters } from '../domain/text.js';
import { FileProblem } from './problem.js';
import { readColumns, suggestColumn, type ColumnHints } from './reading.js';
import { closest } from './suggest.js';

/**
 * Which field each column of a file fills (docs/push.md, How columns are read): one the person maps
 * (`--map "Inventory No.=external_id"`, or the console's choices), a column named like a field (in any
 * case, spaces or dashes for underscores), else what the words of its name suggest (src/import/reading.ts).
 * A column that is none of these is left out and named.
 */

export type Kind = 'artworks' | 'events';

/**
 * More views of a work, one URL a column: `image_url_2` … `image_url_21` (docs/api.md, Import: more
 * views), read into `additional_images` in their order.
 */
export const IMAGE_URL_COLUMNS: readonly string[] = Array.from({ length: VIEWS_MAX }, (_, i) => `image_url_${i + 2}`);

/** The names a file may use for each kind: the POST body's fields (read-only ones are sent and ignored). */
export const FIELDS: Record<Kind, readonly string[]> = {
  artworks: [...Object.keys(ArtworkPost.properties), ...IMAGE_URL_COLUMNS],
  events: Object.keys(EventPost.properties),
};

/** The fields a row may set, per kind. */
export const WRITABLE: Record<Kind, readonly string[]> = { artworks: WRITABLE_ARTWORK_FIELDS, events: WRITABLE_EVENT_FIELDS };

/** The person's mapping: a column's name (compared trimmed, in any case) → a field, or null to leave the column out. */
export type ColumnMap = ReadonlyMap<string, string | null>;

const key = (column: string): string => column.trim().toLowerCase();
const asField = (column: string): string => key(column).replace(/[\s-]+/g, '_');
/** A column name as messages quote it: on one line, at most 60 characters. */
const quoted = (column: string): string => JSON.stringify(escapeControlCharacters(column.length > 60 ? `${column.slice(0, 60)}…` : column));

/** `"Inventory No.=external_id,Artist=artist_name"`; `Notes=` leaves the column Notes out. */
export function parseColumnMap(spec: string, kind: Kind): Map<string, string | null> {
  const map = new Map<string, string | null>();
  for (const pair of spec.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.lastIndexOf('=');
    if (at <= 0) throw new FileProblem(`--map takes COLUMN=FIELD pairs separated by commas (got ${quoted(pair)})`);
    const field = pair.slice(at + 1).trim().toLowerCase();
    if (field !== '' && !TARGETS[kind].includes(field)) {
      const suggestion = closest(field, FIELDS[kind]);
      throw new FileProblem(`--map names ${quoted(field)}, which is not a field of ${kind}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}; the fields are ${WRITABLE[kind].join(', ')}`);
    }
    map.set(key(pair.slice(0, at)), field === '' ? null : field);
  }
  return map;
}

/**
 * Targets a column may fill beyond the fields (artworks): the artist's first and last names (joined
 * "First Last"), an edition written as galleries write it (`3/50 + 5 AP`), and yes/no columns for price
 * on request and a hidden price (docs/push.md, How columns are read).
 */
export const EXTRA_TARGETS: Record<Kind, readonly string[]> = {
  artworks: ['artist_first_name', 'artist_last_name', 'edition', 'price_on_request', 'price_hidden'],
  events: [],
};

/** What a column may fill: a field or one of the extra targets. */
export const TARGETS: Record<Kind, readonly string[]> = {
  artworks: [...FIELDS.artworks, ...EXTRA_TARGETS.artworks],
  events: FIELDS.events,
};

/** The targets a person chooses among: no read-only field (id, image, fingerprint, timestamps). */
export const CHOOSABLE: Record<Kind, readonly string[]> = {
  artworks: [...WRITABLE.artworks, ...IMAGE_URL_COLUMNS, ...EXTRA_TARGETS.artworks],
  events: WRITABLE.events,
};

/** What the console calls each target, in the gallery's words (docs/console.md, Import). */
const LABELS: Record<string, string> = {
  title: 'Title', artist_name: 'Artist', artist_first_name: 'Artist\'s first name', artist_last_name: 'Artist\'s last name',
  creation_year: 'Year', medium: 'Medium', dimensions: 'Dimensions (as written)', height: 'Height', width: 'Width', depth: 'Depth',
  dimension_unit: 'Unit of height, width, depth', price: 'Price', currency: 'Currency', availability: 'Availability',
  external_id: 'Inventory number', edition: 'Edition (3/50, edition of 50)', edition_size: 'Edition size', edition_number: 'Copy number',
  artist_proofs: 'Artist\'s proofs', price_on_request: 'Price on request (yes/no)', price_hidden: 'Hide price (yes/no)',
  price_display: 'Price display (shown, on_request, hidden)', image_url: 'Image', image_alt: 'Image text alternative',
  additional_images: 'More images', description: 'Description', external_url: 'Web page',
  start_date: 'Start date', end_date: 'End date', event_type: 'Type of event', location_name: 'Venue', location_city: 'City',
  location_country: 'Country', ical_url: 'Calendar link',
};
/** A target as a person reads it: "Inventory number", "Artist", "Price on request (yes/no)". */
export const targetLabel = (target: string): string => {
  const view = /^image_url_(\d+)$/.exec(target);
  return view ? `Image ${view[1]}` : LABELS[target] ?? target.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
};

/** The field a column fills without a mapping, if its name is one (a target's name counts: "Price on request"). */
export function fieldNamed(column: string, kind: Kind): string | undefined {
  const field = asField(column);
  return TARGETS[kind].includes(field) ? field : undefined;
}

/** The field a column most likely means, for a "did you mean": a misspelling of a field's name, else what its words suggest. */
function closestField(column: string, kind: Kind): string | undefined {
  return closest(asField(column), FIELDS[kind]) ?? suggestColumn(column, kind, TARGETS[kind]).field;
}

/** The field a column most likely means, for the console's choice: its own name, else what its words suggest. */
export function suggestField(column: string, kind: Kind): string | undefined {
  return fieldNamed(column, kind) ?? suggestColumn(column, kind, TARGETS[kind]).field;
}

/** How a header was read: each column's field (null: left out) and hints, the mapping in use and the columns left out. */
export interface HeaderReading {
  fields: (string | null)[];
  hints: ColumnHints[];
  /** Every column of the file → its field, or null when left out: what a feed stores and every answer shows. */
  mapping: Record<string, string | null>;
  /** Columns no name, word or person gave a field (a private column, an unknown word, two columns for one field). */
  unmapped: string[];
}

export interface HeaderOptions {
  map?: ColumnMap;
  /** Apply the words' suggestions where unambiguous (default true; `push --no-suggest` turns them off). */
  suggest?: boolean;
  /** Refuse the file for a column that fills no field, as before (`push --strict`). */
  strict?: boolean;
}

/**
 * The one reading of a header (docs/push.md, How columns are read): the person's mapping first, then a
 * column named as a field, then the words' suggestions where unambiguous. A FileProblem names a mapped
 * column the file lacks, two columns mapped or named for one field, a missing title, and with `strict`
 * every column that fills no field.
 */
export function readHeader(columns: readonly string[], kind: Kind, options: HeaderOptions = {}): HeaderReading {
  const map = options.map ?? new Map<string, string | null>();
  const present = new Set(columns.map(key));
  const absent = [...map.keys()].filter((name) => !present.has(name));
  if (absent.length > 0) {
    throw new FileProblem(`--map names the column${absent.length > 1 ? 's' : ''} ${absent.map(quoted).join(', ')}, which the file does not have; its columns are ${columns.slice(0, 30).map(quoted).join(', ')}`);
  }
  const read = readColumns(columns, kind, TARGETS[kind], (column) => map.get(key(column)), (column) => fieldNamed(column, kind), options.suggest ?? true);
  const seen = new Map<string, string>();
  read.fields.forEach((field, i) => {
    if (field === null) return;
    const earlier = seen.get(field);
    if (earlier !== undefined) throw new FileProblem(`columns ${quoted(earlier)} and ${quoted(columns[i]!)} are both ${field}`);
    seen.set(field, columns[i]!);
  });
  if (options.strict && read.unmapped.length > 0) {
    const unknown = read.unmapped.map((column) => {
      const suggestion = closestField(column, kind);
      return `${quoted(column)}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`;
    });
    const listed = unknown.length > 10 ? [...unknown.slice(0, 10), `and ${unknown.length - 10} more`] : unknown;
    throw new FileProblem(`unknown column${unknown.length > 1 ? 's' : ''} ${listed.join(', ')}; the ${kind} fields are ${WRITABLE[kind].join(', ')}`,
      { hint: { kind: 'map-column', field: null } });
  }
  if (!seen.has('title')) {
    const leftOut = read.unmapped.length > 0 ? `; the columns left out are ${read.unmapped.slice(0, 10).map(quoted).join(', ')}` : '';
    throw new FileProblem(`no title column: every row needs a title${leftOut}`, leftOut ? { hint: { kind: 'map-column', field: 'title' } } : {});
  }
  return {
    fields: read.fields,
    hints: read.hints,
    mapping: Object.fromEntries(columns.map((column, i) => [column, read.fields[i] ?? null])),
    unmapped: read.unmapped,
  };
}

/** The field of each column (null: left out), as `readHeader` reads them. */
export function matchColumns(columns: readonly string[], kind: Kind, map: ColumnMap = new Map(), options: Omit<HeaderOptions, 'map'> = {}): (string | null)[] {
  return readHeader(columns, kind, { ...options, map }).fields;
}
