import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/**
 * Public artwork pages and their JSON-LD follow the art data (docs/api.md, Artworks): the price as
 * `price_display` says, measures in cm and in with schema.org QuantitativeValues and UN/CEFACT unit
 * codes, the edition, the views with their text alternatives.
 */

let t: TestApp;
beforeAll(async () => { t = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example', RATE_LIMIT_SUBSCRIBER: '100000', PUBLIC_RATE_LIMIT: '100000' }); });
afterAll(async () => { await t.close(); });

const visit = async (url: string) => {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.body };
};

function jsonLd(htmlText: string): any {
  const found = /<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec(htmlText);
  expect(found).not.toBeNull();
  return JSON.parse(found![1]!);
}

const visibleText = (htmlText: string) => htmlText.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/g, '').replace(/<[^>]+>/g, ' ')
  .replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/\s+/g, ' ');

/**
 * The properties schema.org defines for VisualArtwork (its own, and those of CreativeWork and Thing
 * this service writes): anything else in the JSON-LD would be ignored by search engines, or flagged.
 */
const VISUAL_ARTWORK_PROPERTIES = new Set([
  '@context', '@type', 'name', 'url', 'image', 'description', 'creator', 'dateCreated', 'artMedium', 'size', 'height', 'width',
  'depth', 'artEdition', 'sameAs', 'offers', 'artform', 'artworkSurface', 'artist',
]);

async function artworkPage(body: Record<string, unknown>) {
  const g = await tenant(t);
  const api = client(t, g.key);
  const posted = await api.post('/v1/artworks', { title: 'Untitled (Grey)', artist_name: 'Mira Stein', creation_year: 2021, ...body });
  expect(posted.status).toBe(201);
  const page = await visit(`/profiles/${g.slug}/artworks/${posted.body.id}`);
  expect(page.status).toBe(200);
  return { ...page, slug: g.slug, api };
}

describe('JSON-LD of an artwork page', () => {
  test('holds only VisualArtwork properties; height, width and depth are QuantitativeValues in CMT; artEdition is the edition size', async () => {
    const { body } = await artworkPage({ dimensions: '200 × 160 × 4 cm', edition_size: 50, edition_number: 3, artist_proofs: 5 });
    const data = jsonLd(body);
    expect(data['@type']).toBe('VisualArtwork');
    for (const property of Object.keys(data)) expect(VISUAL_ARTWORK_PROPERTIES.has(property), property).toBe(true);
    expect(data.height).toEqual({ '@type': 'QuantitativeValue', value: 200, unitCode: 'CMT', unitText: 'cm' });
    expect(data.width).toEqual({ '@type': 'QuantitativeValue', value: 160, unitCode: 'CMT', unitText: 'cm' });
    expect(data.depth).toEqual({ '@type': 'QuantitativeValue', value: 4, unitCode: 'CMT', unitText: 'cm' });
    expect(data.artEdition).toBe(50);
  });

  test('millimetres are MMT and inches INH; a work without measures has no height, width or depth', async () => {
    const mm = jsonLd((await artworkPage({ height: 420, width: 297, dimension_unit: 'mm' })).body);
    expect(mm.height).toMatchObject({ value: 420, unitCode: 'MMT' });
    expect(mm.width).toMatchObject({ value: 297, unitCode: 'MMT' });
    expect(mm.depth).toBeUndefined();
    const inches = jsonLd((await artworkPage({ dimensions: '78 ¾ × 63 in' })).body);
    expect(inches.height).toMatchObject({ value: 78.75, unitCode: 'INH' });
    expect(inches.width).toMatchObject({ value: 63, unitCode: 'INH' });
    const none = jsonLd((await artworkPage({ dimensions: 'variable dimensions' })).body);
    expect(none).not.toHaveProperty('height');
    expect(none.size).toBe('variable dimensions');
  });

  test('the price is in the offer only when shown: "Price on request" on the page when on_request, nothing when hidden', async () => {
    const base = { price: 48000, currency: 'EUR', availability: 'available' };
    const shown = await artworkPage(base);
    expect(jsonLd(shown.body).offers).toMatchObject({ price: 48000, priceCurrency: 'EUR' });

    const onRequest = await artworkPage({ ...base, price_display: 'on_request' });
    expect(visibleText(onRequest.body)).toContain('Price on request');
    expect(visibleText(onRequest.body)).not.toMatch(/48[,.\s\u00a0\u202f]?000/);
    expect(jsonLd(onRequest.body).offers).toEqual(expect.not.objectContaining({ price: expect.anything() }));
    expect(jsonLd(onRequest.body).offers).toMatchObject({ availability: 'https://schema.org/InStock' });
    // The profile's card says the same.
    expect(visibleText((await visit(`/profiles/${onRequest.slug}`)).body)).toContain('Price on request');

    const hidden = await artworkPage({ ...base, price_display: 'hidden' });
    expect(visibleText(hidden.body)).not.toMatch(/48[,.\s\u00a0\u202f]?000|Price on request/);
    expect(jsonLd(hidden.body).offers).toEqual(expect.not.objectContaining({ price: expect.anything() }));
  });
});

describe('an artwork page', () => {
  test('shows measures in cm and in, the edition as "Edition 3/50 (+5 AP)", and each view with its caption in order', async () => {
    const { body } = await artworkPage({
      dimensions: '200 x 160 cm', edition_size: 50, edition_number: 3, artist_proofs: 5,
      image_url: 'https://img.example/front.jpg', image_alt: 'A grey field crossed by one red line',
      additional_images: [
        { url: 'https://img.example/detail.jpg', caption: 'Detail of the red line', role: 'detail' },
        { url: 'https://img.example/verso.jpg', role: 'verso', alt: 'The back of the canvas, signed and dated' },
        { url: 'https://img.example/room.jpg', role: 'installation' },
      ],
    });
    const text = visibleText(body);
    expect(text).toContain('200 × 160 cm (78.7 × 63 in)');
    expect(text).toContain('Edition 3/50 (+5 AP)');
    const captions = [...body.matchAll(/<figcaption>([^<]*)<\/figcaption>/g)].map((m) => m[1]);
    expect(captions).toEqual(['Detail of the red line', 'Verso', 'Installation view']);
    // Not processed yet: placeholders, and never the gallery's own URLs.
    expect(body).not.toContain('img.example');
  });
});

describe('not for sale, and prices without a currency (docs/api.md, Artworks)', () => {
  test('a work not for sale shows no price on its page, has no offer in JSON-LD, and is listed by availability=not_for_sale', async () => {
    const { body, slug, api } = await artworkPage({ price: 42000, currency: 'EUR', availability: 'not_for_sale' });
    expect(visibleText(body)).toContain('Availability not for sale');
    expect(visibleText(body)).not.toMatch(/42[,.]?000/);
    expect(jsonLd(body).offers).toBeUndefined();
    const listed = await api.get('/v1/artworks?availability=not_for_sale');
    expect(listed.status).toBe(200);
    expect(listed.body.artworks.map((a: any) => a.availability)).toEqual(['not_for_sale']);
    expect(listed.body.total ?? listed.body.artworks.length).toBe(1);
    const profile = await visit(`/profiles/${slug}`);
    expect(visibleText(profile.body)).not.toMatch(/42[,.]?000/);
  });

  test('an offer never carries a price without its currency', async () => {
    const { body } = await artworkPage({ price: 42000, availability: 'available' });
    expect(jsonLd(body).offers).toMatchObject({ '@type': 'Offer', availability: 'https://schema.org/InStock' });
    expect(jsonLd(body).offers.price).toBeUndefined();
    expect(jsonLd(body).offers.priceCurrency).toBeUndefined();
    const priced = jsonLd((await artworkPage({ price: 42000, currency: 'CHF', availability: 'available' })).body);
    expect(priced.offers).toMatchObject({ price: 42000, priceCurrency: 'CHF' });
  });
});
