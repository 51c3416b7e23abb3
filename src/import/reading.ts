/**
 * The one reading of a file's column names (docs/push.md, How columns are read), for `push`, the
 * console's Import, feeds and the feed preview alike: which field each column fills, and the unit or
 * currency its name carries ("Dimensions (cm)", "Preis in €").
 *
 * A column named exactly as a field always fills it. Otherwise, for artworks, its name is compared with
 * the words galleries use in English, German, French, Italian, Spanish and Dutch: the name is lower-cased,
 * its accents removed (`ß` read as `ss`), split into words, filler words dropped; a word list's entry
 * matches when its words appear in the name in order, the longest match winning ("Prix sur demande" is
 * price on request, not price). A name holding a word of a gallery's private books (cost, consignor,
 * notes, …) is never suggested. Two columns for one field: the one named exactly as the word wins,
 * otherwise neither is applied and both are listed. Events keep exact names and their earlier
 * suggestions. Pure: no I/O.
 */

export type ReadingKind = 'artworks' | 'events';

/** What a column's name says about its cells. */
export interface ColumnHints {
  unit?: 'cm' | 'mm' | 'in';
  currency?: string;
}

/** Words for each artwork target, in the six languages (docs/push.md lists them). */
const ARTWORK_WORDS: Record<string, readonly string[]> = {
  title: ['title', 'titel', 'titre', 'titolo', 'título', 'werktitel', 'artwork title', 'piece name', 'work title', 'name of work',
    'nom de l\'oeuvre', 'nome dell\'opera', 'nombre de la obra', 'titolo dell\'opera', 'titre de l\'oeuvre', 'titel van het werk'],
  artist_name: ['artist', 'artist name', 'künstler', 'künstlerin', 'artiste', 'artista', 'kunstenaar', 'maker', 'nom de l\'artiste',
    'nome dell\'artista', 'nome artista', 'nombre del artista', 'naam kunstenaar'],
  artist_first_name: ['first name', 'given name', 'artist first name', 'vorname', 'prénom', 'nome', 'nombre', 'voornaam'],
  artist_last_name: ['last name', 'surname', 'family name', 'artist last name', 'nachname', 'nom', 'cognome', 'apellido', 'achternaam'],
  creation_year: ['year', 'date', 'creation date', 'creation year', 'jahr', 'année', 'anno', 'año', 'jaar', 'datierung', 'datum', 'data', 'fecha'],
  medium: ['medium', 'technique', 'technik', 'material', 'materials', 'tecnica', 'técnica', 'techniek', 'materiaal'],
  dimensions: ['dimensions', 'size', 'h x w', 'h x w x d', 'b x h', 'h x b', 'h x b x t', 'maße', 'masse', 'abmessungen', 'format', 'taille', 'misure', 'dimensioni', 'medidas', 'afmetingen'],
  height: ['height', 'h', 'höhe', 'hauteur', 'altezza', 'alto', 'altura', 'hoogte'],
  width: ['width', 'w', 'breite', 'largeur', 'larghezza', 'ancho', 'anchura', 'breedte'],
  depth: ['depth', 'd', 'tiefe', 'profondeur', 'profondità', 'profundidad', 'diepte'],
  dimension_unit: ['unit', 'units', 'einheit', 'unité', 'unità', 'unidad', 'eenheid'],
  price: ['price', 'retail price', 'list price', 'sale price', 'selling price', 'preis', 'verkaufspreis', 'prix', 'prix de vente', 'prezzo',
    'prezzo di vendita', 'precio', 'precio de venta', 'prijs', 'verkoopprijs'],
  currency: ['currency', 'währung', 'devise', 'valuta', 'moneda', 'munt'],
  availability: ['availability', 'status', 'statut', 'stato', 'estado', 'verfügbarkeit', 'disponibilité', 'disponibilità', 'disponibilidad',
    'beschikbaarheid'],
  external_id: ['stock', 'stock number', 'stock no', 'inventory', 'inventory number', 'inventory no', 'inv', 'inv nr', 'inventarnummer',
    'catalog number', 'catalogue number', 'numéro d\'inventaire', 'n° d\'inventaire', 'numero di inventario', 'número de inventario', 'ref',
    'reference', 'sku', 'inventar', 'inventar nr', 'bestandsnummer', 'werknummer', 'inventaris nummer', 'inventarisnummer'],
  edition_size: ['edition size', 'auflagenhöhe', 'tirage total'],
  edition_number: ['edition number', 'exemplar', 'exemplaire', 'esemplare', 'ejemplar'],
  artist_proofs: ['artist proofs', 'artist proof', 'ap', 'aps', 'e a', 'p a'],
  edition: ['edition', 'auflage', 'édition', 'tirage', 'edizione', 'edición', 'oplage'],
  price_on_request: ['price on request', 'poa', 'p o a', 'por', 'p o r', 'on request', 'preis auf anfrage', 'auf anfrage', 'prix sur demande',
    'sur demande', 'prezzo su richiesta', 'su richiesta', 'precio a consultar', 'a consultar', 'prijs op aanvraag', 'op aanvraag'],
  price_hidden: ['hide price', 'price hidden', 'hidden price', 'preis verbergen', 'prix masqué', 'prezzo nascosto', 'precio oculto', 'prijs verbergen'],
  image_url: ['image', 'image url', 'main image', 'photo', 'picture', 'bild', 'foto', 'immagine', 'imagen', 'afbeelding'],
  description: ['description', 'beschreibung', 'descriptif', 'description de l\'oeuvre', 'descrizione', 'descripción', 'beschrijving'],
  image_alt: ['alt text', 'alt', 'image alt', 'alternative text'],
  external_url: ['link', 'url', 'website', 'web page', 'webpage'],
  additional_images: ['views', 'images', 'more images', 'additional images'],
};

/** The words of a gallery's private books: a column holding one is never suggested. */
export const PRIVATE_WORDS: readonly string[] = [
  'cost', 'costs', 'purchase', 'net', 'netto', 'einkauf', 'ek', 'achat', 'acquisto', 'compra', 'consignor', 'consignment', 'buyer', 'client',
  'collector', 'käufer', 'acheteur', 'acquirente', 'comprador', 'notes', 'note', 'internal', 'intern', 'private', 'privat', 'location',
  'lagerort', 'standort', 'emplacement', 'ubicación', 'insurance', 'versicherung', 'margin', 'notiz', 'notizen', 'bemerkung', 'bemerkungen',
  // German writes its purchase price in one word.
  'einkaufspreis', 'einkaufpreis',
  // Dutch, beside the other languages' words: purchase, buyer, notes, location, insurance, margin.
  'inkoop', 'inkoopprijs', 'koper', 'notitie', 'notities', 'opmerking', 'opmerkingen', 'locatie', 'verzekering', 'marge',
];

/** Filler words that never decide a match ("Numéro d'inventaire", "Stock #", "Inv.-Nr."). */
const FILLERS = new Set(['of', 'de', 'du', 'des', 'la', 'le', 'der', 'die', 'das', 'di', 'del', 'dell', 'della', 'van', 'het', 'no', 'nr', 'n',
  'the']);
/** French and Italian elisions (`d'inventaire`, `l'oeuvre`, `dell'opera`): the article goes with its apostrophe. */
const ELISION = /\b(?:d|l|dell|dall|nell|all|un)['’](?=\p{L})/gu;

/** Events' earlier suggestions (a word of a column's name → the field), kept as they were. */
const EVENT_WORDS: Record<string, string> = {
  name: 'title', start: 'start_date', from: 'start_date', end: 'end_date', until: 'end_date', city: 'location_city', country: 'location_country',
  type: 'event_type', calendar: 'ical_url', image: 'image_url', picture: 'image_url', photo: 'image_url', link: 'external_url',
  url: 'external_url', website: 'external_url',
};

/** ISO 4217 codes read in a column's name or a price cell; other three-letter words are not currencies. */
export const CURRENCY_CODES = new Set([
  'EUR', 'USD', 'GBP', 'CHF', 'CAD', 'AUD', 'NZD', 'HKD', 'SGD', 'JPY', 'CNY', 'SEK', 'NOK', 'DKK', 'PLN', 'CZK', 'HUF', 'ZAR', 'BRL',
  'MXN', 'INR', 'KRW', 'AED', 'ILS', 'TRY', 'RON', 'ISK',
]);
/** Currency signs: `$` is US dollars unless the entity's default currency is another dollar (see `currencyOfSign`). */
export const CURRENCY_SIGNS: Record<string, string> = { '€': 'EUR', '$': 'USD', '£': 'GBP', '¥': 'JPY' };
const OTHER_DOLLARS = new Set(['CAD', 'AUD', 'NZD', 'HKD', 'SGD']);

/** The currency a sign or code names, with the entity's default deciding which dollar `$` is. */
export function currencyOfSign(sign: string, defaultCurrency?: string | null): string | undefined {
  if (sign === '$') return defaultCurrency && OTHER_DOLLARS.has(defaultCurrency) ? defaultCurrency : 'USD';
  const upper = sign.toUpperCase();
  return CURRENCY_SIGNS[sign] ?? (CURRENCY_CODES.has(upper) ? upper : undefined);
}

/** Lower case, accents removed, `ß` as `ss` (as slugs are, docs/api.md, Slugs and fingerprints). */
export function normalizeWords(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').normalize('NFC').toLowerCase().replace(/ß/g, 'ss');
}

/** A name's words, filler words dropped. */
export function tokens(name: string): string[] {
  return normalizeWords(name).replace(ELISION, ' ').split(/[^\p{L}\p{N}]+/u).filter((word) => word !== '' && !FILLERS.has(word));
}

const UNIT_WORDS: Record<string, 'cm' | 'mm' | 'in'> = { cm: 'cm', mm: 'mm', inch: 'in', inches: 'in', zoll: 'in', pouces: 'in', pollici: 'in', pulgadas: 'in' };

/**
 * The unit and currency a column's raw name carries, and the words left to match: `Height (in)`,
 * `Dimensions cm`, `Price (EUR)`, `Preis in €`, `Price $`.
 */
export function nameHints(name: string, kind: ReadingKind = 'artworks'): { hints: ColumnHints; words: string[] } {
  const hints: ColumnHints = {};
  let words = tokens(name);
  if (kind !== 'artworks') return { hints, words };
  const sign = /[€$£¥]/u.exec(name);
  if (sign) hints.currency = currencyOfSign(sign[0]);
  const raw = normalizeWords(name).split(/[^\p{L}\p{N}]+/u);
  const code = raw.find((word) => CURRENCY_CODES.has(word.toUpperCase()));
  if (code && !hints.currency) hints.currency = code.toUpperCase();
  // `in` is a unit only inside brackets ("Height (in)"), never the word of "Preis in €".
  if (/[([]\s*(?:in|in\.|inch|inches)\s*[)\]]/iu.test(name)) hints.unit = 'in';
  const unitWord = raw.find((word) => UNIT_WORDS[word] !== undefined);
  if (unitWord && !hints.unit) hints.unit = UNIT_WORDS[unitWord];
  words = words.filter((word) => UNIT_WORDS[word] === undefined && !CURRENCY_CODES.has(word.toUpperCase())
    && !(hints.unit === 'in' && word === 'in') && !(hints.currency && word === 'in'));
  return { hints, words };
}

interface Entry { words: string[]; field: string }

const ENTRIES: Entry[] = Object.entries(ARTWORK_WORDS)
  .flatMap(([field, phrases]) => phrases.map((phrase) => ({ words: tokens(phrase), field })))
  .filter(({ words }) => words.length > 0)
  // Longest first: the first entry that matches is the longest match.
  .sort((a, b) => b.words.length - a.words.length);

const PRIVATE = new Set(PRIVATE_WORDS.map((word) => normalizeWords(word)));

/** Whether `needle` appears in `hay` as consecutive words. */
function containsRun(hay: readonly string[], needle: readonly string[]): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Whether a column's name holds a word of the gallery's private books. */
export const isPrivateColumn = (name: string): boolean => tokens(name).some((word) => PRIVATE.has(word));

/** One column as read: the field suggested for it (if any), whether its name is exactly the word, and its hints. */
export interface ColumnSuggestion {
  field: string | undefined;
  /** The name is exactly the matched word (it wins over another column matching the same field). */
  exact: boolean;
  /** The name holds a private word: nothing is suggested. */
  private: boolean;
  hints: ColumnHints;
}

/** What the words suggest for one column (not the exact field names: `readColumns` checks those first). */
export function suggestColumn(name: string, kind: ReadingKind, targets: readonly string[]): ColumnSuggestion {
  const { hints, words } = nameHints(name, kind);
  if (kind === 'events') {
    const field = tokens(name).map((word) => EVENT_WORDS[word]).find((f) => f !== undefined && targets.includes(f));
    return { field, exact: false, private: false, hints };
  }
  if (words.some((word) => PRIVATE.has(word))) return { field: undefined, exact: false, private: true, hints };
  // Bounded: a name is at most 200 characters (docs/api.md, Bounds on what a file may hold), the list a few hundred entries.
  const entry = ENTRIES.find((e) => targets.includes(e.field) && containsRun(words, e.words));
  if (!entry) return { field: undefined, exact: false, private: false, hints };
  return { field: entry.field, exact: entry.words.length === words.length, private: false, hints };
}

/**
 * The fields of a header's columns: `given` (a person's choice: a field or null) first, then a column
 * named exactly as a field, then — with `suggest` — the words, applied where unambiguous. Returns the
 * field of each column (null: left out), each column's hints, and the columns no field was found for
 * (`unmapped`, in file order).
 */
export function readColumns(
  columns: readonly string[], kind: ReadingKind, targets: readonly string[],
  given: (column: string) => string | null | undefined, exactField: (column: string) => string | undefined, suggest: boolean,
): { fields: (string | null)[]; hints: ColumnHints[]; suggested: (string | null)[]; unmapped: string[] } {
  const readings = columns.map((column) => suggestColumn(column, kind, targets));
  const fields: (string | null)[] = columns.map((column) => {
    const chosen = given(column);
    if (chosen !== undefined) return chosen;
    return exactField(column) ?? null;
  });
  const decided = columns.map((column, i) => given(column) !== undefined || fields[i] !== null);
  const suggested: (string | null)[] = columns.map(() => null);
  const taken = new Set(fields.filter((f): f is string => f !== null));
  const byField = new Map<string, number[]>();
  readings.forEach((reading, i) => {
    if (decided[i] || !reading.field || taken.has(reading.field)) return;
    byField.set(reading.field, [...(byField.get(reading.field) ?? []), i]);
  });
  for (const [field, at] of byField) {
    const exact = at.filter((i) => readings[i]!.exact);
    const winner = at.length === 1 ? at[0] : exact.length === 1 ? exact[0] : undefined;
    if (winner === undefined) continue;
    suggested[winner] = field;
    if (suggest) fields[winner] = field;
  }
  const unmapped = columns.filter((_, i) => fields[i] === null && !decided[i]);
  return { fields, hints: readings.map((r) => r.hints), suggested, unmapped };
}
