import { afterAll, beforeAll, describe, expect, test } from 'vitest';

// Each user's password is hashed with scrypt (~0.3 s on an idle core): limits for a shared machine.
import { client, keyFor, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, signedIn } from '../support/console.js';
import { plainSecretsIn } from '../support/secrets-scan.js';

describe('console pages', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let owner: ConsoleSession;
  let artworkId: number;
  let eventId: number;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Seiten' });
    const api = client(t, gallery.key);
    const posted = await api.post('/v1/artworks/batch', { items: [
      { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, price: 1200000, currency: 'EUR', availability: 'available', external_id: 'GR-1' },
      { title: 'Infinity Nets', artist_name: '草間彌生', creation_year: 2009, availability: 'sold' },
      { title: 'Nachtstück', artist_name: 'Käthe Kollwitz', creation_year: 1925, availability: 'reserved' },
    ] });
    artworkId = posted.body.results[0].id;
    eventId = (await api.post('/v1/events', { title: 'Colour and Silence', event_type: 'exhibition', start_date: '2099-06-01' })).body.id;
    owner = await signedIn(t, base, gallery.entityId, 'owner');
  }, 120_000);
  afterAll(async () => t.close());

  test('the overview shows the counts per kind and the latest changes', async () => {
    const page = await owner.get('/console');
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/<dt>Artworks<\/dt><dd>3/);
    expect(page.text).toMatch(/<dt>Events<\/dt><dd>1/);
    expect(page.text).toContain('create <a href="/console/events/');
    expect(page.headers.get('cache-control')).toBe('no-store');
  });

  test('the artworks list searches by title or artist and filters by availability', async () => {
    expect((await owner.get('/console/artworks')).text).toContain('Nachtstück');
    const byArtist = await owner.get('/console/artworks?q=kusama');
    expect(byArtist.text).toContain('No artwork matches.');
    const cjk = await owner.get(`/console/artworks?q=${encodeURIComponent('草間')}`);
    expect(cjk.text).toContain('Infinity Nets');
    expect(cjk.text).not.toContain('Nachtstück');
    const richter = await owner.get('/console/artworks?q=RICHTER');
    expect(richter.text).toContain('Abstract Painting');
    const sold = await owner.get('/console/artworks?availability=sold');
    expect(sold.text).toContain('Infinity Nets');
    expect(sold.text).not.toContain('Abstract Painting');
    const percent = await owner.get('/console/artworks?q=%25');
    expect(percent.text).toContain('No artwork matches.');
  });

  test('the overview counts images by state and the lists filter by image state (docs/console.md, Overview)', async () => {
    const other = await tenant(t, { name: 'Galerie Bilder' });
    const api = client(t, other.key);
    // No image worker runs in these tests: a posted image stays pending, as it is until fetched.
    await api.post('/v1/artworks', { title: 'With Picture', artist_name: 'Anna Maler', image_url: 'https://images.example/with-picture.jpg' });
    await api.post('/v1/artworks', { title: 'Without Picture', artist_name: 'Anna Maler' });
    await api.post('/v1/events', { title: 'Opening With Poster', event_type: 'opening', start_date: '2099-01-01', image_url: 'https://images.example/poster.jpg' });
    const viewer = await signedIn(t, base, other.entityId, 'viewer');
    const overview = await viewer.get('/console');
    expect(overview.text).toMatch(/<dt>Images ready<\/dt><dd>0/);
    expect(overview.text).toContain('2 pending</a>');
    expect(overview.text).toContain('0 failed</a>');
    const pending = await viewer.get('/console/artworks?image_status=pending');
    expect(pending.text).toContain('With Picture');
    expect(pending.text).not.toContain('Without Picture');
    expect(pending.text).toMatch(/<option value="pending" selected>/);
    const ready = await viewer.get('/console/artworks?image_status=ready');
    expect(ready.text).toContain('No artwork matches.');
    const events = await viewer.get('/console/events?image_status=pending');
    expect(events.text).toContain('Opening With Poster');
    expect((await viewer.get('/console/events?image_status=failed')).text).toContain('No event matches.');
  });

  test('the artworks list pages by cursor', async () => {
    const api = client(t, gallery.key);
    await api.post('/v1/artworks/batch', { items: Array.from({ length: 55 }, (_, i) => ({ title: `Study ${i}`, artist_name: 'Paging Painter' })) });
    const first = await owner.get('/console/artworks?q=paging');
    expect(first.text.match(/<tr>/g)!.length).toBe(51);
    const next = /href="(\/console\/artworks\?q=paging&#38;after=\d+)">Next page/.exec(first.text)![1]!.replace(/&#38;/g, '&');
    const second = await owner.get(next);
    expect(second.text.match(/<tr>/g)!.length).toBe(6);
    expect(second.text).not.toContain('Next page');
    expect(second.text).toContain('First page');
  });

  test('an artwork page shows every field and its history; an edit goes through PUT\'s rules and is recorded as the console user', async () => {
    const page = await owner.get(`/console/artworks/${artworkId}`);
    expect(page.status).toBe(200);
    for (const text of ['Abstract Painting', 'Gerhard Richter', '1200000', 'GR-1', 'source fingerprint', 'History']) expect(page.text).toContain(text);
    // The fingerprint is out of the way, under a Details disclosure.
    expect(page.text).toMatch(/<details class="more"><summary>Details<\/summary><dl class="fields"><dt>source fingerprint<\/dt>/);
    const bad = await owner.post(`/console/artworks/${artworkId}`, { title: 'Abstract Painting', price: '12.500,00 €' });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('price-problem');
    expect(bad.text).toContain('12.500,00 €');
    const saved = await owner.post(`/console/artworks/${artworkId}`, { title: 'Abstract Painting', price: '950000', currency: 'EUR' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/console/artworks/${artworkId}?saved=1`);
    const read = await client(t, gallery.key).get(`/v1/artworks/${artworkId}`);
    expect(read.body.price).toBe(950000);
    const changes = await client(t, gallery.key).get(`/v1/changelog?after=0&limit=1000`);
    const entry = changes.body.changes.at(-1);
    expect(entry.source).toMatch(/^console:\d+$/);
    expect(entry.field_changes.price).toEqual({ old: 1200000, new: 950000 });
    const history = await owner.get(`/console/changelog?kind=artwork&record=${artworkId}`);
    expect(history.text).toContain('<del>1200000</del> → <ins>950000</ins>');
  });

  test('an edit that would duplicate another artwork gets 409 with a link to it, and changes nothing', async () => {
    const other = await client(t, gallery.key).get('/v1/artworks?limit=3');
    const kollwitz = other.body.artworks.find((a: any) => a.title === 'Nachtstück');
    const clash = await owner.post(`/console/artworks/${kollwitz.id}`, { title: 'Infinity Nets', artist_name: '草間彌生', creation_year: '2009' });
    expect(clash.status).toBe(409);
    expect(clash.text).toMatch(/Open artwork #\d+/);
    expect((await client(t, gallery.key).get(`/v1/artworks/${kollwitz.id}`)).body.title).toBe('Nachtstück');
  });

  test('an event can be edited and deleted from its page', async () => {
    expect((await owner.get(`/console/events/${eventId}`)).text).toContain('Colour and Silence');
    expect((await owner.post(`/console/events/${eventId}`, { title: 'Colour and Silence', end_date: '2099-05-01' })).status).toBe(400);
    expect((await owner.post(`/console/events/${eventId}`, { title: 'Colour and Silence', end_date: '2099-08-31' })).status).toBe(303);
    const deleted = await owner.post(`/console/events/${eventId}/delete`);
    expect(deleted.location).toBe(`/console/events?deleted=${eventId}`);
    expect((await client(t, gallery.key).get(`/v1/events/${eventId}`)).status).toBe(404);
    expect((await owner.get(`/console/events/${eventId}`)).status).toBe(404);
  });

  test('a key is created within the plan and shown once, rolled with the old one expiring, and revoked', async () => {
    const created = await owner.post('/console/keys', { tier: 'subscriber', scopes: 'artworks:read' });
    expect(created.status).toBe(200);
    const key = /<p class="secret">(ak_live_\w{32})<\/p>/.exec(created.text)![1]!;
    expect((await client(t, key).get('/v1/artworks')).status).toBe(200);
    expect((await client(t, key).get('/v1/events')).status).toBe(403);
    const list = await owner.get('/console/keys');
    expect(list.text).not.toContain(key);
    expect(list.text).toContain(key.slice(0, 16));
    const partner = await owner.post('/console/keys', { tier: 'partner', scopes: 'artworks:read' });
    expect(partner.status).toBe(400);
    expect(partner.text).toContain('does not include partner keys');
    const rolled = await owner.post(`/console/keys/${key.slice(0, 16)}/roll`, { expire_old_in: '1h' });
    const fresh = /<p class="secret">(ak_live_\w{32})<\/p>/.exec(rolled.text)![1]!;
    expect(fresh).not.toBe(key);
    expect((await client(t, fresh).get('/v1/artworks')).status).toBe(200);
    expect((await client(t, key).get('/v1/artworks')).status).toBe(200);
    const revoked = await owner.post(`/console/keys/${key.slice(0, 16)}/revoke`);
    expect(revoked.location).toBe(`/console/keys?revoked=${key.slice(0, 16)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await client(t, key).get('/v1/me')).status).toBe(401);
  });

  test('another entity\'s key cannot be rolled or revoked from this console', async () => {
    const other = await tenant(t, { name: 'Andere Galerie' });
    const { prefix } = await keyFor(t, other.entityId);
    expect((await owner.post(`/console/keys/${prefix}/revoke`)).status).toBe(404);
    expect((await owner.post(`/console/keys/${prefix}/roll`, { expire_old_in: 'now' })).status).toBe(404);
    expect((await client(t, other.key).get('/v1/me')).status).toBe(200);
  });

  test('an owner invites a person from the console and gets a one-time link', async () => {
    const invited = await owner.post('/console/people', { email: 'new.person@gallery.example', role: 'viewer' });
    expect(invited.status).toBe(200);
    const link = /<p class="secret">([^<]+)<\/p>/.exec(invited.text)![1]!;
    const path = new URL(link).pathname;
    expect((await new ConsoleSession(base).get(path)).text).toContain('new.person@gallery.example');
  });

  test('after this file\'s keys, endpoints and secrets shown, the database holds no whole key or webhook secret (docs/operations.md, Secrets at rest)', async () => {
    expect(await plainSecretsIn(t)).toEqual([]);
  });
});
