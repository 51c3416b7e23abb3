import type { FastifyInstance } from 'fastify';
import { AVAILABILITY, type Availability } from '../../schemas/artworks.js';
import type { ImageStatus } from '../../db/types.js';
import { searchArtworks, searchEvents } from '../../store/console.js';
import { html, type Html } from '../../web/html.js';
import { heading, notice, render, table } from '../layout.js';
import { cursor } from '../paths.js';

export const LIST_PAGE_SIZE = 50;

type Query = Record<string, string | undefined>;

/** Links to the next page (the cursor) and back to the first, keeping the search and filters. */
function pager(path: string, query: Query, count: number, after: number, nextAfter: number | null): Html {
  const keep = (extra: Record<string, string>) => {
    const params = new URLSearchParams();
    for (const name of ['q', 'availability', 'image_status']) if (query[name]) params.set(name, query[name]);
    for (const [name, value] of Object.entries(extra)) params.set(name, value);
    const text = params.toString();
    return text ? `${path}?${text}` : path;
  };
  return html`<nav class="pager" aria-label="Pages"><span>${count} shown${after ? ' (after the first page)' : ''}</span><span class="actions">
${after ? html`<a class="button secondary" href="${keep({})}">First page</a>` : ''}
${nextAfter !== null ? html`<a class="button secondary" href="${keep({ after: String(nextAfter) })}">Next page</a>` : ''}</span></nav>`;
}

const search = (query: Query, label: string, extra: Html = html``): Html => html`<form method="get" class="filters" role="search">
<div class="field search"><label for="q">Search</label><input id="q" name="q" type="search" value="${query.q ?? ''}" placeholder="${label}"></div>
${extra}
<div><button type="submit" class="secondary">Search</button></div>
</form>`;

const availabilityOf = (raw: string | undefined): Availability | undefined => (AVAILABILITY.includes(raw as Availability) ? raw as Availability : undefined);

const IMAGE_STATES: readonly ImageStatus[] = ['pending', 'ready', 'failed'];
const imageStatusOf = (raw: string | undefined): ImageStatus | undefined => (IMAGE_STATES.includes(raw as ImageStatus) ? raw as ImageStatus : undefined);

/** A filter's select: "Any" and the given values, the chosen one selected. */
const choice = (name: string, label: string, values: readonly string[], chosen: string | undefined): Html =>
  html`<div class="field"><label for="${name}">${label}</label><select id="${name}" name="${name}"><option value="">Any</option>${values.map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ''}>${v}</option>`)}</select></div>`;

/** After a record's Delete: where it went, and the way back (docs/console.md, Trash). */
function deletedNotice(kind: 'artworks' | 'events', deleted: string | undefined, days: number): Html | '' {
  const id = cursor(deleted);
  if (!id) return '';
  return notice('ok', html`${kind === 'artworks' ? 'Artwork' : 'Event'} #${id} went to the <a href="/console/trash?kind=${kind}">Trash</a>: Restore there brings it back within ${days} days.`);
}

const money = (price: number | null, currency: string | null): string => (price === null ? '' : `${price.toLocaleString('en')} ${currency ?? ''}`.trim());

/** Artworks and Events: search, filters, cursor paging (docs/console.md, Artworks and events). */
export async function listPages(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: Query }>('/artworks', { config: { role: 'viewer' } }, async (request, reply) => {
    const query = request.query;
    const after = cursor(query.after);
    const availability = availabilityOf(query.availability);
    const imageStatus = imageStatusOf(query.image_status);
    const page = await searchArtworks(app.db, request.user.entity.id, { search: query.q, availability, imageStatus, after, limit: LIST_PAGE_SIZE });
    const filter = html`${choice('availability', 'Availability', AVAILABILITY, availability)}${choice('image_status', 'Image', IMAGE_STATES, imageStatus)}`;
    const rows = page.rows.map((a) => [
      html`<a href="/console/artworks/${a.id}">${a.title}</a>`, a.artist_name, a.creation_year, money(a.price, a.currency),
      a.availability ? html`<span class="badge badge-${a.availability}">${a.availability}</span>` : null, a.external_id,
    ]);
    return render(request, reply, {
      title: 'Artworks', section: 'artworks',
      body: html`${heading('Artworks', 'Every work in the catalog, in the order they were added.')}
${deletedNotice('artworks', query.deleted, app.config.trashDays)}
${search(query, 'Title or artist', filter)}
${table('Artworks', ['Title', 'Artist', 'Year', 'Price', 'Availability', 'Inventory no.'], rows, query.q || availability || imageStatus ? 'No artwork matches.' : 'No artworks yet. Import a spreadsheet or sync through the API.')}
${pager('/console/artworks', query, page.rows.length, after, page.nextAfter)}`,
    });
  });

  app.get<{ Querystring: Query }>('/events', { config: { role: 'viewer' } }, async (request, reply) => {
    const query = request.query;
    const after = cursor(query.after);
    const imageStatus = imageStatusOf(query.image_status);
    const page = await searchEvents(app.db, request.user.entity.id, { search: query.q, imageStatus, after, limit: LIST_PAGE_SIZE });
    const rows = page.rows.map((e) => [
      html`<a href="/console/events/${e.id}">${e.title}</a>`, e.event_type, e.start_date, e.end_date,
      [e.location_city, e.location_country].filter(Boolean).join(', ') || null,
    ]);
    return render(request, reply, {
      title: 'Events', section: 'events',
      body: html`${heading('Events', 'Exhibitions, openings and talks.')}
${deletedNotice('events', query.deleted, app.config.trashDays)}
${search(query, 'Title', choice('image_status', 'Image', IMAGE_STATES, imageStatus))}
${table('Events', ['Title', 'Type', 'Starts', 'Ends', 'Where'], rows, query.q || imageStatus ? 'No event matches.' : 'No events yet.')}
${pager('/console/events', query, page.rows.length, after, page.nextAfter)}`,
    });
  });
}
