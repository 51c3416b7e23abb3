import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../src/db/connect.js';
import { migrateToLatest, migrator } from '../src/db/migrate.js';
import { client, DIALECT, freshDatabase, startApp, tenant, type TestApp } from './helpers.js';

/**
 * Artwork pages are ranges of a per-catalog position (1..count in id order) that every write keeps
 * dense; these tests hold the pages to the plain definition: the id-ordered catalog cut into slices.
 */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

async function allPages(api: ReturnType<typeof client>, limit: number) {
  const ids: number[] = [];
  for (let page = 1; ; page++) {
    const r = await api.get(`/v1/artworks?limit=${limit}&page=${page}`);
    expect(r.status).toBe(200);
    ids.push(...r.body.artworks.map((a: { id: number }) => a.id));
    if (r.body.artworks.length < limit) return { ids, total: r.body.total as number, pages: page };
  }
}

describe('artwork pages', () => {
  test('after creates, re-posts, changes and deletions at the start, middle and end, pages are the id-ordered catalog in slices', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const other = client(t, (await tenant(t)).key);
    const created: number[] = [];
    for (let i = 0; i < 23; i++) {
      const r = await api.post('/v1/artworks', { title: `Work ${i}`, creation_year: 2000 + i });
      created.push(r.body.id);
      // Another catalog's writes interleave: positions are per catalog.
      await other.post('/v1/artworks', { title: `Other ${i}` });
    }
    for (const id of [created[0], created[11], created[22]]) expect((await api.delete(`/v1/artworks/${id}`)).status).toBe(200);
    expect((await api.post('/v1/artworks', { title: 'Work 5', creation_year: 2005, price: 10 })).body.created).toBe(false);
    expect((await api.put(`/v1/artworks/${created[7]}`, { title: 'Work 7 renamed' })).status).toBe(200);
    const added = (await api.post('/v1/artworks', { title: 'Late addition' })).body.id as number;

    const expected = [...created.filter((_, i) => ![0, 11, 22].includes(i)), added].sort((a, b) => a - b);
    for (const limit of [1, 4, 7, 50]) {
      const { ids, total } = await allPages(api, limit);
      expect(ids).toEqual(expected);
      expect(total).toBe(expected.length);
    }
    const page2 = await api.get('/v1/artworks?limit=4&page=2');
    expect(page2.body.artworks.map((a: { id: number }) => a.id)).toEqual(expected.slice(4, 8));
    expect(page2.body.artworks[0]).not.toHaveProperty('position');
    expect((await api.get(`/v1/artworks/${expected[0]}`)).body).not.toHaveProperty('position');
    expect((await api.get('/v1/artworks?limit=4&page=1000000')).body.artworks).toEqual([]);
  });

  test('the public profile page lists the same works after a deletion', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await api.post('/v1/artworks', { title: `Shown ${i}` })).body.id);
    await api.delete(`/v1/artworks/${ids[2]}`);
    const page = await t.app.inject({ method: 'GET', url: `/profiles/${g.slug}` });
    expect(page.statusCode).toBe(200);
    for (const i of [0, 1, 3, 4]) expect(page.body).toContain(`Shown ${i}`);
    expect(page.body).not.toContain('Shown 2');
  });

  test('60 concurrent creations in one catalog get 60 distinct places: every page is full and nothing repeats', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => api.post('/v1/artworks', { title: `Rush ${i}` })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    const { ids, total } = await allPages(api, 10);
    expect(total).toBe(60);
    expect(ids).toEqual(results.map((r) => r.body.id as number).sort((a, b) => a - b));
  });
});

describe('migration 004 (artwork positions) over an existing catalog', () => {
  test('works stored before the migration get positions 1..n in id order per catalog, and new works follow them', async () => {
    const fresh = await freshDatabase();
    const handle = connect(fresh.url);
    try {
      const result = await migrator(handle).migrateTo('003_entity_stats');
      expect(result.error).toBeUndefined();
      const db = handle.db as any;
      const at = '2026-01-01T00:00:00.000Z';
      for (const [id, slug] of [[1, 'a'], [2, 'b']] as const) {
        await db.insertInto('entities').values({ id, type: 'gallery', name: slug, slug, created_at: at, updated_at: at }).execute();
        await db.insertInto('entity_stats').values({ entity_id: id, artworks: 0 }).execute();
      }
      // Interleaved ids across the two catalogs, as years of syncing would leave them.
      for (let i = 1; i <= 9; i++) {
        await db.insertInto('artworks').values({
          id: i * 3, entity_id: i % 2 === 0 ? 2 : 1, title: `Old ${i}`, source_fingerprint: `fp${i}`, fingerprint_version: 1,
          last_synced_at: at, created_at: at, updated_at: at,
        }).execute();
      }
      await db.updateTable('entity_stats').set({ artworks: 5 }).where('entity_id', '=', 1).execute();
      await db.updateTable('entity_stats').set({ artworks: 4 }).where('entity_id', '=', 2).execute();

      expect(await migrateToLatest(handle)).toEqual(['004_artwork_positions']);
      const rows = await db.selectFrom('artworks').select(['id', 'entity_id', 'position']).orderBy('id').execute();
      expect(rows.filter((r: any) => r.entity_id === 1).map((r: any) => [r.id, r.position])).toEqual([[3, 1], [9, 2], [15, 3], [21, 4], [27, 5]]);
      expect(rows.filter((r: any) => r.entity_id === 2).map((r: any) => [r.id, r.position])).toEqual([[6, 1], [12, 2], [18, 3], [24, 4]]);
    } finally {
      await handle.close();
      await fresh.drop();
    }
  });
});
