import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** docs/api.md, Artworks: price display, measured dimensions, editions, more views and text alternatives. */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

async function gallery() {
  const g = await tenant(t);
  return { ...g, api: client(t, g.key) };
}

const work = { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 };

/** The 400's `details` name this field. */
function namesField(reply: { status: number; body: { error: string; details?: Array<{ field: string }> } }, field: string) {
  expect(reply.status).toBe(400);
  expect(reply.body.details?.map((d) => d.field).join(' ')).toContain(field);
}

async function lastChange(api: ReturnType<typeof client>, id: number) {
  const page = (await api.get('/v1/changelog?limit=500')).body;
  return page.changes.filter((e: { entity_type: string; entity_id: number }) => e.entity_type === 'artwork' && e.entity_id === id).at(-1).field_changes;
}

describe('price_display', () => {
  test('defaults to shown; the API returns the price whatever the display; PUT null restores shown; the changelog records old and new', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { ...work, price: 1200000, currency: 'EUR' });
    const id = created.body.id;
    expect((await api.get(`/v1/artworks/${id}`)).body).toMatchObject({ price_display: 'shown', price: 1200000 });
    const put = await api.put(`/v1/artworks/${id}`, { price_display: 'on_request' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ price_display: 'on_request', price: 1200000, currency: 'EUR' });
    expect(await lastChange(api, id)).toMatchObject({ price_display: { old: 'shown', new: 'on_request' } });
    const list = (await api.get('/v1/artworks')).body.artworks;
    expect(list[0]).toMatchObject({ id, price_display: 'on_request', price: 1200000 });
    expect((await api.put(`/v1/artworks/${id}`, { price_display: null })).body.price_display).toBe('shown');
  });

  test('an unknown display is a 400 naming price_display and changes nothing', async () => {
    const { api } = await gallery();
    namesField(await api.post('/v1/artworks', { ...work, price_display: 'secret' }), 'price_display');
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
  });
});

describe('measured dimensions', () => {
  test('read from the dimensions text when no measured value is sent', async () => {
    const { api } = await gallery();
    const id = (await api.post('/v1/artworks', { ...work, dimensions: 'Oil on canvas (78 ¾ × 63 in)' })).body.id;
    expect((await api.get(`/v1/artworks/${id}`)).body).toMatchObject({
      dimensions: 'Oil on canvas (78 ¾ × 63 in)', height: 78.75, width: 63, depth: null, dimension_unit: 'in',
    });
    // A new text the reader cannot read plainly leaves them null, never the old text's values.
    const put = await api.put(`/v1/artworks/${id}`, { dimensions: 'variable dimensions' });
    expect(put.body).toMatchObject({ height: null, width: null, depth: null, dimension_unit: null });
    expect(await lastChange(api, id)).toMatchObject({ height: { old: 78.75, new: null }, dimension_unit: { old: 'in', new: null } });
  });

  test('measured values sent win over the text; 2 decimals at most; a unit is required with them', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { ...work, dimensions: 'about two metres', height: 200.5, width: 160, depth: 4.25, dimension_unit: 'cm' });
    expect((await api.get(`/v1/artworks/${r.body.id}`)).body).toMatchObject({ height: 200.5, width: 160, depth: 4.25, dimension_unit: 'cm' });
    namesField(await api.post('/v1/artworks', { ...work, title: 'B', height: 20.123, width: 10, dimension_unit: 'cm' }), 'height');
    namesField(await api.post('/v1/artworks', { ...work, title: 'C', height: 0, width: 10, dimension_unit: 'cm' }), 'height');
    namesField(await api.post('/v1/artworks', { ...work, title: 'D', height: 20, width: 10 }), 'dimension_unit');
    namesField(await api.post('/v1/artworks', { ...work, title: 'E', height: 20, width: 10, dimension_unit: 'ft' }), 'dimension_unit');
    // A PUT that would leave measures without a unit.
    namesField(await api.put(`/v1/artworks/${r.body.id}`, { dimension_unit: null }), 'dimension_unit');
  });

  test('re-posting the same text and values is unchanged', async () => {
    const { api } = await gallery();
    const item = { ...work, dimensions: '30,5 x 20 cm', external_id: 'D-1' };
    expect((await api.post('/v1/artworks/batch', { items: [item] })).body.results[0]).toMatchObject({ created: true });
    expect((await api.post('/v1/artworks/batch', { items: [item] })).body.results[0]).toMatchObject({ created: false, changed: false });
  });
});

describe('editions', () => {
  test('3/50 (+5 AP) is kept; two numbers of one edition share the fingerprint and are told apart by external_id', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { ...work, external_id: 'ED-3', edition_size: 50, edition_number: 3, artist_proofs: 5 });
    const b = await api.post('/v1/artworks', { ...work, external_id: 'ED-7', edition_size: 50, edition_number: 7, artist_proofs: 5 });
    expect(b.body.id).not.toBe(a.body.id);
    expect(b.body.source_fingerprint).toBe(a.body.source_fingerprint);
    expect((await api.get(`/v1/artworks/${a.body.id}`)).body).toMatchObject({ edition_size: 50, edition_number: 3, artist_proofs: 5 });
    const put = await api.put(`/v1/artworks/${a.body.id}`, { edition_number: 4 });
    expect(put.body.source_fingerprint).toBe(a.body.source_fingerprint);
    expect(await lastChange(api, a.body.id)).toMatchObject({ edition_number: { old: 3, new: 4 } });
  });

  test('a number above the size, a number without a size, a size of 0 and negative proofs are 400s naming the field', async () => {
    const { api } = await gallery();
    namesField(await api.post('/v1/artworks', { ...work, edition_size: 50, edition_number: 51 }), 'edition_number');
    namesField(await api.post('/v1/artworks', { ...work, edition_number: 3 }), 'edition_size');
    namesField(await api.post('/v1/artworks', { ...work, edition_size: 0 }), 'edition_size');
    namesField(await api.post('/v1/artworks', { ...work, edition_size: 5, artist_proofs: -1 }), 'artist_proofs');
    const id = (await api.post('/v1/artworks', { ...work, edition_size: 50, edition_number: 3 })).body.id;
    namesField(await api.put(`/v1/artworks/${id}`, { edition_size: 2 }), 'edition_number');
    expect((await api.get(`/v1/artworks/${id}`)).body).toMatchObject({ edition_size: 50, edition_number: 3 });
  });
});

describe('additional_images and image_alt', () => {
  const views = [
    { url: 'https://gallery.example/img/detail.jpg', caption: 'Detail, lower left', alt: 'Close-up of scraped paint', role: 'detail' },
    { url: 'https://gallery.example/img/verso.jpg', role: 'verso' },
  ];

  test('GET returns each view in order with its image state; the URLs are queued; the changelog records the arrays', async () => {
    const { api } = await gallery();
    const id = (await api.post('/v1/artworks', { ...work, image_url: 'https://gallery.example/img/front.jpg', image_alt: 'A grey and red abstract', additional_images: views })).body.id;
    const got = (await api.get(`/v1/artworks/${id}`)).body;
    expect(got.image_alt).toBe('A grey and red abstract');
    expect(got.additional_images).toEqual([
      { ...views[0], image: expect.objectContaining({ status: 'pending' }) },
      { url: views[1]!.url, caption: null, alt: null, role: 'verso', image: expect.objectContaining({ status: 'pending' }) },
    ]);
    const queued = await t.handle.db.selectFrom('images').select('url').where('url', 'in', views.map((v) => v.url)).execute();
    expect(queued).toHaveLength(2);
    // The views count among the catalog's images, as the main image does.
    expect((await api.get('/v1/sync/status')).body.images).toEqual({ pending: 3, ready: 0, failed: 0 });
    expect(await lastChange(api, id)).toMatchObject({ additional_images: { old: [], new: [expect.objectContaining({ url: views[0]!.url }), expect.objectContaining({ url: views[1]!.url })] } });

    // A GET body sent back (with each view's `image`) is accepted and changes nothing.
    const back = await api.put(`/v1/artworks/${id}`, { additional_images: got.additional_images });
    expect(back.status).toBe(200);
    const removed = await api.put(`/v1/artworks/${id}`, { additional_images: [views[1]] });
    expect(removed.body.additional_images.map((v: { url: string }) => v.url)).toEqual([views[1]!.url]);
    // The view no record uses any more is released; the one still used stays queued.
    const left = await t.handle.db.selectFrom('images').select('url').where('url', 'in', views.map((v) => v.url)).execute();
    expect(left.map((row) => row.url)).toEqual([views[1]!.url]);
    expect((await api.put(`/v1/artworks/${id}`, { additional_images: null })).body.additional_images).toEqual([]);
    expect(await t.handle.db.selectFrom('artwork_views').selectAll().where('artwork_id', '=', id).execute()).toEqual([]);
  });

  test('more than 20 views, an unknown role, a view without url and an alt over 500 characters are 400s naming the field', async () => {
    const { api } = await gallery();
    const many = Array.from({ length: 21 }, (_, i) => ({ url: `https://gallery.example/img/${i}.jpg` }));
    namesField(await api.post('/v1/artworks', { ...work, additional_images: many }), 'additional_images');
    namesField(await api.post('/v1/artworks', { ...work, additional_images: [{ url: 'https://gallery.example/a.jpg', role: 'back' }] }), 'additional_images');
    namesField(await api.post('/v1/artworks', { ...work, additional_images: [{ caption: 'no url' }] }), 'additional_images');
    namesField(await api.post('/v1/artworks', { ...work, image_alt: 'x'.repeat(501) }), 'image_alt');
    expect((await api.post('/v1/artworks', { ...work, image_alt: 'x'.repeat(500), additional_images: many.slice(0, 20) })).status).toBe(201);
  });

  test('a deleted artwork keeps its views in the trash; removed for good, they are released', async () => {
    const { api } = await gallery();
    const url = 'https://gallery.example/img/only-here.jpg';
    const id = (await api.post('/v1/artworks', { ...work, additional_images: [{ url }] })).body.id;
    expect((await api.delete(`/v1/artworks/${id}`)).status).toBe(200);
    expect(await t.handle.db.selectFrom('images').select('url').where('url', '=', url).execute()).toEqual([{ url }]);
    expect((await api.post(`/v1/artworks/${id}/restore`, {})).body.additional_images).toEqual([expect.objectContaining({ url })]);
    expect((await api.delete(`/v1/artworks/${id}`)).status).toBe(200);
    expect((await api.delete(`/v1/trash/artworks/${id}`)).status).toBe(204);
    expect(await t.handle.db.selectFrom('images').select('url').where('url', '=', url).execute()).toEqual([]);
    expect(await t.handle.db.selectFrom('artwork_views').selectAll().where('artwork_id', '=', id).execute()).toEqual([]);
  });
});
