// Made on first use, not when the module loads: a formatter maps ICU's locale data (~6.5 MB of the node
// binary's pages, counted in RSS), which a server that renders no page never needs (docs/performance.md).
let dateFormat: Intl.DateTimeFormat | undefined;
let regionNames: Intl.DisplayNames | undefined;

export const formatDate = (isoDate: string): string =>
  (dateFormat ??= new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'long', year: 'numeric' }))
    .format(new Date(`${isoDate}T00:00:00Z`));

export function formatDates(start: string | null, end: string | null): string {
  if (!start) return 'Date to be announced';
  return end && end !== start ? `${formatDate(start)} – ${formatDate(end)}` : formatDate(start);
}

export function countryName(code: string | null): string | null {
  if (!code) return null;
  try {
    return (regionNames ??= new Intl.DisplayNames(['en'], { type: 'region' })).of(code) ?? code;
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
