// ICU's first formatter of each kind costs 7-30 ms on the event loop (45 ms for the three on a slow
// hour: its locale data is read in from the node binary's pages), more than a whole page. Made lazily,
// that landed on the first visitor's page, the stall scenario's worst answer (docs/performance.md, the
// sixth look). So the public routes make them when they are registered, before the server listens
// (`prepareFormatters`); a process that serves no pages (the CLI's other commands) never maps ICU's data.
let dateFormat: Intl.DateTimeFormat | undefined;
let regionNames: Intl.DisplayNames | undefined;

const dates = (): Intl.DateTimeFormat =>
  (dateFormat ??= new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'long', year: 'numeric' }));
const regions = (): Intl.DisplayNames => (regionNames ??= new Intl.DisplayNames(['en'], { type: 'region' }));

/** Makes the formatters now (see above): dates, region names, and the currency data with one currency. */
export function prepareFormatters(): void {
  dates();
  regions();
  currencyFormat('EUR');
}

/**
 * A page shows up to 80 dates and they repeat across pages: each formatted once (ICU's formatting costs
 * microseconds, ~5 % of a profile page's first build). Bounded; past it, the memo starts again.
 */
const formattedDates = new Map<string, string>();

export function formatDate(isoDate: string): string {
  let formatted = formattedDates.get(isoDate);
  if (formatted === undefined) {
    formatted = dates().format(new Date(`${isoDate}T00:00:00Z`));
    if (formattedDates.size >= 10_000) formattedDates.clear();
    formattedDates.set(isoDate, formatted);
  }
  return formatted;
}

export function formatDates(start: string | null, end: string | null): string {
  if (!start) return 'Date to be announced';
  return end && end !== start ? `${formatDate(start)} – ${formatDate(end)}` : formatDate(start);
}

export function countryName(code: string | null): string | null {
  if (!code) return null;
  try {
    return regions().of(code) ?? code;
  } catch {
    return code;
  }
}

export const formatPlace = (city: string | null, country: string | null): string =>
  [city, countryName(country)].filter(Boolean).join(', ');

/**
 * One formatter per currency, made once: making one costs ~20 µs, 60 times per profile page. Bounded by
 * ICU's currency list (the only codes the API accepts); a code it does not know is remembered as null.
 */
const currencyFormats = new Map<string, Intl.NumberFormat | null>();

function currencyFormat(currency: string): Intl.NumberFormat | null {
  let format = currencyFormats.get(currency);
  if (format === undefined) {
    try {
      format = new Intl.NumberFormat('en', { style: 'currency', currency, maximumFractionDigits: 0 });
    } catch {
      format = null;
    }
    if (currencyFormats.size < 1_000) currencyFormats.set(currency, format);
  }
  return format;
}

export function formatPrice(price: number | null, currency: string | null): string | null {
  if (price === null) return null;
  if (!currency) return price.toLocaleString('en');
  return currencyFormat(currency)?.format(price) ?? `${price.toLocaleString('en')} ${currency}`;
}

/** The same feed address for calendar apps: webcal: makes them offer a subscription. */
export const webcalUrl = (icalUrl: string): string => icalUrl.replace(/^https?:/i, 'webcal:');
export const googleCalendarUrl = (icalUrl: string): string =>
  `https://calendar.google.com/calendar/r?cid=${encodeURIComponent(webcalUrl(icalUrl))}`;

export const profilePath = (slug: string): string => `/profiles/${encodeURIComponent(slug)}`;
export const eventPath = (profileSlug: string, eventSlug: string): string =>
  `${profilePath(profileSlug)}/events/${encodeURIComponent(eventSlug)}`;
export const artworkPath = (profileSlug: string, id: number): string => `${profilePath(profileSlug)}/artworks/${id}`;
