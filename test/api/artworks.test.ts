import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** Artworks: create, merge by fingerprint, list, read, change, delete (docs/api.md, Artworks). */

let t: TestApp;
// A generous limit so that rate limiting never interferes with these tests (it has tests of its own).
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh gallery with a subscriber key (every read and write scope) and its API client. */
async function gallery() {
  const g = await tenant(t);
  return { ...g, api: client(t, g.key) };
}

const LIST_FIELDS = ['id', 'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'artist_name', 'image_url', 'image', 'external_id', 'price_display'];
const FULL_FIELDS = [
  ...LIST_FIELDS, 'description', 'external_url', 'source_fingerprint', 'last_synced_at', 'created_at', 'updated_at',
  // docs/api.md, Artworks: the art data galleries keep.
  'height', 'width', 'depth', 'dimension_unit', 'edition_size', 'edition_number', 'artist_proofs', 'image_alt', 'additional_images',
  // docs/api.md, Feeds: the feed whose record it is.
  'feed_id',
];

describe('POST /v1/artworks', () => {
  test('posting a new artwork answers 201 with id, title, source_fingerprint, created true and last_synced_at', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(true);
    expect(Number.isInteger(r.body.id)).toBe(true);
    expect(r.body.id).toBeGreaterThan(0);
    expect(r.body.title).toBe('Abstract Painting');
    expect(r.body.source_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(r.body.last_synced_at).toMatch(ISO_MS);
  });

  test('the fingerprint of Gerhard Richter, Abstract Painting, 1990 is the SHA-256 hex of gerhard-richter|abstract-painting|1990', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 });
    expect(r.status).toBe(201);
    expect(r.body.source_fingerprint).toBe(sha256('gerhard-richter|abstract-painting|1990'));
    const one = await api.get(`/v1/artworks/${r.body.id}`);
    expect(one.body.source_fingerprint).toBe(sha256('gerhard-richter|abstract-painting|1990'));
  });

  test('the fingerprint uses empty parts for a missing artist and a missing year', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { title: 'Untitled Study' });
    expect(r.status).toBe(201);
    expect(r.body.source_fingerprint).toBe(sha256('|untitled-study|'));
  });

  test('re-posting a cosmetically different title of the same artist and year updates the one record and keeps the latest title', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/artworks', { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 });
    const second = await api.post('/v1/artworks', { title: 'abstract painting!', artist_name: 'Gerhard Richter', creation_year: 1990 });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(second.status).toBe(201);
    expect(second.body.created).toBe(false);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.source_fingerprint).toBe(first.body.source_fingerprint);
    expect(second.body.title).toBe('abstract painting!');

    const list = await api.get('/v1/artworks');
    expect(list.body.total).toBe(1);
    expect(list.body.artworks).toHaveLength(1);
    const one = await api.get(`/v1/artworks/${first.body.id}`);
    expect(one.body.title).toBe('abstract painting!');
  });

  test('a re-post merges the fields sent, keeps the fields not sent and does not clear a field sent as null', async () => {
    const { api } = await gallery();
    const base = { title: 'Merge Work', artist_name: 'Merge Artist', creation_year: 2001 };
    const first = await api.post('/v1/artworks', {
      ...base, medium: 'Oil on canvas', dimensions: '100 x 80 cm', price: 1000, currency: 'EUR', availability: 'available',
      description: 'First description', image_url: 'https://img.example/merge.jpg',
    });
    expect(first.status).toBe(201);
    const second = await api.post('/v1/artworks', { ...base, price: 2000, availability: 'reserved', medium: null, description: null });
    expect(second.status).toBe(201);
    expect(second.body.created).toBe(false);

    const one = await api.get(`/v1/artworks/${first.body.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      title: 'Merge Work', artist_name: 'Merge Artist', creation_year: 2001,
      medium: 'Oil on canvas', dimensions: '100 x 80 cm', price: 2000, currency: 'EUR', availability: 'reserved',
      description: 'First description', image_url: 'https://img.example/merge.jpg', external_url: null,
    });
  });

  test('a re-post refreshes last_synced_at even when no field changes', async () => {
    const { api } = await gallery();
    const body = { title: 'Sync Work', artist_name: 'Sync Artist', creation_year: 2010, price: 5 };
    const first = await api.post('/v1/artworks', body);
    const before = await api.get(`/v1/artworks/${first.body.id}`);
    await sleep(15);
    const second = await api.post('/v1/artworks', body);
    expect(second.body.created).toBe(false);
    expect(second.body.last_synced_at).toMatch(ISO_MS);
    expect(Date.parse(second.body.last_synced_at)).toBeGreaterThan(Date.parse(first.body.last_synced_at));
    const one = await api.get(`/v1/artworks/${first.body.id}`);
    expect(one.body.last_synced_at).toBe(second.body.last_synced_at);
    expect(one.body.created_at).toBe(before.body.created_at);
  });

  test('a currency sent in lower case is stored upper-case', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { title: 'Currency Work', price: 10, currency: 'eur' });
    expect(r.status).toBe(201);
    const one = await api.get(`/v1/artworks/${r.body.id}`);
    expect(one.body.currency).toBe('EUR');
    const list = await api.get('/v1/artworks');
    expect(list.body.artworks[0].currency).toBe('EUR');
  });

  test('the title is stored trimmed and other strings are stored as sent', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { title: '   Trimmed Title \t ', medium: '  Ink on paper  ' });
    expect(r.status).toBe(201);
    expect(r.body.title).toBe('Trimmed Title');
    const one = await api.get(`/v1/artworks/${r.body.id}`);
    expect(one.body.title).toBe('Trimmed Title');
    expect(one.body.medium).toBe('  Ink on paper  ');
    expect(r.body.source_fingerprint).toBe(sha256('|trimmed-title|'));
  });

  test('the same fingerprint in two different entities gives two separate artworks', async () => {
    const a = await gallery();
    const b = await gallery();
    const body = { title: 'Shared Work', artist_name: 'Shared Artist', creation_year: 1999 };
    const ra = await a.api.post('/v1/artworks', body);
    const rb = await b.api.post('/v1/artworks', body);
    expect(ra.status).toBe(201);
    expect(rb.status).toBe(201);
    expect(ra.body.created).toBe(true);
    expect(rb.body.created).toBe(true);
    expect(rb.body.id).not.toBe(ra.body.id);
    expect(rb.body.source_fingerprint).toBe(ra.body.source_fingerprint);

    const listA = await a.api.get('/v1/artworks');
    const listB = await b.api.get('/v1/artworks');
    expect(listA.body.artworks.map((w: any) => w.id)).toEqual([ra.body.id]);
    expect(listB.body.artworks.map((w: any) => w.id)).toEqual([rb.body.id]);
    expect((await a.api.get(`/v1/artworks/${rb.body.id}`)).status).toBe(404);
  });

  test('artist_name creates an artist changelog entry with name and slug only the first time the artist is used', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/artworks', { title: 'Dots One', artist_name: 'Yayoi Kusama', creation_year: 1965 });
    expect(first.status).toBe(201);
    const second = await api.post('/v1/artworks', { title: 'Dots Two', artist_name: 'yayoi  KUSAMA', creation_year: 1966 });
    expect(second.status).toBe(201);
    expect(second.body.created).toBe(true);

    const log = await api.get('/v1/changelog');
    expect(log.status).toBe(200);
    const artistEntries = log.body.changes.filter((c: any) => c.entity_type === 'artist');
    expect(artistEntries).toHaveLength(1);
    expect(artistEntries[0].action).toBe('create');
    expect(Number.isInteger(artistEntries[0].entity_id)).toBe(true);
    expect(artistEntries[0].field_changes).toEqual({
      name: { old: null, new: 'Yayoi Kusama' },
      slug: { old: null, new: 'yayoi-kusama' },
    });
    const artworkCreates = log.body.changes.filter((c: any) => c.entity_type === 'artwork' && c.action === 'create');
    expect(artworkCreates.map((c: any) => c.entity_id)).toEqual([first.body.id, second.body.id]);
    // The second artwork keeps the artist_name text it was posted with.
    expect((await api.get(`/v1/artworks/${second.body.id}`)).body.artist_name).toBe('yayoi  KUSAMA');
  });

  test('an artist first used by another entity gets no artist entry in this entity\'s changelog', async () => {
    const a = await gallery();
    const b = await gallery();
    expect((await a.api.post('/v1/artworks', { title: 'Fountain', artist_name: 'Marcel Duchamp' })).status).toBe(201);
    expect((await b.api.post('/v1/artworks', { title: 'Bicycle Wheel', artist_name: 'Marcel Duchamp' })).status).toBe(201);
    const logA = await a.api.get('/v1/changelog');
    const logB = await b.api.get('/v1/changelog');
    expect(logA.body.changes.filter((c: any) => c.entity_type === 'artist')).toHaveLength(1);
    expect(logB.body.changes.filter((c: any) => c.entity_type === 'artist')).toHaveLength(0);
  });
});

describe('GET /v1/artworks (list)', () => {
  let big: Awaited<ReturnType<typeof gallery>>;
  const COUNT = 105;

  beforeAll(async () => {
    big = await gallery();
    for (let i = 1; i <= COUNT; i++) {
      const r = await big.api.post('/v1/artworks', { title: `Work ${i}`, creation_year: 2000 });
      if (r.status !== 201) throw new Error(`seeding failed: ${r.status} ${JSON.stringify(r.body)}`);
    }
  });

  test('without parameters the list returns page 1 with the default limit of 50 and the real total', async () => {
    const r = await big.api.get('/v1/artworks');
    expect(r.status).toBe(200);
    expect(r.body.page).toBe(1);
    expect(r.body.limit).toBe(50);
    expect(r.body.total).toBe(COUNT);
    expect(r.body.artworks).toHaveLength(50);
  });

  test('limit 100 is accepted and returns 100 artworks', async () => {
    const r = await big.api.get('/v1/artworks?limit=100');
    expect(r.status).toBe(200);
    expect(r.body.limit).toBe(100);
    expect(r.body.artworks).toHaveLength(100);
  });

  test.each(['limit=101', 'limit=0', 'limit=-5', 'limit=abc', 'limit=2.5', 'page=0', 'page=-1', 'page=abc'])(
    'the list query %s is refused with 400 bad_request',
    async (query) => {
      const r = await big.api.get(`/v1/artworks?${query}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('bad_request');
      expect(typeof r.body.message).toBe('string');
    },
  );

  test('the list is ordered by id ascending across pages', async () => {
    const p1 = await big.api.get('/v1/artworks?limit=40&page=1');
    const p2 = await big.api.get('/v1/artworks?limit=40&page=2');
    const p3 = await big.api.get('/v1/artworks?limit=40&page=3');
    expect(p3.body.artworks).toHaveLength(COUNT - 80);
    const ids = [...p1.body.artworks, ...p2.body.artworks, ...p3.body.artworks].map((w: any) => w.id);
    expect(ids).toHaveLength(COUNT);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(COUNT);
    expect(p1.body.artworks[0].title).toBe('Work 1');
    expect(p3.body.artworks.at(-1).title).toBe(`Work ${COUNT}`);
  });

  test('a page past the end returns an empty array with the real total', async () => {
    const r = await big.api.get('/v1/artworks?page=4&limit=50');
    expect(r.status).toBe(200);
    expect(r.body.artworks).toEqual([]);
    expect(r.body.total).toBe(COUNT);
    expect(r.body.page).toBe(4);
    expect(r.body.limit).toBe(50);
  });

  test('list elements hold exactly id, title, creation_year, medium, dimensions, price, currency, availability, artist_name, image_url, image and external_id', async () => {
    const { api } = await gallery();
    const full = {
      title: 'Listed Work', artist_name: 'List Artist', creation_year: 1980, medium: 'Bronze', dimensions: '40 cm',
      price: 300, currency: 'usd', availability: 'sold', description: 'Not in the list',
      image_url: 'https://img.example/listed.jpg', external_url: 'https://gallery.example/listed',
    };
    const created = await api.post('/v1/artworks', full);
    const r = await api.get('/v1/artworks');
    expect(r.status).toBe(200);
    expect(r.body.artworks).toHaveLength(1);
    const item = r.body.artworks[0];
    expect(Object.keys(item).sort()).toEqual([...LIST_FIELDS].sort());
    expect(item).toEqual({
      id: created.body.id, title: 'Listed Work', creation_year: 1980, medium: 'Bronze', dimensions: '40 cm', price: 300,
      currency: 'USD', availability: 'sold', artist_name: 'List Artist', image_url: 'https://img.example/listed.jpg', external_id: null,
      price_display: 'shown',
      image: { status: 'pending', width: null, height: null, src: null, srcset: null, error: null, checked_at: null },
    });
  });

  test('the availability filter returns only artworks of that availability, with a matching total', async () => {
    const { api } = await gallery();
    const ids: Record<string, number[]> = { available: [], reserved: [], sold: [] };
    for (const [i, availability] of ['available', 'sold', 'available', 'reserved', 'sold', 'available'].entries()) {
      const r = await api.post('/v1/artworks', { title: `Filter ${i}`, availability });
      ids[availability]!.push(r.body.id);
    }
    await api.post('/v1/artworks', { title: 'No availability' });
    for (const availability of ['available', 'reserved', 'sold']) {
      const r = await api.get(`/v1/artworks?availability=${availability}`);
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(ids[availability]!.length);
      expect(r.body.artworks.map((w: any) => w.id)).toEqual(ids[availability]);
      expect(r.body.artworks.every((w: any) => w.availability === availability)).toBe(true);
    }
    const all = await api.get('/v1/artworks');
    expect(all.body.total).toBe(7);
  });

  test('an unknown availability filter is refused with 400 bad_request', async () => {
    const { api } = await gallery();
    const r = await api.get('/v1/artworks?availability=lost');
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
  });
});

describe('GET /v1/artworks/:id', () => {
  test('one artwork is returned with every field, including created_at and updated_at', async () => {
    const { api } = await gallery();
    const body = {
      title: 'Full Work', artist_name: 'Full Artist', creation_year: 2015, medium: 'Acrylic', dimensions: '50 x 50 cm',
      price: 4200, currency: 'GBP', availability: 'available', description: 'A long description.',
      image_url: 'https://img.example/full.jpg', external_url: 'https://gallery.example/full',
    };
    const created = await api.post('/v1/artworks', body);
    const r = await api.get(`/v1/artworks/${created.body.id}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual([...FULL_FIELDS].sort());
    expect(r.body).toMatchObject({ ...body, id: created.body.id, source_fingerprint: sha256('full-artist|full-work|2015') });
    expect(r.body.last_synced_at).toBe(created.body.last_synced_at);
    expect(r.body.created_at).toMatch(ISO_MS);
    expect(r.body.updated_at).toMatch(ISO_MS);
  });

  test('optional fields never sent are returned as null', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Bare Work' });
    const r = await api.get(`/v1/artworks/${created.body.id}`);
    expect(r.status).toBe(200);
    for (const field of ['creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'description', 'image_url', 'external_url', 'artist_name', 'external_id']) {
      expect(r.body[field], field).toBeNull();
    }
  });

  test.each(['abc', '0', '99999999999', '-1', '1.5', '999999'])('GET /v1/artworks/%s answers 404 not_found', async (id) => {
    const { api } = await gallery();
    const r = await api.get(`/v1/artworks/${id}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
    expect(typeof r.body.message).toBe('string');
  });
});

describe('PUT /v1/artworks/:id', () => {
  test('PUT changes price and availability and answers 200 with the whole artwork', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Put Work', artist_name: 'Put Artist', price: 100, availability: 'available', medium: 'Oil' });
    const r = await api.put(`/v1/artworks/${created.body.id}`, { price: 950, availability: 'reserved' });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual([...FULL_FIELDS].sort());
    expect(r.body).toMatchObject({ id: created.body.id, title: 'Put Work', price: 950, availability: 'reserved', medium: 'Oil', artist_name: 'Put Artist' });
    const one = await api.get(`/v1/artworks/${created.body.id}`);
    expect(one.body).toMatchObject({ price: 950, availability: 'reserved', medium: 'Oil' });
  });

  test('PUT refreshes last_synced_at and updated_at', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Put Sync Work' });
    await sleep(15);
    const r = await api.put(`/v1/artworks/${created.body.id}`, { price: 1 });
    expect(r.status).toBe(200);
    expect(Date.parse(r.body.last_synced_at)).toBeGreaterThan(Date.parse(created.body.last_synced_at));
    expect(Date.parse(r.body.updated_at)).toBeGreaterThan(Date.parse(r.body.created_at));
  });

  test('PUT with null clears optional fields and leaves the others', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', {
      title: 'Clear Work', medium: 'Oil', dimensions: '10 x 10 cm', price: 100, currency: 'EUR', description: 'Desc',
      image_url: 'https://img.example/clear.jpg',
    });
    const r = await api.put(`/v1/artworks/${created.body.id}`, { medium: null, price: null, currency: null, image_url: null });
    expect(r.status).toBe(200);
    const one = await api.get(`/v1/artworks/${created.body.id}`);
    expect(one.body).toMatchObject({
      title: 'Clear Work', medium: null, price: null, currency: null, image_url: null, dimensions: '10 x 10 cm', description: 'Desc',
    });
  });

  test('PUT with title null is refused with 400 and changes nothing', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Keep Title', price: 7 });
    const before = await api.get(`/v1/artworks/${created.body.id}`);
    const r = await api.put(`/v1/artworks/${created.body.id}`, { title: null, price: 8 });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.details.map((d: any) => d.field)).toContain('title');
    const after = await api.get(`/v1/artworks/${created.body.id}`);
    expect(after.body).toEqual(before.body);
  });

  test('PUT that changes the title recomputes the fingerprint', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Old Name', artist_name: 'Renamer', creation_year: 2020 });
    const r = await api.put(`/v1/artworks/${created.body.id}`, { title: 'New Name' });
    expect(r.status).toBe(200);
    expect(r.body.source_fingerprint).toBe(sha256('renamer|new-name|2020'));
    // A POST of the new identity now finds the renamed artwork.
    const again = await api.post('/v1/artworks', { title: 'new name', artist_name: 'Renamer', creation_year: 2020 });
    expect(again.body.created).toBe(false);
    expect(again.body.id).toBe(created.body.id);
  });

  test('PUT whose new title collides with the fingerprint of another artwork answers 409 duplicate with existing_id and changes nothing', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { title: 'First Work', artist_name: 'Same Artist', creation_year: 2005 });
    const b = await api.post('/v1/artworks', { title: 'Second Work', artist_name: 'Same Artist', creation_year: 2005, price: 10 });
    const before = await api.get(`/v1/artworks/${b.body.id}`);
    const logBefore = await api.get('/v1/changelog');
    const r = await api.put(`/v1/artworks/${b.body.id}`, { title: 'first work', price: 20 });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('duplicate');
    expect(r.body.existing_id).toBe(a.body.id);
    expect(typeof r.body.message).toBe('string');
    expect((await api.get(`/v1/artworks/${b.body.id}`)).body).toEqual(before.body);
    expect((await api.get('/v1/changelog')).body.total).toBe(logBefore.body.total);
  });

  test('PUT of an unknown id answers 404 not_found', async () => {
    const { api } = await gallery();
    const r = await api.put('/v1/artworks/999999', { price: 1 });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
  });
});

describe('DELETE /v1/artworks/:id', () => {
  test('DELETE answers 200 {deleted: true, id}, after which the artwork is gone', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Doomed Work' });
    const r = await api.delete(`/v1/artworks/${created.body.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ deleted: true, id: created.body.id });
    const one = await api.get(`/v1/artworks/${created.body.id}`);
    expect(one.status).toBe(404);
    expect(one.body.error).toBe('not_found');
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
    const again = await api.delete(`/v1/artworks/${created.body.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toBe('not_found');
  });

  test('DELETE of another entity\'s artwork answers 404 and leaves it in place', async () => {
    const a = await gallery();
    const b = await gallery();
    const created = await a.api.post('/v1/artworks', { title: 'Not Yours' });
    const r = await b.api.delete(`/v1/artworks/${created.body.id}`);
    expect(r.status).toBe(404);
    expect((await a.api.get(`/v1/artworks/${created.body.id}`)).status).toBe(200);
  });
});
