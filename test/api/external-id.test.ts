import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** external_id (docs/api.md, Artworks): the entity's own inventory number tells apart works the fingerprint cannot. */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

async function gallery() {
  const g = await tenant(t);
  return { ...g, api: client(t, g.key) };
}

const print = { title: 'Untitled', artist_name: 'Kiki Smith', creation_year: 2004, medium: 'Etching' };

describe('POST /v1/artworks with external_id', () => {
  test('two editions of one print coexist; re-posting an edition updates it and no other', async () => {
    const { api } = await gallery();
    const e3 = await api.post('/v1/artworks', { ...print, external_id: '3/50', price: 900 });
    const e7 = await api.post('/v1/artworks', { ...print, external_id: '7/50', price: 950 });
    expect(e3.status).toBe(201);
    expect(e7.status).toBe(201);
    expect(e3.body.created).toBe(true);
    expect(e7.body.created).toBe(true);
    expect(e7.body.id).not.toBe(e3.body.id);
    expect(e7.body.source_fingerprint).toBe(e3.body.source_fingerprint);

    const again = await api.post('/v1/artworks', { ...print, external_id: '7/50', availability: 'sold' });
    expect(again.body).toMatchObject({ id: e7.body.id, created: false });
    expect((await api.get(`/v1/artworks/${e7.body.id}`)).body).toMatchObject({ external_id: '7/50', price: 950, availability: 'sold' });
    expect((await api.get(`/v1/artworks/${e3.body.id}`)).body).toMatchObject({ external_id: '3/50', price: 900, availability: null });
    const list = await api.get('/v1/artworks');
    expect(list.body.artworks.map((a: { external_id: string }) => a.external_id)).toEqual(['3/50', '7/50']);
  });

  test('a POST without external_id among editions gets 409 ambiguous naming every candidate, and writes nothing', async () => {
    const { api } = await gallery();
    const ids = [];
    for (const edition of ['1/3', '2/3', '3/3']) ids.push((await api.post('/v1/artworks', { ...print, external_id: edition })).body.id);
    const before = (await api.get('/v1/changelog')).body.total;
    const r = await api.post('/v1/artworks', { ...print, price: 1 });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'ambiguous', candidates: ids });
    expect(r.body.message).toMatch(/external_id/);
    expect((await api.get('/v1/changelog')).body.total).toBe(before);
    expect((await api.get('/v1/artworks')).body.total).toBe(3);
  });

  test('a POST without external_id updates the only artwork with its fingerprint, even one that has an external_id', async () => {
    const { api } = await gallery();
    const numbered = await api.post('/v1/artworks', { ...print, external_id: 'INV-1' });
    const r = await api.post('/v1/artworks', { ...print, title: 'untitled!', price: 10 });
    expect(r.body).toMatchObject({ id: numbered.body.id, created: false });
    expect((await api.get(`/v1/artworks/${numbered.body.id}`)).body).toMatchObject({ external_id: 'INV-1', price: 10, title: 'untitled!' });
  });

  test('an artwork without external_id adopts the first one posted for its fingerprint; another number then makes a new artwork', async () => {
    const { api } = await gallery();
    const plain = await api.post('/v1/artworks', print);
    const adopted = await api.post('/v1/artworks', { ...print, external_id: 'A-1' });
    expect(adopted.body).toMatchObject({ id: plain.body.id, created: false });
    const second = await api.post('/v1/artworks', { ...print, external_id: 'A-2' });
    expect(second.body.created).toBe(true);
    const changes = (await api.get('/v1/changelog')).body.changes;
    const adoption = changes.find((c: { entity_id: number; action: string; field_changes: object }) =>
      c.entity_id === plain.body.id && c.action === 'update');
    expect(adoption.field_changes.external_id).toEqual({ old: null, new: 'A-1' });
  });

  test('a renamed work posted with its external_id is updated, and its fingerprint follows the new title', async () => {
    const { api } = await gallery();
    const original = await api.post('/v1/artworks', { title: 'Study', artist_name: 'Kiki Smith', creation_year: 2004, external_id: 'S-9' });
    const renamed = await api.post('/v1/artworks', { title: 'Study for a Sculpture', artist_name: 'Kiki Smith', creation_year: 2004, external_id: 'S-9' });
    expect(renamed.body).toMatchObject({ id: original.body.id, created: false });
    expect(renamed.body.source_fingerprint).not.toBe(original.body.source_fingerprint);
    expect((await api.get('/v1/artworks')).body.total).toBe(1);
  });

  test('many "Untitled" works of one artist and year coexist by inventory number', async () => {
    const { api } = await gallery();
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => api.post('/v1/artworks', { ...print, external_id: `U-${i}` })));
    expect(results.every((r) => r.status === 201 && r.body.created)).toBe(true);
    expect((await api.get('/v1/artworks')).body.total).toBe(12);
  });

  test('concurrent posts of one new external_id make one artwork', async () => {
    const { api } = await gallery();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => api.post('/v1/artworks', { ...print, external_id: 'RACE-1', price: i })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(results.filter((r) => r.body.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect((await api.get('/v1/artworks')).body.total).toBe(1);
  });

  test.each([
    ['', 'must not be empty'],
    ['x'.repeat(101), 'at most 100'],
    [42, 'string'],
  ])('external_id %j is refused with 400 naming the field', async (value, message) => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { ...print, external_id: value });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([{ field: 'external_id', message: expect.stringContaining(message) }]);
  });
});

describe('PUT /v1/artworks/:id and external_id', () => {
  test('PUT to an external_id another artwork holds gets 409 duplicate with existing_id, and changes nothing', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { ...print, external_id: 'P-1' });
    const b = await api.post('/v1/artworks', { ...print, external_id: 'P-2', price: 5 });
    const r = await api.put(`/v1/artworks/${b.body.id}`, { external_id: 'P-1', price: 6 });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'duplicate', existing_id: a.body.id });
    expect((await api.get(`/v1/artworks/${b.body.id}`)).body).toMatchObject({ external_id: 'P-2', price: 5 });
  });

  test('clearing the external_id of an edition whose fingerprint an unnumbered artwork holds gets 409 duplicate', async () => {
    const { api } = await gallery();
    const plain = await api.post('/v1/artworks', print);
    // The artwork without a number adopts the first one posted for its fingerprint.
    const numbered = await api.post('/v1/artworks', { ...print, external_id: 'N-2' });
    expect(numbered.body.id).toBe(plain.body.id);
    const other = await api.post('/v1/artworks', { ...print, external_id: 'N-3' });
    expect(other.body.created).toBe(true);
    expect((await api.put(`/v1/artworks/${plain.body.id}`, { external_id: null })).status).toBe(200);
    const r = await api.put(`/v1/artworks/${other.body.id}`, { external_id: null });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'duplicate', existing_id: plain.body.id });
  });

  test('PUT sets and clears external_id, and the changelog records both', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { title: 'Solo', creation_year: 2000 });
    expect((await api.put(`/v1/artworks/${a.body.id}`, { external_id: 'SOLO-1' })).body.external_id).toBe('SOLO-1');
    expect((await api.put(`/v1/artworks/${a.body.id}`, { external_id: null })).body.external_id).toBeNull();
    const changes = (await api.get('/v1/changelog')).body.changes.filter((c: { action: string }) => c.action === 'update');
    expect(changes.map((c: { field_changes: { external_id: unknown } }) => c.field_changes.external_id)).toEqual([
      { old: null, new: 'SOLO-1' }, { old: 'SOLO-1', new: null },
    ]);
  });
});

describe('batches and external_id', () => {
  test('a batch of editions writes each, and an item without external_id among them fails alone with 409 ambiguous', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks/batch', {
      items: [
        { ...print, external_id: 'B-1' },
        { ...print, external_id: 'B-2' },
        { ...print },
        { title: 'Something else' },
      ],
    });
    expect(r.status).toBe(200);
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([201, 201, 409, 201]);
    expect(r.body.results[2]).toMatchObject({ index: 2, error: 'ambiguous', candidates: [r.body.results[0].id, r.body.results[1].id] });
    expect((await api.get('/v1/artworks')).body.total).toBe(3);
  });
});
