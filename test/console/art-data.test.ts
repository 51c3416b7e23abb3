import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, signedIn } from '../support/console.js';

/** docs/console.md, Editing an artwork's art data: shown and edited with PUT's rules, recorded as the console user. */

describe('the console edits the art data', { timeout: 120_000 }, () => {
  let t: TestApp;
  let gallery: Tenant;
  let owner: ConsoleSession;
  let artworkId: number;

  beforeAll(async () => {
    t = await startApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Daten' });
    artworkId = (await client(t, gallery.key).post('/v1/artworks', {
      title: 'Grey Field', artist_name: 'Mira Stein', creation_year: 2021, price: 48000, currency: 'EUR', dimensions: '200 x 160 cm',
      additional_images: [{ url: 'https://img.example/verso.jpg', role: 'verso', alt: 'The back, signed' }],
    })).body.id;
    owner = await signedIn(t, base, gallery.entityId, 'owner');
  }, 120_000);
  afterAll(async () => t.close());

  const changelogTotal = async () => (await client(t, gallery.key).get('/v1/changelog?limit=1')).body.total as number;

  test('the page shows the measures read from the text and the views, one a line', async () => {
    const page = await owner.get(`/console/artworks/${artworkId}`);
    expect(page.status).toBe(200);
    expect(page.text).toMatch(/id="f-height"[^>]*value="200"/);
    expect(page.text).toMatch(/<option value="cm" selected>/);
    expect(page.text).toContain('https://img.example/verso.jpg | verso |  | The back, signed');
    expect(page.text).toContain('<label for="f-price_display">Display on public pages</label>');
  });

  test('a form sets price on request, measures with a decimal comma, the edition, the alternative and the views; the same form again changes no field', async () => {
    const form = {
      title: 'Grey Field', price_display: 'on_request', height: '30,5', width: '20', depth: '', dimension_unit: 'cm',
      edition_size: '50', edition_number: '3', artist_proofs: '5', image_alt: 'A grey field crossed by one red line',
      additional_images: 'https://img.example/detail.jpg | detail | Detail of the line | Close-up of the red line\r\nhttps://img.example/verso.jpg | verso',
    };
    const before = await changelogTotal();
    const saved = await owner.post(`/console/artworks/${artworkId}`, form);
    expect(saved.status).toBe(303);
    const read = (await client(t, gallery.key).get(`/v1/artworks/${artworkId}`)).body;
    expect(read).toMatchObject({
      price_display: 'on_request', price: 48000, height: 30.5, width: 20, depth: null, dimension_unit: 'cm',
      edition_size: 50, edition_number: 3, artist_proofs: 5, image_alt: 'A grey field crossed by one red line',
    });
    expect(read.additional_images.map(({ image, ...view }: { image: unknown }) => view)).toEqual([
      { url: 'https://img.example/detail.jpg', role: 'detail', caption: 'Detail of the line', alt: 'Close-up of the red line' },
      { url: 'https://img.example/verso.jpg', role: 'verso', caption: null, alt: null },
    ]);
    const entry = (await client(t, gallery.key).get('/v1/changelog?after=0&limit=1000')).body.changes.at(-1);
    expect(entry.source).toMatch(/^console:\d+$/);
    expect(entry.field_changes).toMatchObject({ price_display: { old: 'shown', new: 'on_request' }, edition_number: { old: null, new: 3 } });
    expect(await changelogTotal()).toBe(before + 1);

    await owner.get(`/console/artworks/${artworkId}`);
    const again = await owner.post(`/console/artworks/${artworkId}`, { ...form, height: '30.5' });
    expect(again.status).toBe(303);
    // Every save is a write (it refreshes last_synced_at, as any API write does); no field changed.
    const last = (await client(t, gallery.key).get('/v1/changelog?after=0&limit=1000')).body.changes.at(-1);
    expect(Object.keys(last.field_changes)).toEqual(['last_synced_at']);
  });

  test('an edition number above the size and an unknown view role are refused on their fields, and nothing changes', async () => {
    await owner.get(`/console/artworks/${artworkId}`);
    const before = await changelogTotal();
    const number = await owner.post(`/console/artworks/${artworkId}`, { title: 'Grey Field', edition_number: '60' });
    expect(number.status).toBe(400);
    expect(number.text).toContain('id="f-edition_number-problem"');
    const role = await owner.post(`/console/artworks/${artworkId}`, { title: 'Grey Field', additional_images: 'https://img.example/x.jpg | back' });
    expect(role.status).toBe(400);
    expect(role.text).toContain('id="f-additional_images-problem"');
    expect(await changelogTotal()).toBe(before);
  });
});
