import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Lets the clock move on, so that two writes never share a millisecond timestamp. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

interface Change {
  id: number;
  entity_type: string;
  entity_id: number;
  action: string;
  source: string;
  field_changes: Record<string, { old: unknown; new: unknown }>;
  created_at: string;
}

async function fresh(options: Parameters<typeof tenant>[1] = {}) {
  const g = await tenant(t, options);
  const api = client(t, g.key);
  const changes = async (query = ''): Promise<Change[]> => {
    const r = await api.get(`/v1/changelog${query}`);
    expect(r.status).toBe(200);
    return r.body.changes as Change[];
  };
  return { g, api, changes };
}

describe('changelog entries for writes', () => {
  test('an artwork creation records the artist creation and the artwork creation with old: null', async () => {
    const { g, api, changes } = await fresh();
    const r = await api.post('/v1/artworks', {
      title: 'Changelog Painting', artist_name: 'Changelog Artist', creation_year: 1990, price: 100, currency: 'eur',
    });
    expect(r.status).toBe(201);
    const all = await changes();
    expect(all).toHaveLength(2);

    const [artist, artwork] = all as [Change, Change];
    expect(artist.entity_type).toBe('artist');
    expect(artist.action).toBe('create');
    expect(artist.field_changes).toEqual({
      name: { old: null, new: 'Changelog Artist' },
      slug: { old: null, new: 'changelog-artist' },
    });

    expect(artwork.entity_type).toBe('artwork');
    expect(artwork.entity_id).toBe(r.body.id);
    expect(artwork.action).toBe('create');
    expect(artwork.source).toBe(`api:${g.prefix}`);
    expect(artwork.created_at).toMatch(ISO_MS);
    const fc = artwork.field_changes;
    expect(fc.title).toEqual({ old: null, new: 'Changelog Painting' });
    expect(fc.artist_name).toEqual({ old: null, new: 'Changelog Artist' });
    expect(fc.creation_year).toEqual({ old: null, new: 1990 });
    expect(fc.price).toEqual({ old: null, new: 100 });
    expect(fc.currency).toEqual({ old: null, new: 'EUR' });
    expect(fc.last_synced_at).toEqual({ old: null, new: r.body.last_synced_at });
    for (const [field, change] of Object.entries(fc)) expect(change.old, field).toBeNull();
    // Fields that were not sent did not change (null to null) and are not listed.
    for (const field of ['medium', 'dimensions', 'availability', 'description', 'image_url', 'external_url']) {
      expect(fc, field).not.toHaveProperty(field);
    }
  });

  test('linking an existing artist records no second artist creation', async () => {
    const { changes, api } = await fresh();
    await api.post('/v1/artworks', { title: 'First', artist_name: 'Shared Artist' });
    await api.post('/v1/artworks', { title: 'Second', artist_name: 'shared  artist' });
    const all = await changes();
    expect(all.filter((c) => c.entity_type === 'artist')).toHaveLength(1);
    expect(all.filter((c) => c.entity_type === 'artwork' && c.action === 'create')).toHaveLength(2);
  });

  test('the source is api: followed by the 16-character prefix of the key that wrote', async () => {
    const { g, api, changes } = await fresh();
    const second = await keyFor(t, g.entityId);
    await api.post('/v1/artworks', { title: 'By first key' });
    await client(t, second.key).post('/v1/artworks', { title: 'By second key' });
    const all = await changes();
    expect(all.map((c) => c.source)).toEqual([`api:${g.prefix}`, `api:${second.prefix}`]);
    for (const change of all) {
      expect(change.source).toMatch(/^api:ak_live_[A-Za-z0-9]{8}$/);
      expect(change.source.slice(4)).toHaveLength(16);
    }
    expect(g.prefix).toBe(g.key.slice(0, 16));
    expect(JSON.stringify(all)).not.toContain(g.key);
  });

  test('an artwork PUT records only the changed fields with old and new', async () => {
    const { api, changes } = await fresh();
    const created = await api.post('/v1/artworks', { title: 'Put Me', price: 100, availability: 'available', medium: 'Oil' });
    await tick();
    const r = await api.put(`/v1/artworks/${created.body.id}`, { price: 200, availability: 'available', medium: 'Oil' });
    expect(r.status).toBe(200);
    const last = (await changes()).at(-1)!;
    expect(last.entity_type).toBe('artwork');
    expect(last.entity_id).toBe(created.body.id);
    expect(last.action).toBe('update');
    expect(Object.keys(last.field_changes).sort()).toEqual(['last_synced_at', 'price']);
    expect(last.field_changes.price).toEqual({ old: 100, new: 200 });
    expect(last.field_changes.last_synced_at).toEqual({ old: created.body.last_synced_at, new: r.body.last_synced_at });
  });

  test('clearing an artwork field with PUT null records new: null', async () => {
    const { api, changes } = await fresh();
    const created = await api.post('/v1/artworks', { title: 'Clear Me', price: 100 });
    await tick();
    await api.put(`/v1/artworks/${created.body.id}`, { price: null });
    const last = (await changes()).at(-1)!;
    expect(last.field_changes.price).toEqual({ old: 100, new: null });
  });

  test('an unchanged re-post still gets an update entry whose field_changes holds only last_synced_at', async () => {
    const { api, changes } = await fresh();
    const body = { title: 'Repost', artist_name: 'Repost Artist', creation_year: 2001, price: 10 };
    const first = await api.post('/v1/artworks', body);
    await tick();
    const second = await api.post('/v1/artworks', body);
    expect(second.status).toBe(201);
    expect(second.body.created).toBe(false);
    expect(second.body.id).toBe(first.body.id);
    const all = await changes();
    expect(all).toHaveLength(3); // artist create, artwork create, artwork update
    const last = all.at(-1)!;
    expect(last.entity_type).toBe('artwork');
    expect(last.action).toBe('update');
    expect(last.field_changes).toEqual({
      last_synced_at: { old: first.body.last_synced_at, new: second.body.last_synced_at },
    });
  });

  test('a re-post that changes a field records that field and last_synced_at', async () => {
    const { api, changes } = await fresh();
    await api.post('/v1/artworks', { title: 'Merge', price: 10 });
    await tick();
    await api.post('/v1/artworks', { title: 'Merge', price: 20, medium: null });
    const last = (await changes()).at(-1)!;
    expect(Object.keys(last.field_changes).sort()).toEqual(['last_synced_at', 'price']);
    expect(last.field_changes.price).toEqual({ old: 10, new: 20 });
  });

  test('an artwork deletion records action delete with new: null for every field', async () => {
    const { api, changes } = await fresh();
    const created = await api.post('/v1/artworks', { title: 'Delete Me', price: 300, medium: 'Bronze' });
    const r = await api.delete(`/v1/artworks/${created.body.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ deleted: true, id: created.body.id });
    const last = (await changes()).at(-1)!;
    expect(last.entity_type).toBe('artwork');
    expect(last.entity_id).toBe(created.body.id);
    expect(last.action).toBe('delete');
    expect(last.field_changes.title).toEqual({ old: 'Delete Me', new: null });
    expect(last.field_changes.price).toEqual({ old: 300, new: null });
    expect(last.field_changes.medium).toEqual({ old: 'Bronze', new: null });
    expect(Object.keys(last.field_changes).length).toBeGreaterThanOrEqual(3);
    for (const [field, change] of Object.entries(last.field_changes)) expect(change.new, field).toBeNull();
  });

  test('event creation, update by re-post and deletion are each recorded', async () => {
    const { g, api, changes } = await fresh();
    const created = await api.post('/v1/events', { title: 'Summer Show', event_type: 'exhibition', start_date: '2030-06-01' });
    expect(created.status).toBe(201);
    await tick();
    const updated = await api.post('/v1/events', { title: 'Summer Show', description: 'Now with a text' });
    expect(updated.status).toBe(201);
    expect(updated.body.created).toBe(false);
    const deleted = await api.delete(`/v1/events/${created.body.id}`);
    expect(deleted.status).toBe(200);

    const all = await changes();
    expect(all).toHaveLength(3);
    const [create, update, remove] = all as [Change, Change, Change];
    for (const change of all) {
      expect(change.entity_type).toBe('event');
      expect(change.entity_id).toBe(created.body.id);
      expect(change.source).toBe(`api:${g.prefix}`);
    }
    expect(create.action).toBe('create');
    expect(create.field_changes.title).toEqual({ old: null, new: 'Summer Show' });
    expect(create.field_changes.event_type).toEqual({ old: null, new: 'exhibition' });
    expect(create.field_changes.start_date).toEqual({ old: null, new: '2030-06-01' });
    expect(create.field_changes).not.toHaveProperty('description');
    for (const change of Object.values(create.field_changes)) expect(change.old).toBeNull();

    expect(update.action).toBe('update');
    expect(Object.keys(update.field_changes).sort()).toEqual(['description', 'last_synced_at']);
    expect(update.field_changes.description).toEqual({ old: null, new: 'Now with a text' });

    expect(remove.action).toBe('delete');
    expect(remove.field_changes.title).toEqual({ old: 'Summer Show', new: null });
    expect(remove.field_changes.description).toEqual({ old: 'Now with a text', new: null });
    for (const change of Object.values(remove.field_changes)) expect(change.new).toBeNull();
  });

  test('a profile update is recorded as entity_type profile', async () => {
    const { g, api, changes } = await fresh();
    await api.put('/v1/profile', { description: 'Profile text' });
    const all = await changes();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({
      entity_type: 'profile', entity_id: g.entityId, action: 'update', source: `api:${g.prefix}`,
      field_changes: { description: { old: null, new: 'Profile text' } },
    });
  });

  test('a successful write that changes nothing still gets its entry, with {}', async () => {
    const { api, changes } = await fresh();
    await api.put('/v1/profile', { description: 'Same' });
    await api.put('/v1/profile', { description: 'Same' });
    const all = await changes();
    expect(all).toHaveLength(2);
    expect(all[1]!.field_changes).toEqual({});
  });

  test('refused writes (400, 404, 409) record nothing', async () => {
    const { api, changes } = await fresh();
    const a = await api.post('/v1/artworks', { title: 'Original', artist_name: 'Refusal Artist', creation_year: 2000 });
    const b = await api.post('/v1/artworks', { title: 'Other', artist_name: 'Refusal Artist', creation_year: 2000 });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    const ev = await api.post('/v1/events', { title: 'Kept Event', start_date: '2030-01-10' });
    expect(ev.status).toBe(201);
    const before = await changes();

    const refused: [string, number, () => Promise<{ status: number }>][] = [
      ['POST artwork without title', 400, () => api.post('/v1/artworks', { price: 1, artist_name: 'Never Created Artist' })],
      ['POST artwork with a string year', 400, () => api.post('/v1/artworks', { title: 'X', creation_year: '1990', artist_name: 'Never Created Artist' })],
      ['POST artwork with unknown field', 400, () => api.post('/v1/artworks', { title: 'X', colour: 'red' })],
      ['POST artwork with invalid JSON', 400, () => api.post('/v1/artworks', '{oops')],
      ['PUT unknown artwork', 404, () => api.put('/v1/artworks/999999', { price: 1 })],
      ['DELETE unknown artwork', 404, () => api.delete('/v1/artworks/999999')],
      ['PUT to a duplicate fingerprint', 409, () => api.put(`/v1/artworks/${b.body.id}`, { title: 'Original', price: 5 })],
      ['PUT artwork with a bad URL', 400, () => api.put(`/v1/artworks/${b.body.id}`, { image_url: 'javascript:alert(1)' })],
      ['POST event ending before it starts', 400, () => api.post('/v1/events', { title: 'Backwards', start_date: '2030-02-02', end_date: '2030-02-01' })],
      ['POST event re-post ending before its start', 400, () => api.post('/v1/events', { title: 'Kept Event', end_date: '2030-01-01' })],
      ['DELETE unknown event', 404, () => api.delete('/v1/events/999999')],
      ['PUT profile with a bad URL', 400, () => api.put('/v1/profile', { external_url: 'nope', description: 'x' })],
    ];
    for (const [name, status, send] of refused) expect((await send()).status, name).toBe(status);

    expect(await changes()).toEqual(before);
    const artwork = (await api.get(`/v1/artworks/${b.body.id}`)).body;
    expect(artwork.title).toBe('Other');
    expect(artwork.price).toBeNull();
  });

  test('a 409 duplicate answer names the existing artwork', async () => {
    const { api } = await fresh();
    const a = await api.post('/v1/artworks', { title: 'Dup A', creation_year: 1999 });
    const b = await api.post('/v1/artworks', { title: 'Dup B', creation_year: 1999 });
    const r = await api.put(`/v1/artworks/${b.body.id}`, { title: 'dup a' });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('duplicate');
    expect(r.body.existing_id).toBe(a.body.id);
  });
});

describe('changelog listing', () => {
  test('entries are ordered by id ascending', async () => {
    const { api, changes } = await fresh();
    await api.post('/v1/artworks', { title: 'One', artist_name: 'Order Artist' });
    await api.post('/v1/events', { title: 'Two' });
    await api.put('/v1/profile', { description: 'Three' });
    await api.post('/v1/artworks', { title: 'Four' });
    const all = await changes();
    expect(all.map((c) => c.entity_type)).toEqual(['artist', 'artwork', 'event', 'profile', 'artwork']);
    const ids = all.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('pagination: default limit 100, further pages, limit up to 1000, and 400 beyond', async () => {
    const { api } = await fresh({ tier: 'partner' });
    for (let i = 1; i <= 101; i++) expect((await api.post('/v1/artworks', { title: `Bulk ${i}` })).status).toBe(201);

    const first = await api.get('/v1/changelog');
    expect(first.status).toBe(200);
    expect(first.body.page).toBe(1);
    expect(first.body.limit).toBe(100);
    expect(first.body.total).toBe(101);
    expect(first.body.changes).toHaveLength(100);

    const second = await api.get('/v1/changelog?page=2');
    expect(second.body.page).toBe(2);
    expect(second.body.changes).toHaveLength(1);
    expect(second.body.changes[0].id).toBeGreaterThan(first.body.changes[99].id);
    expect(second.body.changes[0].field_changes.title.new).toBe('Bulk 101');

    const small = await api.get('/v1/changelog?limit=10&page=3');
    expect(small.body.limit).toBe(10);
    expect(small.body.page).toBe(3);
    expect(small.body.changes.map((c: Change) => c.id)).toEqual(first.body.changes.slice(20, 30).map((c: Change) => c.id));

    const max = await api.get('/v1/changelog?limit=1000');
    expect(max.status).toBe(200);
    expect(max.body.limit).toBe(1000);
    expect(max.body.changes).toHaveLength(101);

    const past = await api.get('/v1/changelog?page=50');
    expect(past.status).toBe(200);
    expect(past.body.changes).toEqual([]);
    expect(past.body.total).toBe(101);

    for (const query of ['limit=1001', 'limit=0', 'limit=-1', 'limit=abc', 'limit=1.5', 'page=0', 'page=-2', 'page=x']) {
      const r = await api.get(`/v1/changelog?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.error, query).toBe('bad_request');
    }
  });

  test('since is exclusive: only entries created after the given time are returned', async () => {
    const { api, changes } = await fresh();
    await api.post('/v1/artworks', { title: 'Before' });
    await tick();
    await api.post('/v1/artworks', { title: 'Pivot' });
    await tick();
    await api.post('/v1/artworks', { title: 'After 1' });
    await tick();
    await api.post('/v1/events', { title: 'After 2' });
    const all = await changes();
    expect(all).toHaveLength(4);
    const pivot = all[1]!;

    const since = await api.get(`/v1/changelog?since=${encodeURIComponent(pivot.created_at)}`);
    expect(since.status).toBe(200);
    const titles = (since.body.changes as Change[]).map((c) => c.field_changes.title?.new);
    expect(titles).toEqual(['After 1', 'After 2']);
    expect(since.body.total).toBe(2);
    expect((since.body.changes as Change[]).map((c) => c.id)).not.toContain(pivot.id);

    // One millisecond earlier includes the pivot entry.
    const earlier = new Date(Date.parse(pivot.created_at) - 1).toISOString();
    const withPivot = await api.get(`/v1/changelog?since=${encodeURIComponent(earlier)}`);
    expect((withPivot.body.changes as Change[]).map((c) => c.id)).toEqual(all.slice(1).map((c) => c.id));

    // The same instant written with an offset selects the same entries.
    const pivotMs = Date.parse(pivot.created_at);
    const local = new Date(pivotMs + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    const offset = await api.get(`/v1/changelog?since=${encodeURIComponent(local)}`);
    expect(offset.status).toBe(200);
    expect(offset.body.total).toBe(2);

    const last = all.at(-1)!;
    const none = await api.get(`/v1/changelog?since=${encodeURIComponent(last.created_at)}`);
    expect(none.body.changes).toEqual([]);
    expect(none.body.total).toBe(0);
  });

  test('an invalid since gets 400', async () => {
    const { api } = await fresh();
    for (const since of ['yesterday', '2026-13-01T00:00:00Z', '2026-02-30', '12345', 'now']) {
      const r = await api.get(`/v1/changelog?since=${encodeURIComponent(since)}`);
      expect(r.status, since).toBe(400);
      expect(r.body.error, since).toBe('bad_request');
    }
  });
});

describe('sync status', () => {
  test('before any write every count is 0 and every last_synced is null', async () => {
    const { api } = await fresh();
    const r = await api.get('/v1/sync/status');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      artworks: { last_synced: null, count: 0 },
      artists: { last_synced: null, count: 0 },
      events: { last_synced: null, count: 0 },
      images: { pending: 0, ready: 0, failed: 0 },
    });
  });

  test('counts and last_synced follow the writes, and counts drop after deletes', async () => {
    const { api } = await fresh();
    const w1 = await api.post('/v1/artworks', { title: 'S1', artist_name: 'Sync Artist One' });
    const w2 = await api.post('/v1/artworks', { title: 'S2', artist_name: 'sync artist one' });
    const w3 = await api.post('/v1/artworks', { title: 'S3', artist_name: 'Sync Artist Two' });
    await api.post('/v1/artworks', { title: 'S4' });
    let status = (await api.get('/v1/sync/status')).body;
    expect(status.artworks.count).toBe(4);
    expect(status.artworks.last_synced).toMatch(ISO_MS);
    expect(status.artists.count).toBe(2);
    expect(status.artists.last_synced).toMatch(ISO_MS);
    expect(status.events).toEqual({ last_synced: null, count: 0 });

    // A re-post is a write but not a new record.
    await tick();
    const repost = await api.post('/v1/artworks', { title: 'S4' });
    status = (await api.get('/v1/sync/status')).body;
    expect(status.artworks.count).toBe(4);
    expect(status.artworks.last_synced).toBe(repost.body.last_synced_at);

    const e1 = await api.post('/v1/events', { title: 'Sync Event 1' });
    await api.post('/v1/events', { title: 'Sync Event 2' });
    status = (await api.get('/v1/sync/status')).body;
    expect(status.events.count).toBe(2);
    expect(status.events.last_synced).toMatch(ISO_MS);

    // Deleting both artworks of artist one leaves one distinct artist.
    expect((await api.delete(`/v1/artworks/${w1.body.id}`)).status).toBe(200);
    expect((await api.delete(`/v1/artworks/${w2.body.id}`)).status).toBe(200);
    expect((await api.delete(`/v1/events/${e1.body.id}`)).status).toBe(200);
    status = (await api.get('/v1/sync/status')).body;
    expect(status.artworks.count).toBe(2);
    expect(status.artists.count).toBe(1);
    expect(status.events.count).toBe(1);

    // Unlinking the last artist drops the artist count to 0.
    expect((await api.put(`/v1/artworks/${w3.body.id}`, { artist_name: null })).status).toBe(200);
    expect((await api.get('/v1/sync/status')).body.artists.count).toBe(0);
  });

  test('artists linked only by another entity are not counted', async () => {
    const a = await fresh();
    const b = await fresh();
    await a.api.post('/v1/artworks', { title: 'A work', artist_name: 'Foreign Artist' });
    await a.api.post('/v1/artworks', { title: 'A work 2', artist_name: 'Another Foreign Artist' });
    await b.api.post('/v1/artworks', { title: 'B work', artist_name: 'Foreign Artist' });
    expect((await a.api.get('/v1/sync/status')).body.artists.count).toBe(2);
    const statusB = (await b.api.get('/v1/sync/status')).body;
    expect(statusB.artists.count).toBe(1);
    expect(statusB.artworks.count).toBe(1);
    // Linking an artist another entity created records no artist entry in B's changelog.
    const changesB = (await b.api.get('/v1/changelog')).body.changes as Change[];
    expect(changesB.map((c) => c.entity_type)).toEqual(['artwork']);
  });

  test('last_synced for artworks is the time of the latest artwork write', async () => {
    const { api } = await fresh();
    await api.post('/v1/artworks', { title: 'T1' });
    await tick();
    const latest = await api.post('/v1/artworks', { title: 'T2' });
    await tick();
    await api.put('/v1/profile', { description: 'not an artwork write' });
    const status = (await api.get('/v1/sync/status')).body;
    expect(status.artworks.last_synced).toBe(latest.body.last_synced_at);
    expect(status.events.last_synced).toBeNull();
  });
});
