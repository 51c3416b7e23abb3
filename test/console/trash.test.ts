import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { findUserByEmail } from '../../src/store/users.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, type ConsoleSession } from '../support/console.js';

/**
 * The console's Trash page (docs/console.md, Trash): the entity's deleted artworks and events, Restore
 * and Delete forever through the API's store functions, recorded as the console user; editors and
 * owners only, CSRF-checked, another entity's records not found.
 */

describe('the console Trash page', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let editor: ConsoleSession & { email: string };
  let viewer: ConsoleSession & { email: string };

  const api = () => client(t, gallery.key);
  const trashIds = async (g = gallery) => (await client(t, g.key).get('/v1/trash?limit=100')).body.items.map((i: { kind: string; id: number }) => `${i.kind}-${i.id}`);
  const newArtwork = async (fields: Record<string, unknown>, g = gallery) => (await client(t, g.key).post('/v1/artworks', { artist_name: 'Mira Holm', ...fields })).body.id as number;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Papierkorb' });
    editor = await signedIn(t, base, gallery.entityId, 'editor');
    viewer = await signedIn(t, base, gallery.entityId, 'viewer');
  }, 120_000);
  afterAll(async () => t.close());

  test('it lists deleted artworks and events, newest first, with who deleted them in words, when, and until when; by kind', async () => {
    const artwork = await newArtwork({ title: 'Tidewater', creation_year: 2019, external_id: 'PK-1' });
    const event = (await api().post('/v1/events', { title: 'Winter Salon', event_type: 'exhibition', start_date: '2099-01-10' })).body.id as number;
    await api().delete(`/v1/artworks/${artwork}`);
    await editor.get(`/console/events/${event}`);
    const deleted = await editor.post(`/console/events/${event}/delete`);
    expect(deleted.location).toBe(`/console/events?deleted=${event}`);
    // The page after Delete says where the event went, with a link to it.
    const after = await editor.get(deleted.location!);
    expect(after.text).toContain(`Event #${event} went to the <a href="/console/trash?kind=events">Trash</a>`);

    const page = await editor.get('/console/trash');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/console/trash" aria-current="page">Trash</a>');
    expect(page.text.indexOf('Winter Salon')).toBeLessThan(page.text.indexOf('Tidewater'));
    const tidewater = page.text.slice(page.text.indexOf('Tidewater'));
    const row = tidewater.slice(0, tidewater.indexOf('</tr>'));
    expect(row).toContain('<td data-label="Artist">Mira Holm</td>');
    expect(row).toContain(`API key ${gallery.prefix}…`);
    expect(row).toMatch(/<td data-label="Removed for good"><time datetime="[^"]+">/);
    expect(row).toContain(`action="/console/trash/artworks/${artwork}/restore"`);
    expect(row).toContain(`href="/console/trash/artworks/${artwork}/delete"`);
    const salon = page.text.slice(page.text.indexOf('Winter Salon'));
    expect(salon.slice(0, salon.indexOf("</tr>"))).toContain(`by ${editor.email}</span>`);

    const events = await editor.get('/console/trash?kind=events');
    expect(events.text).toContain('Winter Salon');
    expect(events.text).not.toContain('Tidewater');
    expect(events.text).toMatch(/<option value="events" selected>/);
    expect((await editor.get('/console/trash?kind=artworks')).text).not.toContain('Winter Salon');
    // A deleted record's own page is still not found, and says it is in the Trash.
    const gone = await editor.get(`/console/artworks/${artwork}`);
    expect(gone.status).toBe(404);
    expect(gone.text).toContain('is in the Trash until');
    expect(gone.text).toContain('href="/console/trash?kind=artworks"');
  });

  test('Restore brings an artwork and an event back with their ids, recorded as a create by the console user', async () => {
    const artwork = await newArtwork({ title: 'Lantern Field', creation_year: 2021, price: 4200, currency: 'EUR' });
    const event = (await api().post('/v1/events', { title: 'Spring Talk', event_type: 'talk', start_date: '2099-04-02' })).body.id as number;
    await api().delete(`/v1/artworks/${artwork}`);
    await api().delete(`/v1/events/${event}`);

    await editor.get('/console/trash');
    const restored = await editor.post(`/console/trash/artworks/${artwork}/restore`);
    expect(restored.status).toBe(303);
    expect(restored.location).toBe(`/console/trash?restored=artworks-${artwork}`);
    const page = await editor.get(restored.location!);
    expect(page.text).toContain(`“Lantern Field” is back in the catalog, with the same number and every field: <a href="/console/artworks/${artwork}">open artwork #${artwork}</a>`);
    expect(page.text).not.toContain(`/console/trash/artworks/${artwork}/restore`);

    expect((await editor.get(`/console/artworks/${artwork}`)).status).toBe(200);
    const read = await api().get(`/v1/artworks/${artwork}`);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: artwork, title: 'Lantern Field', price: 4200, currency: 'EUR' });
    const userId = (await findUserByEmail(t.handle.db, editor.email))!.id;
    const changes = (await api().get('/v1/changelog?after=0&limit=1000')).body.changes;
    const create = changes.filter((c: any) => c.entity_type === 'artwork' && c.entity_id === artwork).at(-1);
    expect(create).toMatchObject({ action: 'create', source: `console:${userId}` });

    expect((await editor.post(`/console/trash/events/${event}/restore`)).location).toBe(`/console/trash?restored=events-${event}`);
    expect((await api().get(`/v1/events/${event}`)).body.title).toBe('Spring Talk');
    expect((await editor.get(`/console/events/${event}`)).status).toBe(200);
    expect(await trashIds()).not.toContain(`artworks-${artwork}`);
    expect(await trashIds()).not.toContain(`events-${event}`);
  });

  test('Restore when a live record holds its identity says which one, with a link, and restores nothing', async () => {
    const first = await newArtwork({ title: 'Quiet Harbour', creation_year: 2018, external_id: 'PK-9' });
    await api().delete(`/v1/artworks/${first}`);
    const holder = await newArtwork({ title: 'Quiet Harbour (new)', creation_year: 2018, external_id: 'PK-9' });

    await editor.get('/console/trash');
    const refused = await editor.post(`/console/trash/artworks/${first}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain(`“Quiet Harbour” (artwork #${first}) was not restored: <a href="/console/artworks/${holder}">artwork #${holder}</a> in the catalog now has the same inventory number`);
    expect(refused.text).toContain('role="alert"');
    expect(await trashIds()).toContain(`artworks-${first}`);
    expect((await api().get(`/v1/artworks/${first}`)).status).toBe(404);
    expect((await api().get(`/v1/artworks/${holder}`)).body.title).toBe('Quiet Harbour (new)');

    const event = (await api().post('/v1/events', { title: 'Night Walk', event_type: 'other', start_date: '2099-02-02' })).body.id as number;
    await api().delete(`/v1/events/${event}`);
    const eventHolder = (await api().post('/v1/events', { title: 'Night Walk', event_type: 'other', start_date: '2099-03-03' })).body.id as number;
    const clash = await editor.post(`/console/trash/events/${event}/restore`);
    expect(clash.status).toBe(409);
    expect(clash.text).toContain(`<a href="/console/events/${eventHolder}">event #${eventHolder}</a> in the catalog now has the same title`);
    expect(await trashIds()).toContain(`events-${event}`);
  });

  test('Delete forever asks first, then removes the record for good: the trash no longer holds it and nothing brings it back', async () => {
    const artwork = await newArtwork({ title: 'Last Light', creation_year: 2015 });
    await api().delete(`/v1/artworks/${artwork}`);

    const ask = await editor.get(`/console/trash/artworks/${artwork}/delete`);
    expect(ask.status).toBe(200);
    expect(ask.text).toContain('Delete “Last Light” forever?');
    expect(ask.text).toContain('This cannot be undone.');
    expect(ask.text).toContain(`<form method="post" action="/console/trash/artworks/${artwork}/delete"`);
    // Asking changed nothing.
    expect(await trashIds()).toContain(`artworks-${artwork}`);

    const removed = await editor.post(`/console/trash/artworks/${artwork}/delete`);
    expect(removed.status).toBe(303);
    expect(removed.location).toBe(`/console/trash?removed=artworks-${artwork}`);
    expect((await editor.get(removed.location!)).text).toContain(`Artwork #${artwork} was deleted for good.`);
    expect(await trashIds()).not.toContain(`artworks-${artwork}`);
    expect((await api().get(`/v1/artworks/${artwork}`)).status).toBe(404);
    expect((await api().post(`/v1/artworks/${artwork}/restore`, {})).status).toBe(404);
    expect((await editor.get(`/console/artworks/${artwork}`)).text).not.toContain('in the Trash');
    expect((await editor.get(`/console/trash/artworks/${artwork}/delete`)).status).toBe(404);
    expect((await editor.post(`/console/trash/artworks/${artwork}/delete`)).status).toBe(404);

    const event = (await api().post('/v1/events', { title: 'Closing Night', event_type: 'other', start_date: '2099-05-05' })).body.id as number;
    await api().delete(`/v1/events/${event}`);
    expect((await editor.post(`/console/trash/events/${event}/delete`)).status).toBe(303);
    expect(await trashIds()).not.toContain(`events-${event}`);
  });

  test('a viewer gets 403 on every Trash route, does not see it in the navigation, and changes nothing', async () => {
    const artwork = await newArtwork({ title: 'Viewer Proof', creation_year: 2011 });
    await api().delete(`/v1/artworks/${artwork}`);
    const overview = await viewer.get('/console');
    expect(overview.text).not.toContain('href="/console/trash"');
    expect((await viewer.get('/console/trash')).status).toBe(403);
    expect((await viewer.get(`/console/trash/artworks/${artwork}/delete`)).status).toBe(403);
    expect((await viewer.post(`/console/trash/artworks/${artwork}/restore`)).status).toBe(403);
    expect((await viewer.post(`/console/trash/artworks/${artwork}/delete`)).status).toBe(403);
    expect(await trashIds()).toContain(`artworks-${artwork}`);
    expect((await api().get(`/v1/artworks/${artwork}`)).status).toBe(404);
    // The record's page tells a viewer where it is without a link they may not follow.
    const page = await viewer.get(`/console/artworks/${artwork}`);
    expect(page.text).toContain('An editor or an owner can restore it from the Trash.');
  });

  test('a form post without the CSRF token, with a forged one, or from another site gets 403 and changes nothing', async () => {
    const artwork = await newArtwork({ title: 'Guarded Trash', creation_year: 2012 });
    await api().delete(`/v1/artworks/${artwork}`);
    await editor.get('/console/trash');
    for (const path of [`/console/trash/artworks/${artwork}/restore`, `/console/trash/artworks/${artwork}/delete`]) {
      expect((await editor.post(path, { _csrf: '' })).status).toBe(403);
      expect((await editor.post(path, { _csrf: 'forged-token' })).status).toBe(403);
      expect((await editor.request('POST', path, new URLSearchParams())).status).toBe(403);
      expect((await editor.post(path, {}, { origin: 'https://evil.example' })).status).toBe(403);
    }
    expect(await trashIds()).toContain(`artworks-${artwork}`);
    expect((await api().get(`/v1/artworks/${artwork}`)).status).toBe(404);
  });

  test('another entity\'s trashed record, an unknown kind and a malformed id are not found, and nothing changes', async () => {
    const other = await tenant(t, { name: 'Galerie Nebenan' });
    const theirs = await newArtwork({ title: 'Not Yours', creation_year: 2010 }, other);
    await client(t, other.key).delete(`/v1/artworks/${theirs}`);
    const theirEvent = (await client(t, other.key).post('/v1/events', { title: 'Their Opening', event_type: 'opening', start_date: '2099-07-07' })).body.id as number;
    await client(t, other.key).delete(`/v1/events/${theirEvent}`);

    // The same routes answer for this gallery's own trashed record, so each 404 below is the other gallery's.
    const mine = await newArtwork({ title: 'Mine', creation_year: 2010 });
    await api().delete(`/v1/artworks/${mine}`);
    expect((await editor.get(`/console/trash/artworks/${mine}/delete`)).status).toBe(200);
    const list = await editor.get('/console/trash');
    expect(list.status).toBe(200);
    expect(list.text).toContain('Mine');
    expect(list.text).not.toContain('Not Yours');
    for (const [kind, id] of [['artworks', theirs], ['events', theirEvent]] as const) {
      expect((await editor.post(`/console/trash/${kind}/${id}/restore`)).status).toBe(404);
      expect((await editor.get(`/console/trash/${kind}/${id}/delete`)).status).toBe(404);
      expect((await editor.post(`/console/trash/${kind}/${id}/delete`)).status).toBe(404);
      // Their record's page is the plain 404: nothing says it exists in another trash.
      const page = await editor.get(`/console/${kind}/${id}`);
      expect(page.status).toBe(404);
      expect(page.text).not.toContain('Trash until');
    }
    expect(await trashIds(other)).toEqual([`events-${theirEvent}`, `artworks-${theirs}`]);

    for (const path of ['/console/trash/feeds/1/restore', '/console/trash/artwork/1/restore', '/console/trash/artworks/abc/restore',
      '/console/trash/artworks/1e3/delete', '/console/trash/events/-1/delete']) {
      expect((await editor.post(path)).status, path).toBe(404);
    }
    for (const path of ['/console/trash/feeds/1/delete', '/console/trash/artworks/0/delete', '/console/trash/events/99999999999999999999/delete']) {
      expect((await editor.get(path)).status, path).toBe(404);
    }
    // A cursor this service did not give out is the first page, not an error.
    expect((await editor.get('/console/trash?after=bogus&kind=nothing')).status).toBe(200);
  });

  test('a deleted record\'s text is escaped on the Trash, its question and its notices', async () => {
    const PAYLOAD = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'`';
    const artwork = await newArtwork({ title: `Work ${PAYLOAD}`, artist_name: `Artist ${PAYLOAD}`, external_id: `X ${PAYLOAD}`.slice(0, 100) });
    await api().delete(`/v1/artworks/${artwork}`);
    await newArtwork({ title: 'Holder', external_id: `X ${PAYLOAD}`.slice(0, 100) });
    await editor.get('/console/trash');
    const pages = [
      await editor.get('/console/trash'), await editor.get(`/console/trash/artworks/${artwork}/delete`), await editor.get(`/console/artworks/${artwork}`),
      await editor.post(`/console/trash/artworks/${artwork}/restore`),
    ];
    for (const page of pages) {
      expect(page.text).toContain('Work &#60;script&#62;alert(1)');
      expect(page.text).not.toMatch(/<script>alert|<img src=x|onerror=alert\(2\)>|"><script/);
    }
  });

  test('the list pages by cursor, 50 at a time, keeping the kind', async () => {
    const own = await tenant(t, { name: 'Galerie Viele' });
    const owner = await signedIn(t, base, own.entityId, 'owner');
    const ids = (await client(t, own.key).post('/v1/artworks/batch', { items: Array.from({ length: 53 }, (_, i) => ({ title: `Sketch ${i}`, artist_name: 'Paging Painter' })) }))
      .body.results.map((r: { id: number }) => r.id);
    for (const id of ids) await client(t, own.key).delete(`/v1/artworks/${id}`);
    const first = await owner.get('/console/trash?kind=artworks');
    expect(first.text.match(/<tr>/g)!.length).toBe(51);
    const next = /href="(\/console\/trash\?kind=artworks&#38;after=[\w-]+)">Next page/.exec(first.text)![1]!.replace(/&#38;/g, '&');
    const second = await owner.get(next);
    expect(second.text.match(/<tr>/g)!.length).toBe(4);
    expect(second.text).toContain('Sketch 0<');
    expect(second.text).not.toContain('Next page');
    expect(second.text).toContain('First page');
  });
});
