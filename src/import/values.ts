import { cellExcerpt } from '../domain/text.js';
import { CURRENCY_CODES, currencyOfSign, normalizeWords } from './reading.js';

/**
 * Cells as galleries write them (docs/push.md, How values are read), read deterministically: each
 * reader matches the whole trimmed cell or answers why not. Pure: no I/O. Every reader looks at a
 * bounded part of a cell (a cell may hold a megabyte) and quotes at most 100 characters of it.
 */

/** The longest cell a reader looks into: no value galleries write is longer (a price, a year, "edition of 50 + 5 AP"). */
const READ_MAX = 200;

/** A cell as messages quote it: on one line, at most 100 characters. */
export function quoteCell(cell: string): string {
  const text = cellExcerpt(cell);
  // eslint-disable-next-line no-control-regex
  return JSON.stringify(text.replace(/[\u0000-\u001f\u007f]/g, ' '));
}

export type Read<T> = { value: T } | { problem: string };

const tooLong = (cell: string, what: string): { problem: string } => ({ problem: `${quoteCell(cell)} is too long to be ${what}` });

// ---------------------------------------------------------------------------------------------------
// Prices

export interface PriceRead {
  amount: number;
  /** The currency the cell's sign or code names, if it has one. */
  currency?: string;
}

const SPACE = /[\s\u00a0\u202f]/u;
const SIGN = /^(?:[€$£¥]|[A-Za-z]{3}\b)\s*|\s*(?:[€$£¥]|\b[A-Za-z]{3})$/u;

/**
 * `12500`, `12,500`, `12.500`, `12 500` (a space or no-break space), `12'500`, `12.500,00`, `12,500.00`,
 * with `€ $ £` or an ISO code before or after (`€ 12.500`, `12,500 USD`, `EUR 12.500,-`, `CHF 12'500.-`).
 * A group of three digits after each separator is grouping; decimals are read only when they are zeros:
 * `12,50` is refused with the whole form that would be accepted. Undefined: the cell is not a price
 * form at all (the caller decides: "on request" words, or the row's problem).
 */
export function readPrice(cell: string, defaultCurrency?: string | null): Read<PriceRead> | undefined {
  const text = cell.trim();
  if (text.length > READ_MAX) return tooLong(cell, 'a price');
  let rest = text;
  let currency: string | undefined;
  for (let i = 0; i < 2; i++) {
    const sign = SIGN.exec(rest);
    if (!sign) break;
    const found = currencyOfSign(sign[0].trim(), defaultCurrency);
    if (!found) return undefined;
    if (currency && currency !== found) return { problem: `${quoteCell(cell)} names two currencies` };
    currency = found;
    rest = rest.slice(0, sign.index) + rest.slice(sign.index + sign[0].length);
  }
  rest = rest.replace(/[.,]-$/, '').trim();
  const amount = readAmount(rest);
  if (amount === undefined) return undefined;
  if ('problem' in amount) return { problem: `${quoteCell(cell)} ${amount.problem}` };
  return { value: currency ? { amount: amount.value, currency } : { amount: amount.value } };
}

/** The whole number of `12.500,00`, `12 500`, `12,500`; a price with cents is refused with the whole form. */
function readAmount(text: string): Read<number> | undefined {
  if (text === '' || !/^\d[\d.,'’\s\u00a0\u202f]*$/u.test(text)) return undefined;
  const decimal = /^(.*\d)([.,])(\d{1,2})$/u.exec(text);
  let integer = text;
  let separator = '';
  let cents = '';
  if (decimal) [integer, separator, cents] = [decimal[1]!, decimal[2]!, decimal[3]!];
  const groupMarks = new Set((integer.match(/[.,'’\s\u00a0\u202f]/gu) ?? []).map((mark) => (SPACE.test(mark) ? ' ' : mark)));
  const groups = integer.split(/[.,'’\s\u00a0\u202f]/u);
  const grouped = groups.length > 1;
  if (groupMarks.size > 1 || (separator && groupMarks.has(separator))) return undefined;
  if (grouped && !(/^\d{1,3}$/.test(groups[0]!) && groups.slice(1).every((g) => /^\d{3}$/.test(g)))) return undefined;
  const digits = groups.join('').replace(/^0+(?=\d)/, '');
  if (digits.length > 15) return { problem: 'is larger than any price' };
  const whole = Number(digits);
  if (cents !== '' && !/^0+$/.test(cents)) {
    return { problem: `is not a whole price: prices are whole numbers, never rounded here; write ${whole} or ${whole + 1}` };
  }
  return { value: whole };
}

/** A currency cell: an ISO 4217 code or a sign (`€`, `$`, `£`). */
export function readCurrency(cell: string, defaultCurrency?: string | null): Read<string> | undefined {
  const text = cell.trim();
  if (text.length > 10) return undefined;
  const found = currencyOfSign(text, defaultCurrency);
  return found ? { value: found } : undefined;
}

export { CURRENCY_CODES };

// ---------------------------------------------------------------------------------------------------
// Words

const YES = new Set(['yes', 'y', 'x', 'true', '1', 'ja', 'j', 'oui', 'si', 'wel', 'vrai', 'wahr', 'verdadero']);
const NO = new Set(['', 'no', 'n', 'false', '0', 'nein', 'non', 'nee', 'faux', 'falsch', 'falso']);

/** A yes/no cell (price on request, hide price): empty is no. */
export function readYesNo(cell: string): Read<boolean> {
  const text = cell.trim();
  if (text.length > READ_MAX) return tooLong(cell, 'yes or no');
  const word = normalizeWords(text).replace(/[.!]$/, '');
  if (YES.has(word)) return { value: true };
  if (NO.has(word)) return { value: false };
  return { problem: `${quoteCell(cell)} is neither yes nor no (write yes or no, or leave it empty)` };
}

export type AvailabilityValue = 'available' | 'reserved' | 'sold' | 'not_for_sale';

const AVAILABILITY_WORDS: Record<AvailabilityValue, readonly string[]> = {
  available: ['available', 'for sale', 'verfügbar', 'verfugbar', 'disponible', 'disponibile', 'beschikbaar', 'te koop', 'zu verkaufen',
    'à vendre', 'in vendita', 'en venta'],
  sold: ['sold', 'verkauft', 'vendu', 'vendue', 'venduto', 'venduta', 'vendido', 'vendida', 'verkocht'],
  reserved: ['reserved', 'on hold', 'hold', 'reserviert', 'réservé', 'réservée', 'riservato', 'riservata', 'reservado', 'reservada',
    'gereserveerd', 'in option'],
  not_for_sale: ['not for sale', 'nfs', 'n.f.s.', 'on loan', 'private collection', 'unverkäuflich', 'nicht verkäuflich', 'pas à vendre',
    'non in vendita', 'no está a la venta', 'no esta a la venta', 'niet te koop', 'nicht zu verkaufen', 'non à vendre', 'no a la venta',
    'not_for_sale'],
};

const wordKey = (text: string): string => normalizeWords(text).replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
const AVAILABILITY = new Map<string, AvailabilityValue>(
  (Object.entries(AVAILABILITY_WORDS) as [AvailabilityValue, readonly string[]][]).flatMap(([value, words]) => words.map((w) => [wordKey(w), value])),
);

/** An availability cell in any of the six languages; "not available" matches nothing. */
export function readAvailability(cell: string): Read<AvailabilityValue> {
  const text = cell.trim();
  if (text.length > READ_MAX) return tooLong(cell, 'an availability');
  const value = AVAILABILITY.get(wordKey(text));
  if (value) return { value };
  return { problem: `${quoteCell(cell)} is not an availability (available, reserved, sold or not for sale)` };
}

// ---------------------------------------------------------------------------------------------------
// Years

const YEAR = /^(?:(?:c|ca|circa|um|vers|verso|hacia|rond|omstreeks)\.?\s*)?(\d{3,4})(?:\s*[-–—/]\s*(\d{2,4}))?$/iu;

/** `1990`, `c. 1990`, `ca. 1990`, `circa 1990`, `um 1990`, `vers 1990`, `1990-92`, `1990–1992`, `1990/91` → 1990 (the first year). */
export function readYear(cell: string): Read<number> {
  const text = cell.trim();
  if (text.length > READ_MAX) return tooLong(cell, 'a year');
  if (/^-?\d+$/.test(text)) return { value: Number(text) };
  const found = YEAR.exec(text);
  if (found) return { value: Number(found[1]) };
  return { problem: `${quoteCell(cell)} is not a year (such as 1990, c. 1990 or 1990–92)` };
}

// ---------------------------------------------------------------------------------------------------
// Editions

export interface EditionRead {
  edition_number?: number;
  edition_size?: number;
  artist_proofs?: number;
}

const AP = String.raw`(?:\s*\+\s*(\d+)\s*(?:ap|a\.\s?p\.?|aps|e\.\s?a\.?|ea|p\.\s?a\.?|pa|hc|h\.\s?c\.?))?`;
const NUMBERED = new RegExp(String.raw`^(?:(?:ed|edition|éd|édition|ed\.|ex|ex\.|exemplaire|auflage|edizione|edición|oplage)\.?\s*)?(?:no\.?\s*|nr\.?\s*|#\s*)?(\d+)\s*(?:/|of|von|de|di|van|sur)\s*(\d+)${AP}$`, 'iu');
const SIZED = new RegExp(String.raw`^(?:edition of|edition|ed\.? of|auflage|auflage von|édition de|édition|tirage à|tirage de|tirage|edizione di|edizione|edición de|edición|oplage|oplage van)\s*(\d+)(?:\s*(?:ex\.?|exemplare|exemplaires|esemplari|ejemplares|exemplaren))?${AP}$`, 'iu');
const UNIQUE = new Set(['unique', 'unikat', 'piece unique', 'unico', 'unica', 'pieza unica', 'uniek', 'one of a kind']);

/**
 * `3/50`, `3 / 50`, `ed. 3/50`, `Ed. 3 of 50`, `3/50 + 5 AP`, `edition of 50`, `Auflage 50`, `édition de 50`,
 * `edizione di 50`, `edición de 50`, `oplage 50`, `edition of 50 + 5 AP`; `unique`, `unikat`, `pièce unique`,
 * `unico`: no edition. A bare number is refused: it could be the copy's number or the edition's size.
 */
export function readEdition(cell: string): Read<EditionRead> {
  const text = cell.trim().replace(/\s+/g, ' ');
  if (text.length > READ_MAX) return tooLong(cell, 'an edition');
  if (UNIQUE.has(wordKey(text))) return { value: {} };
  const numbered = NUMBERED.exec(text);
  if (numbered) {
    const [number, size] = [Number(numbered[1]), Number(numbered[2])];
    if (number < 1 || number > size) return { problem: `${quoteCell(cell)}: the copy's number is not between 1 and the edition's size` };
    return { value: { edition_number: number, edition_size: size, ...(numbered[3] ? { artist_proofs: Number(numbered[3]) } : {}) } };
  }
  const sized = SIZED.exec(text);
  if (sized) return { value: { edition_size: Number(sized[1]), ...(sized[2] ? { artist_proofs: Number(sized[2]) } : {}) } };
  return { problem: `${quoteCell(cell)} is not an edition (write 3/50 for a numbered copy, "edition of 50", or "unique")` };
}

// ---------------------------------------------------------------------------------------------------
// Measures

export type Unit = 'cm' | 'mm' | 'in';
const UNITS: Record<string, Unit> = { cm: 'cm', mm: 'mm', in: 'in', inch: 'in', inches: 'in', '"': 'in', zoll: 'in' };

/** A unit cell: `cm`, `mm`, `in`, `inch`, `inches`. */
export function readUnit(cell: string): Read<Unit> | undefined {
  const unit = UNITS[cell.trim().toLowerCase().replace(/\.$/, '')];
  return unit ? { value: unit } : undefined;
}

/** A measure: `30`, `30.5`, `30,5` (a comma before one or two digits is a decimal comma), optionally followed by its unit. */
export function readMeasure(cell: string): Read<{ value: number; unit?: Unit }> | undefined {
  const text = cell.trim();
  if (text.length > READ_MAX) return undefined;
  const found = /^(\d+(?:[.,]\d{1,2})?)\s*(cm|mm|in|inch|inches|")?\.?$/iu.exec(text);
  if (!found) return undefined;
  const value = Number(found[1]!.replace(',', '.'));
  return { value: found[2] ? { value, unit: UNITS[found[2].toLowerCase()]! } : { value } };
}
