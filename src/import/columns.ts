import { ArtworkPost, VIEWS_MAX, WRITABLE_ARTWORK_FIELDS } from '../schemas/artworks.js';
import { EventPost, WRITABLE_EVENT_FIELDS } from '../schemas/events.js';
import { escapeControlCharacters } from '../domain/text.js';
import { FileProblem } from './problem.js';
import { closest } from './suggest.js';

/**
 * Which field each column of a file fills (docs/push.md, What it checks before sending anything): a column named like a field (in any case,
 * spaces or dashes for underscores), or one the person maps (`--map "Inventory No.=external_id"`, or
 * the console's choices). A column that is neither is one error for the whole file, naming the closest
 * field, never a guess.
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
    if (field !== '' && !FIELDS[kind].includes(field)) {
      const suggestion = closest(field, FIELDS[kind]);
      throw new FileProblem(`--map names ${quoted(field)}, which is not a field of ${kind}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}; the fields are ${WRITABLE[kind].join(', ')}`);
    }
    map.set(key(pair.slice(0, at)), field === '' ? null : field);
  }
  return map;
}

/** The field a column fills without a mapping, if its name is one. */
export function fieldNamed(column: string, kind: Kind): string | undefined {
  const field = asField(column);
  return FIELDS[kind].includes(field) ? field : undefined;
}

/** Words spreadsheets use for a field, for suggestions only (a suggestion is offered, never applied). */
const SYNONYMS: Record<string, string> = {
  inventory: 'external_id', inv: 'external_id', stock: 'external_id', sku: 'external_id', ref: 'external_id', reference: 'external_id',
  artist: 'artist_name', maker: 'artist_name', year: 'creation_year', date: 'creation_year', size: 'dimensions',
  technique: 'medium', material: 'medium', materials: 'medium', status: 'availability', image: 'image_url',
  picture: 'image_url', photo: 'image_url', link: 'external_url', url: 'external_url', website: 'external_url',
  start: 'start_date', from: 'start_date', end: 'end_date', until: 'end_date', city: 'location_city', country: 'location_country',
  type: 'event_type', calendar: 'ical_url', name: 'title',
  edition: 'edition_number', number: 'edition_number', ap: 'artist_proofs', proofs: 'artist_proofs', alt: 'image_alt',
  unit: 'dimension_unit', units: 'dimension_unit', views: 'additional_images', images: 'additional_images', display: 'price_display',
  h: 'height', w: 'width', d: 'depth',
};

/** The field a column most likely means: a misspelling of a field's name, else a word spreadsheets use for one. */
function closestField(column: string, kind: Kind): string | undefined {
  const near = closest(asField(column), FIELDS[kind]);
  if (near) return near;
  const words = key(column).split(/[^\p{L}\p{N}]+/u);
  return words.map((word) => SYNONYMS[word]).find((field) => field !== undefined && FIELDS[kind].includes(field));
}

/** The field a column most likely means, for a suggestion: its own name, else the closest field. */
export function suggestField(column: string, kind: Kind): string | undefined {
  return fieldNamed(column, kind) ?? closestField(column, kind);
}

/**
 * The field of each column (null: left out), or one FileProblem naming every column that fills no
 * field, two columns that fill the same one, a mapped column the file lacks, or a missing title.
 */
export function matchColumns(columns: readonly string[], kind: Kind, map: ColumnMap = new Map()): (string | null)[] {
  const present = new Set(columns.map(key));
  const absent = [...map.keys()].filter((name) => !present.has(name));
  if (absent.length > 0) {
    throw new FileProblem(`--map names the column${absent.length > 1 ? 's' : ''} ${absent.map(quoted).join(', ')}, which the file does not have; its columns are ${columns.slice(0, 30).map(quoted).join(', ')}`);
  }
  const unknown: string[] = [];
  const seen = new Map<string, string>();
  const fields = columns.map((column) => {
    const field = map.has(key(column)) ? map.get(key(column))! : fieldNamed(column, kind);
    if (field === undefined) {
      const suggestion = closestField(column, kind);
      unknown.push(`${quoted(column)}${suggestion ? ` (did you mean "${suggestion}"?)` : ''}`);
      return null;
    }
    if (field === null) return null;
    const earlier = seen.get(field);
    if (earlier !== undefined) throw new FileProblem(`columns ${quoted(earlier)} and ${quoted(column)} are both ${field}`);
    seen.set(field, column);
    return field;
  });
  if (unknown.length > 0) {
    const listed = unknown.length > 10 ? [...unknown.slice(0, 10), `and ${unknown.length - 10} more`] : unknown;
    throw new FileProblem(`unknown column${unknown.length > 1 ? 's' : ''} ${listed.join(', ')}; the ${kind} fields are ${WRITABLE[kind].join(', ')}`
      + ' (map a column with --map "COLUMN=FIELD")');
  }
  if (!seen.has('title')) throw new FileProblem('no title column: every row needs a title');
  return fields;
}
