import type { EntityRow, EventRow } from '../db/types.js';
import type { ArtworkListItemType } from '../schemas/artworks.js';
import { html, page, safeHref, type Html } from './html.js';
import {
  eventPath, formatDates, formatPlace, formatPrice, googleCalendarUrl, profilePath, webcalUrl,
} from './format.js';

export interface ProfileView {
  entity: EntityRow;
  artworks: ArtworkListItemType[];
  total: number;
  page: number;
  pageSize: number;
  events: EventRow[];
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

function artworkCard(a: ArtworkListItemType): Html {
  const image = safeHref(a.image_url);
  const price = a.availability === 'sold' ? null : formatPrice(a.price, a.currency);
  return html`<li class="card">
  <div class="image">${image ? html`<img src="${image}" alt="${a.title}${a.artist_name ? ` by ${a.artist_name}` : ''}" loading="lazy" decoding="async">` : 'No image'}</div>
  <div class="body">
    <h3>${a.title}</h3>
    ${a.artist_name ? html`<p>${a.artist_name}${a.creation_year !== null ? html`, ${a.creation_year}` : ''}</p>` : a.creation_year !== null ? html`<p>${a.creation_year}</p>` : ''}
    ${a.medium ? html`<p class="meta">${a.medium}</p>` : ''}
    <p>${a.availability ? html`<span class="badge ${a.availability}">${a.availability}</span> ` : ''}${price ?? ''}</p>
  </div>
</li>`;
}

function eventItem(profileSlug: string, e: EventRow): Html {
  const place = formatPlace(e.location_city, e.location_country);
  return html`<li>
  <a href="${eventPath(profileSlug, e.slug)}"><strong>${e.title}</strong></a>
  <div class="when">${formatDates(e.start_date, e.end_date)}${place ? html` · ${place}` : ''}${e.event_type ? html` · ${e.event_type}` : ''}</div>
</li>`;
}

export function profilePage({ entity, artworks, total, page: current, pageSize, events }: ProfileView): string {
  const place = formatPlace(entity.location_city, entity.location_country);
  const pages = Math.max(1, Math.ceil(total / pageSize));
  const base = profilePath(entity.slug);
  const body = html`<article class="profile">
  <p class="kind">${entity.type}</p>
  <h1>${entity.name}</h1>
  ${place ? html`<p class="meta">${place}</p>` : ''}
  ${entity.description ? html`<p class="description">${entity.description}</p>` : ''}
  <ul class="links">
    ${link(entity.external_url, 'Website')}
    ${link(entity.social_instagram, 'Instagram')}
    ${link(entity.social_twitter, 'X / Twitter')}
  </ul>
  ${calendarLinks(entity.ical_url)}

  <section aria-labelledby="events-heading">
    <h2 id="events-heading">Upcoming events</h2>
    ${events.length ? html`<ul class="events">${events.map((e) => eventItem(entity.slug, e))}</ul>` : html`<p class="meta">No upcoming events.</p>`}
  </section>

  <section aria-labelledby="artworks-heading">
    <h2 id="artworks-heading">Artworks <span class="meta">(${total})</span></h2>
    ${artworks.length ? html`<ul class="grid">${artworks.map(artworkCard)}</ul>` : html`<p class="meta">No artworks yet.</p>`}
    ${pages > 1 ? html`<nav class="pager" aria-label="Pages">
      ${current > 1 ? html`<a href="${base}?page=${current - 1}" rel="prev">Previous</a>` : ''}
      <span>Page ${current} of ${pages}</span>
      ${current < pages ? html`<a href="${base}?page=${current + 1}" rel="next">Next</a>` : ''}
    </nav>` : ''}
  </section>
</article>`;
  return page({ title: `${entity.name} · Art Catalog`, description: entity.description, body });
}

export function eventPage(entity: EntityRow, e: EventRow): string {
  const place = formatPlace(e.location_city, e.location_country);
  const image = safeHref(e.image_url);
  const body = html`<article class="event">
  <p class="kind">${e.event_type ?? 'event'} · <a href="${profilePath(entity.slug)}">${entity.name}</a></p>
  <h1>${e.title}</h1>
  <p class="meta">${formatDates(e.start_date, e.end_date)}${place ? html` · ${place}` : ''}</p>
  ${image ? html`<p><img src="${image}" alt="${e.title}" loading="lazy" style="max-width:100%"></p>` : ''}
  ${e.description ? html`<p class="description">${e.description}</p>` : ''}
  <ul class="links">
    ${e.start_date ? html`<li><a href="${eventPath(entity.slug, e.slug)}/event.ics" download>Download .ics</a></li>` : ''}
    ${link(e.external_url, 'More on the organiser\'s website')}
    ${link(e.ical_url, 'Organiser\'s calendar')}
  </ul>
</article>`;
  return page({ title: `${e.title} · ${entity.name}`, description: e.description, body });
}

export function notFoundPage(): string {
  return page({
    title: 'Not found · Art Catalog',
    body: html`<h1>Not found</h1><p>There is no public page at this address. It may have moved, or the profile is not public right now.</p><p><a href="/">Back to the start page</a></p>`,
  });
}

export function homePage(entities: EntityRow[]): string {
  return page({
    title: 'Art Catalog',
    body: html`<h1>Art Catalog</h1>
<p class="description">Galleries and artists keep their catalog here up to date through the <a href="/docs">Art Catalog API</a>.</p>
<h2>Profiles</h2>
${entities.length ? html`<ul class="events">${entities.map((e) => html`<li><a href="${profilePath(e.slug)}"><strong>${e.name}</strong></a> <span class="meta">${e.type}</span></li>`)}</ul>` : html`<p class="meta">No profiles yet.</p>`}`,
  });
}
