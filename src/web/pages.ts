import type { ArtworkRow, EntityRow, EventRow } from '../db/types.js';
import type { ArtworkListItemType } from '../schemas/artworks.js';
import { html, page, safeHref, summary, type Html } from './html.js';
import {
  artworkPath, eventPath, formatDates, formatPlace, formatPrice, googleCalendarUrl, profilePath, webcalUrl,
} from './format.js';
import { guessLanguage } from './language.js';
import { artworkData, eventData, eventNode, profileData } from './structured-data.js';
import type { ImageView } from '../store/present.js';
import type { StoredView } from '../domain/artwork.js';
import { convertMeasure, type DimensionUnit } from '../domain/dimensions.js';

/** A record as its page shows it: with the platform's copy of its image (never the gallery's URL). */
export type Shown<T> = T & { image: ImageView | null };

export interface ProfileView {
  entity: EntityRow;
  artworks: ArtworkListItemType[];
  total: number;
  page: number;
  pageSize: number;
  upcoming: Array<Shown<EventRow>>;
  past: EventRow[];
  /** PUBLIC_BASE_URL: canonical links and structured data are absolute. */
  baseUrl: string;
}

function link(url: string | null, text: string): Html | '' {
  const href = safeHref(url);
  return href ? html`<li><a href="${href}" rel="noopener nofollow">${text}</a></li>` : '';
}

function calendarLinks(icalUrl: string | null): Html | '' {
  const href = safeHref(icalUrl);
  if (!href) return '';
  return html`<ul class="calendar" aria-label="Calendar">
  <li><a href="${webcalUrl(href)}" class="subscribe">Subscribe to calendar</a></li>
  <li><a href="${googleCalendarUrl(href)}" rel="noopener">Add to Google Calendar</a></li>
  <li><a href="${href}" rel="noopener">Calendar feed (.ics)</a></li>
</ul>`;
}

const byArtist = (a: { title: string; artist_name: string | null }) => `${a.title}${a.artist_name ? ` by ${a.artist_name}` : ''}`;

/**
 * The price a visitor sees: none once the work is sold, and as the gallery's `price_display` says
 * (docs/api.md, Price display): the price, "Price on request", or nothing.
 */
function shownPrice(a: Pick<ArtworkListItemType, 'availability' | 'price' | 'currency' | 'price_display'>): string | null {
  if (a.availability === 'sold' || a.availability === 'not_for_sale' || a.price_display === 'hidden') return null;
  if (a.price_display === 'on_request') return PRICE_ON_REQUEST;
  return formatPrice(a.price, a.currency);
}
const PRICE_ON_REQUEST = 'Price on request';
/** An availability as visitors read it: "not for sale", not `not_for_sale`. */
const availabilityLabel = (availability: string): string => availability.replace(/_/g, ' ');

/** What a layout's image slot is wide, for the browser to choose a copy from the srcsets. */
const SIZES = {
  image: '(min-width: 60rem) 18rem, (min-width: 32rem) 45vw, 100vw',
  'artwork-image': '(min-width: 60rem) 36rem, 100vw',
  view: '(min-width: 60rem) 11rem, 45vw',
  hero: '(min-width: 52rem) 48rem, 100vw',
} as const;

const PLACEHOLDER = { pending: 'Image coming soon', failed: 'Image unavailable' } as const;

/**
 * Our copies of an image, cropped to the layout's shape: AVIF, then WebP, then JPEG, each at every
 * width we keep, with the original's width and height (no layout shift). A pending or failed image,
 * or none, is a placeholder of the same shape: the gallery's own URL is never on a page.
 */
function picture(image: ImageView | null, alt: string, className: keyof typeof SIZES, lazy = true): Html {
  if (image?.status !== 'ready' || !image.srcset || !image.src) {
    const text = image ? PLACEHOLDER[image.status === 'ready' ? 'pending' : image.status] : 'No image';
    return html`<div class="${className} placeholder" role="img" aria-label="${text}">${text}</div>`;
  }
  const sizes = SIZES[className];
  return html`<div class="${className}"><picture>
  <source type="image/avif" srcset="${image.srcset.avif}" sizes="${sizes}">
  <source type="image/webp" srcset="${image.srcset.webp}" sizes="${sizes}">
  <img src="${image.src}" srcset="${image.srcset.jpeg}" sizes="${sizes}" width="${String(image.width)}" height="${String(image.height)}" alt="${alt}"${lazy ? html` loading="lazy"` : ''} decoding="async">
</picture></div>`;
}

/** The copy Open Graph and JSON-LD name: our largest JPEG (1600 px, or the original's width below that). */
export function shareImage(image: ImageView | null): string | undefined {
  if (image?.status !== 'ready' || !image.srcset) return undefined;
  return image.srcset.jpeg.split(', ').at(-1)?.split(' ')[0];
}

/** Cards a phone shows before scrolling load at once; the rest only when scrolled near (loading="lazy"). */
const EAGER_CARDS = 2;

function artworkCard(profileSlug: string, a: ArtworkListItemType, position: number): Html {
  const price = shownPrice(a);
  return html`<li class="card">
  <a class="card-link" href="${artworkPath(profileSlug, a.id)}">
  ${picture(a.image, byArtist(a), 'image', position >= EAGER_CARDS)}
  <div class="body">
    <h3>${a.title}</h3>
    ${a.artist_name ? html`<p>${a.artist_name}${a.creation_year !== null ? html`, ${a.creation_year}` : ''}</p>` : a.creation_year !== null ? html`<p>${a.creation_year}</p>` : ''}
    ${a.medium ? html`<p class="meta">${a.medium}</p>` : ''}
    <p>${a.availability ? html`<span class="badge ${a.availability}">${availabilityLabel(a.availability)}</span> ` : ''}${price ?? ''}</p>
  </div>
  </a>
</li>`;
}

function eventItem(profileSlug: string, e: EventRow): Html {
  const place = formatPlace(e.location_city, e.location_country);
  return html`<li>
  <a href="${eventPath(profileSlug, e.slug)}"><strong>${e.title}</strong></a>
  <div class="when">${formatDates(e.start_date, e.end_date)}${place ? html` · ${place}` : ''}${e.event_type ? html` · ${e.event_type}` : ''}</div>
</li>`;
}

function eventList(profileSlug: string, events: EventRow[], empty: string): Html {
  return events.length ? html`<ul class="events">${events.map((e) => eventItem(profileSlug, e))}</ul>` : html`<p class="meta">${empty}</p>`;
}

const langAttr = (text: string | null) => {
  const lang = guessLanguage(text);
  return lang && lang !== 'en' ? html` lang="${lang}"` : '';
};

export function profilePage({ entity, artworks, total, page: current, pageSize, upcoming, past, baseUrl }: ProfileView): string {
  const place = formatPlace(entity.location_city, entity.location_country);
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const base = profilePath(entity.slug);
  const url = `${baseUrl}${base}`;
  const body = html`<article class="profile">
  <p class="kind">${entity.type}</p>
  <h1>${entity.name}</h1>
  ${place ? html`<p class="meta">${place}</p>` : ''}
  ${entity.description ? html`<p class="description"${langAttr(entity.description)}>${entity.description}</p>` : ''}
  <ul class="links">
    ${link(entity.external_url, 'Website')}
    ${link(entity.social_instagram, 'Instagram')}
    ${link(entity.social_twitter, 'X / Twitter')}
  </ul>
  ${calendarLinks(entity.ical_url)}

  <section aria-labelledby="events-heading">
    <h2 id="events-heading">Upcoming events</h2>
    ${eventList(entity.slug, upcoming, 'No upcoming events.')}
  </section>

  <section aria-labelledby="artworks-heading">
    <h2 id="artworks-heading">Artworks <span class="count">(${total})</span></h2>
    ${artworks.length ? html`<ul class="grid">${artworks.map((a, i) => artworkCard(entity.slug, a, i))}</ul>` : html`<p class="meta">No artworks yet.</p>`}
    ${pages > 1 ? html`<nav class="pager" aria-label="Pages">
      ${current > 1 ? html`<a href="${base}?page=${current - 1}" rel="prev">Previous</a>` : ''}
      <span>Page ${current} of ${pages}</span>
      ${current < pages ? html`<a href="${base}?page=${current + 1}" rel="next">Next</a>` : ''}
    </nav>` : ''}
  </section>
  ${past.length ? html`
  <section aria-labelledby="past-heading">
    <h2 id="past-heading">Past exhibitions and events</h2>
    ${eventList(entity.slug, past, '')}
  </section>` : ''}
</article>`;
  const canonical = current > 1 ? `${url}?page=${current}` : url;
  // Each event's node names its own page, whose JSON-LD carries the whole description; here it is cut
  // like a meta description. Twenty 10 KB descriptions made a 254 KB page and ~4 ms of JSON on the
  // event loop per first build at 100,000 artworks (docs/performance.md, the stall scenario).
  const events = upcoming.map((e) =>
    eventNode(entity, url, { ...e, description: summary(e.description) ?? null }, `${baseUrl}${eventPath(entity.slug, e.slug)}`, shareImage(e.image)));
  return page({
    title: `${entity.name}${current > 1 ? ` · page ${current}` : ''} · Art Catalog`,
    description: entity.description ?? `${entity.type === 'gallery' ? 'Gallery' : 'Artist'}${place ? ` in ${place}` : ''}: artworks and events.`,
    canonical, type: 'profile', image: artworks.map((a) => shareImage(a.image)).find(Boolean),
    jsonLd: profileData(entity, url, events), body,
  });
}

/** One more view of a work as its page shows it: with our copy of the image. */
export type ShownView = StoredView & { image: ImageView | null };

export interface ArtworkView {
  entity: EntityRow;
  artwork: Shown<ArtworkRow>;
  views: ShownView[];
  baseUrl: string;
}

/** "Edition 3/50 (+5 AP)", "Edition of 50", or nothing (docs/api.md, Editions). */
export function formatEdition(a: Pick<ArtworkRow, 'edition_size' | 'edition_number' | 'artist_proofs'>): string | null {
  if (a.edition_size === null) return null;
  const proofs = a.artist_proofs ? ` (+${a.artist_proofs} AP)` : '';
  return a.edition_number === null ? `Edition of ${a.edition_size}${proofs}` : `Edition ${a.edition_number}/${a.edition_size}${proofs}`;
}

const formatMeasure = (value: number) => value.toLocaleString('en', { maximumFractionDigits: 2 });

/**
 * The measured size in centimetres and in inches ("200 × 160 cm (78.7 × 63 in)"; millimetres are shown
 * as given and in inches), or null when the work has no measured height and width.
 */
export function formatMeasured(a: Pick<ArtworkRow, 'height' | 'width' | 'depth' | 'dimension_unit'>): string | null {
  if (a.height === null || a.width === null || a.dimension_unit === null) return null;
  const unit = a.dimension_unit;
  const values = [a.height, a.width, ...(a.depth === null ? [] : [a.depth])];
  const inUnit = (to: DimensionUnit) => `${values.map((v) => formatMeasure(to === unit ? v : convertMeasure(v, unit, to))).join(' × ')} ${to}`;
  return unit === 'in' ? `${inUnit('in')} (${inUnit('cm')})` : `${inUnit(unit)} (${inUnit('in')})`;
}

const ROLE_NAMES = { detail: 'Detail', installation: 'Installation view', verso: 'Verso', frame: 'Frame', other: 'View' } as const;

/** The views after the main image, in order, each with its text alternative (title and artist when none is given). */
function viewList(a: ArtworkRow, views: ShownView[]): Html | '' {
  if (views.length === 0) return '';
  return html`<ul class="views" aria-label="More views">${views.map((view, i) => {
    const label = view.caption ?? (view.role ? ROLE_NAMES[view.role] : `View ${i + 2}`);
    return html`<li><figure>${picture(view.image, view.alt ?? `${byArtist(a)}: ${label}`, 'view')}<figcaption>${label}</figcaption></figure></li>`;
  })}</ul>`;
}

export function artworkPage({ entity, artwork: a, views, baseUrl }: ArtworkView): string {
  const entityUrl = `${baseUrl}${profilePath(entity.slug)}`;
  const url = `${baseUrl}${artworkPath(entity.slug, a.id)}`;
  const price = shownPrice(a);
  const facts: Array<[string, string | number | null]> = [
    ['Artist', a.artist_name], ['Year', a.creation_year], ['Medium', a.medium], ['Dimensions', formatMeasured(a) ?? a.dimensions],
    ['Edition', formatEdition(a)], ['Availability', a.availability && availabilityLabel(a.availability)], ['Price', price],
  ];
  const body = html`<article class="artwork">
  <p class="kind"><a href="${profilePath(entity.slug)}">${entity.name}</a></p>
  <div class="artwork-layout">
    <div class="artwork-views">
      ${picture(a.image, a.image_alt ?? byArtist(a), 'artwork-image', false)}
      ${viewList(a, views)}
    </div>
    <div class="artwork-text">
      <h1>${a.title}</h1>
      <dl class="facts">${facts.filter(([, v]) => v !== null && v !== '').map(([k, v]) => html`<dt>${k}</dt><dd>${k === 'Availability' ? html`<span class="badge ${String(v)}">${v}</span>` : v}</dd>`)}</dl>
      ${a.description ? html`<p class="description"${langAttr(a.description)}>${a.description}</p>` : ''}
      <ul class="links">
        ${link(a.external_url, `View or enquire on ${entity.name}'s website`)}
        <li><a href="${profilePath(entity.slug)}">More from ${entity.name}</a></li>
      </ul>
    </div>
  </div>
</article>`;
  return page({
    title: `${byArtist(a)} · ${entity.name}`,
    description: a.description ?? [byArtist(a), a.creation_year, a.medium].filter((v) => v !== null).join(', '),
    canonical: url, type: 'article', image: shareImage(a.image),
    jsonLd: artworkData(entity, entityUrl, a, url, price !== null && a.price_display === 'shown', shareImage(a.image), views.map((view) => shareImage(view.image))), body,
  });
}

export function eventPage(entity: EntityRow, e: Shown<EventRow>, baseUrl: string): string {
  const place = formatPlace(e.location_city, e.location_country);
  const entityUrl = `${baseUrl}${profilePath(entity.slug)}`;
  const url = `${baseUrl}${eventPath(entity.slug, e.slug)}`;
  const body = html`<article class="event">
  <p class="kind">${e.event_type ?? 'event'} · <a href="${profilePath(entity.slug)}">${entity.name}</a></p>
  <h1>${e.title}</h1>
  <p class="meta">${formatDates(e.start_date, e.end_date)}${place ? html` · ${place}` : ''}</p>
  ${e.image ? picture(e.image, e.title, 'hero', false) : ''}
  ${e.description ? html`<p class="description"${langAttr(e.description)}>${e.description}</p>` : ''}
  <ul class="links">
    ${e.start_date ? html`<li><a href="${eventPath(entity.slug, e.slug)}/event.ics" download>Download .ics</a></li>` : ''}
    ${link(e.external_url, 'More on the organiser\'s website')}
    ${link(e.ical_url, 'Organiser\'s calendar')}
  </ul>
</article>`;
  return page({
    title: `${e.title} · ${entity.name}`,
    description: e.description ?? `${formatDates(e.start_date, e.end_date)}${place ? `, ${place}` : ''} · ${entity.name}`,
    canonical: url, type: 'article', image: shareImage(e.image),
    jsonLd: eventData(entity, entityUrl, e, url, shareImage(e.image)), body,
  });
}

export function notFoundPage(): string {
  return page({
    title: 'Not found · Art Catalog',
    noindex: true,
    body: html`<h1>Not found</h1><p>There is no public page at this address. It may have moved, or the profile is not public right now.</p><p><a href="/">Back to the start page</a></p>`,
  });
}

export function homePage(entities: Array<{ slug: string; name: string; type: string }>, baseUrl: string): string {
  return page({
    title: 'Art Catalog',
    description: 'Galleries and artists and their catalogs of artworks and events.',
    canonical: `${baseUrl}/`,
    body: html`<h1>Art Catalog</h1>
<p class="description">Galleries and artists keep their catalog here up to date through the <a href="/docs">Art Catalog API</a>.</p>
<h2>Profiles</h2>
${entities.length ? html`<ul class="events">${entities.map((e) => html`<li><a href="${profilePath(e.slug)}"><strong>${e.name}</strong></a> <span class="meta">${e.type}</span></li>`)}</ul>` : html`<p class="meta">No profiles yet.</p>`}`,
  });
}
