import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** A trashed record is gone from the public pages, the sitemap and the calendar feed, and comes back on restore (docs/api.md, Trash). */

let t: TestApp;
beforeAll(async () => { t = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example' }); });
afterAll(async () => { await t.close(); });

async function visit(url: string) {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.body };
}

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

describe('public pages of a trashed record', () => {
  test('an artwork\'s page and sitemap entry, and an event\'s page and calendar entry, go with the delete and come back with the restore', async () => {
    const g = await tenant(t, { name: 'Trash Public Gallery' });
    const api = client(t, g.key);
    const artwork = await api.post('/v1/artworks', { title: 'Public Trash Work', creation_year: 2011 });
    const event = await api.post('/v1/events', { title: 'Public Trash Show', start_date: day(10), end_date: day(20) });
    const eventSlug = (await api.get(`/v1/events/${event.body.id}`)).body.slug as string;
    const artworkPage = `/profiles/${g.slug}/artworks/${artwork.body.id}`;
    const eventPage = `/profiles/${g.slug}/events/${eventSlug}`;
    const shown = async () => ({
      artworkPage: (await visit(artworkPage)).status,
      inSitemap: (await visit(`/profiles/${g.slug}/sitemap.xml`)).body.includes(artworkPage),
      onProfile: (await visit(`/profiles/${g.slug}`)).body.includes('Public Trash Work'),
      eventPage: (await visit(eventPage)).status,
      inCalendar: (await visit(`/profiles/${g.slug}/events.ics`)).body.includes('Public Trash Show'),
    });
    const everywhere = { artworkPage: 200, inSitemap: true, onProfile: true, eventPage: 200, inCalendar: true };
    expect(await shown()).toEqual(everywhere);

    await api.delete(`/v1/artworks/${artwork.body.id}`);
    await api.delete(`/v1/events/${event.body.id}`);
    expect(await shown()).toEqual({ artworkPage: 404, inSitemap: false, onProfile: false, eventPage: 404, inCalendar: false });

    expect((await api.post(`/v1/artworks/${artwork.body.id}/restore`, {})).status).toBe(200);
    expect((await api.post(`/v1/events/${event.body.id}/restore`, {})).status).toBe(200);
    expect(await shown()).toEqual(everywhere);
  });
});
