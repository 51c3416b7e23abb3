import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';
import { purgeTrash } from '../../src/store/trash.js';

// The trash (docs/api.md, Trash): every delete moves the record there; restore brings it back with its id.

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

const DAY_MS = 86_400_000;

async function gallery() {
  const g = await tenant(t);
  return { g, api: client(t, g.key) };
}

describe('a deleted artwork goes to the trash', () => {
  test('it is gone from GET, PUT, DELETE, the list, the count and the sync status, and listed in the trash', async () => {
    const { g, api } = await gallery();
    const kept = await api.post('/v1/artworks', { title: 'Kept', artist_name: 'Ada Blue', creation_year: 2001 });
    const gone = await api.post('/v1/artworks', { title: 'Gone', artist_name: 'Ada Blue', creation_year: 2002, external_id: 'INV-7' });
    expect((await api.delete(`/v1/artworks/${gone.body.id}`)).status).toBe(200);

    expect((await api.get(`/v1/artworks/${gone.body.id}`)).status).toBe(404);
    expect((await api.put(`/v1/artworks/${gone.body.id}`, { title: 'Back?' })).status).toBe(404);
    expect((await api.delete(`/v1/artworks/${gone.body.id}`)).status).toBe(404);
    const list = await api.get('/v1/artworks');
    expect(list.body.artworks.map((a: { id: number }) => a.id)).toEqual([kept.body.id]);
    expect(list.body.total).toBe(1);
    expect((await api.get('/v1/sync/status')).body.artworks.count).toBe(1);

    const trash = await api.get('/v1/trash');
    expect(trash.status).toBe(200);
    expect(trash.body.has_more).toBe(false);
    expect(trash.body.next_after).toBeNull();
    expect(trash.body.items).toEqual([{
      kind: 'artworks', id: gone.body.id, title: 'Gone', artist_name: 'Ada Blue',
      deleted_at: expect.any(String), deleted_by: `api:${g.prefix}`, purge_at: expect.any(String),
    }]);
    const [item] = trash.body.items;
    expect(Date.parse(item.purge_at) - Date.parse(item.deleted_at)).toBe(30 * DAY_MS);
  });

  test('its identity is free: a POST of the same work creates a new record, and then a restore is 409 with nothing restored', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/artworks', { title: 'Twice', artist_name: 'Ben Gray', creation_year: 1999, external_id: 'A-1' });
    await api.delete(`/v1/artworks/${first.body.id}`);
    const again = await api.post('/v1/artworks', { title: 'Twice', artist_name: 'Ben Gray', creation_year: 1999, external_id: 'A-1' });
    expect(again.status).toBe(201);
    expect(again.body.created).toBe(true);
    expect(again.body.id).not.toBe(first.body.id);

    const restore = await api.post(`/v1/artworks/${first.body.id}/restore`, {});
    expect(restore.status).toBe(409);
    expect(restore.body.error).toBe('duplicate');
    expect(restore.body.existing_id).toBe(again.body.id);
    expect((await api.get('/v1/trash')).body.items.map((i: { id: number }) => i.id)).toEqual([first.body.id]);
    expect((await api.get(`/v1/artworks/${first.body.id}`)).status).toBe(404);
    expect((await api.get('/v1/artworks')).body.total).toBe(1);
  });

  test('a batch item of the same work creates a new record rather than matching the trashed one', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/artworks', { title: 'Batch Twin', artist_name: 'Cy Moss', creation_year: 2010 });
    await api.delete(`/v1/artworks/${first.body.id}`);
    const batch = await api.post('/v1/artworks/batch', { items: [{ title: 'Batch Twin', artist_name: 'Cy Moss', creation_year: 2010 }] });
    expect(batch.body.results[0]).toMatchObject({ status: 201, created: true });
    expect(batch.body.results[0].id).not.toBe(first.body.id);
    expect((await api.get('/v1/trash')).body.items.map((i: { id: number }) => i.id)).toEqual([first.body.id]);
  });
});

describe('restore', () => {
  test('brings the artwork back with its id and fields, as a create entry with old null and the restorer\'s source', async () => {
    const { g, api } = await gallery();
    const posted = await api.post('/v1/artworks', {
      title: 'Returning', artist_name: 'Dee Lake', creation_year: 1987, price: 1200, currency: 'EUR', availability: 'available',
      external_id: 'R-9', height: 30, width: 40, dimension_unit: 'cm',
    });
    const before = (await api.get(`/v1/artworks/${posted.body.id}`)).body;
    await api.delete(`/v1/artworks/${posted.body.id}`);
    const { body: { next_after: mark } } = await api.get('/v1/changelog?limit=100');

    const restore = await api.post(`/v1/artworks/${posted.body.id}/restore`, {});
    expect(restore.status).toBe(200);
    const { updated_at, last_synced_at, ...fields } = restore.body;
    const { updated_at: u0, last_synced_at: l0, ...fieldsBefore } = before;
    expect(fields).toEqual(fieldsBefore);
    expect(Date.parse(updated_at)).toBeGreaterThan(Date.parse(u0));
    expect((await api.get(`/v1/artworks/${posted.body.id}`)).body).toEqual(restore.body);
    expect((await api.get('/v1/artworks')).body.total).toBe(1);
    expect((await api.get('/v1/sync/status')).body.artworks.count).toBe(1);
    expect((await api.get('/v1/trash')).body.items).toEqual([]);

    const after = (await api.get(`/v1/changelog?after=${mark}`)).body.changes;
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ entity_type: 'artwork', entity_id: posted.body.id, action: 'create', source: `api:${g.prefix}` });
    expect(after[0].field_changes.title).toEqual({ old: null, new: 'Returning' });
    expect(after[0].field_changes.price).toEqual({ old: null, new: 1200 });
    expect(after[0].field_changes.external_id).toEqual({ old: null, new: 'R-9' });
    expect(after[0].field_changes.depth).toBeUndefined();
    for (const change of Object.values<{ old: unknown }>(after[0].field_changes)) expect(change.old).toBeNull();
  });

  test('a cursor poller of the changelog sees the delete, then the create, and loses nothing', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { title: 'Polled', creation_year: 2020 });
    let after = 0;
    const seen: Array<[string, number]> = [];
    const poll = async () => {
      for (;;) {
        const page = await api.get(`/v1/changelog?after=${after}&limit=2`);
        for (const change of page.body.changes) seen.push([change.action, change.entity_id]);
        if (page.body.next_after !== null) after = page.body.next_after;
        if (!page.body.has_more) return;
      }
    };
    await poll();
    await api.delete(`/v1/artworks/${a.body.id}`);
    await poll();
    await api.post(`/v1/artworks/${a.body.id}/restore`, {});
    await poll();
    expect(seen).toEqual([['create', a.body.id], ['delete', a.body.id], ['create', a.body.id]]);
  });

  test('not in the trash is 404; another entity\'s trashed record is 404; a read-only key is 403', async () => {
    const { api } = await gallery();
    const live = await api.post('/v1/artworks', { title: 'Live', creation_year: 2000 });
    expect((await api.post(`/v1/artworks/${live.body.id}/restore`, {})).status).toBe(404);
    expect((await api.post('/v1/artworks/999999/restore', {})).status).toBe(404);

    const other = await gallery();
    const theirs = await other.api.post('/v1/artworks', { title: 'Theirs', creation_year: 2000 });
    await other.api.delete(`/v1/artworks/${theirs.body.id}`);
    expect((await api.post(`/v1/artworks/${theirs.body.id}/restore`, {})).status).toBe(404);
    expect((await api.delete(`/v1/trash/artworks/${theirs.body.id}`)).status).toBe(404);
    expect((await api.get('/v1/trash')).body.items).toEqual([]);
    expect((await other.api.get('/v1/trash')).body.items).toHaveLength(1);

    const reader = client(t, (await keyFor(t, other.g.entityId, { tier: 'free', scopes: ['artworks:read'] })).key);
    expect((await reader.post(`/v1/artworks/${theirs.body.id}/restore`, {})).status).toBe(403);
    expect((await reader.delete(`/v1/trash/artworks/${theirs.body.id}`)).status).toBe(403);
    expect((await reader.get('/v1/trash?kind=events')).status).toBe(403);
    expect((await reader.get('/v1/trash')).body.items).toHaveLength(1);
    expect((await other.api.get(`/v1/artworks/${theirs.body.id}`)).status).toBe(404);
  });

  test('an event: its slug is free while trashed, and restore brings it back with its id', async () => {
    const { api } = await gallery();
    const e = await api.post('/v1/events', { title: 'Summer Show', start_date: '2026-07-01', location_city: 'Berlin' });
    await api.delete(`/v1/events/${e.body.id}`);
    expect((await api.get(`/v1/events/${e.body.id}`)).status).toBe(404);
    expect((await api.get('/v1/trash?kind=events')).body.items).toEqual([expect.objectContaining({ kind: 'events', id: e.body.id, title: 'Summer Show' })]);
    expect((await api.get('/v1/trash?kind=events')).body.items[0]).not.toHaveProperty('artist_name');

    const twin = await api.post('/v1/events', { title: 'Summer Show' });
    expect(twin.body.created).toBe(true);
    const refused = await api.post(`/v1/events/${e.body.id}/restore`, {});
    expect(refused.status).toBe(409);
    expect(refused.body.existing_id).toBe(twin.body.id);

    await api.delete(`/v1/events/${twin.body.id}`);
    const restored = await api.post(`/v1/events/${e.body.id}/restore`, {});
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ id: e.body.id, title: 'Summer Show', start_date: '2026-07-01', location_city: 'Berlin' });
    expect((await api.get('/v1/events')).body.events.map((x: { id: number }) => x.id)).toEqual([e.body.id]);
  });
});

describe('the trash list', () => {
  test('newest first, a page at a time by the opaque cursor, one kind or every kind', async () => {
    const { api } = await gallery();
    const ids: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const a = await api.post('/v1/artworks', { title: `Paged ${i}`, creation_year: 2000 + i });
      await api.delete(`/v1/artworks/${a.body.id}`);
      ids.push(a.body.id);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const e = await api.post('/v1/events', { title: 'Paged Event' });
    await api.delete(`/v1/events/${e.body.id}`);

    const first = await api.get('/v1/trash?limit=2');
    expect(first.body.items.map((i: { id: number }) => i.id)).toEqual([e.body.id, ids[2]]);
    expect(first.body.has_more).toBe(true);
    const second = await api.get(`/v1/trash?limit=2&after=${first.body.next_after}`);
    expect(second.body.items.map((i: { id: number }) => i.id)).toEqual([ids[1], ids[0]]);
    expect(second.body.has_more).toBe(false);
    expect((await api.get('/v1/trash?kind=artworks')).body.items.map((i: { id: number }) => i.id)).toEqual([ids[2], ids[1], ids[0]]);

    expect((await api.get('/v1/trash?after=not-a-cursor')).status).toBe(400);
    expect((await api.get('/v1/trash?limit=101')).status).toBe(400);
    expect((await api.get('/v1/trash?kind=artists')).status).toBe(400);
  });
});

describe('delete forever and the purge', () => {
  const imageUrl = 'https://images.example/trash-kept.jpg';
  const imageRow = async () => t.handle.db.selectFrom('images').select('url').where('url', '=', imageUrl).executeTakeFirst();

  test('a trashed artwork keeps its image; delete forever removes it and its image, 204', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { title: 'Pictured', creation_year: 2001, image_url: imageUrl });
    await api.delete(`/v1/artworks/${a.body.id}`);
    expect(await imageRow()).toBeDefined();
    const restored = await api.post(`/v1/artworks/${a.body.id}/restore`, {});
    expect(restored.body.image_url).toBe(imageUrl);
    expect(restored.body.image).toMatchObject({ status: 'pending' });
    await api.delete(`/v1/artworks/${a.body.id}`);

    const gone = await api.delete(`/v1/trash/artworks/${a.body.id}`);
    expect(gone.status).toBe(204);
    expect(await imageRow()).toBeUndefined();
    expect((await api.get('/v1/trash')).body.items).toEqual([]);
    expect((await api.post(`/v1/artworks/${a.body.id}/restore`, {})).status).toBe(404);
    expect((await api.delete(`/v1/trash/artworks/${a.body.id}`)).status).toBe(404);
  });

  test('the purge removes records deleted more than TRASH_DAYS ago, writing no changelog entry', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { title: 'Old News', creation_year: 1990 });
    await api.delete(`/v1/artworks/${a.body.id}`);
    const { total } = (await api.get('/v1/changelog')).body;

    expect(await purgeTrash(t.handle.db, Date.now() + 29 * DAY_MS, 30)).toBe(0);
    expect((await api.get('/v1/trash')).body.items).toHaveLength(1);
    expect(await purgeTrash(t.handle.db, Date.now() + 31 * DAY_MS, 30)).toBeGreaterThanOrEqual(1);
    expect((await api.get('/v1/trash')).body.items).toEqual([]);
    expect((await api.post(`/v1/artworks/${a.body.id}/restore`, {})).status).toBe(404);
    expect((await api.get('/v1/changelog')).body.total).toBe(total);
  });
});
