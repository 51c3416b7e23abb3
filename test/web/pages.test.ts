import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest, migrator } from '../../src/db/migrate.js';
import { client, DIALECT, freshDatabase, startApp, tenant, type TestApp } from '../helpers.js';

/**
 * Artwork pages, by `page` or by `after`, held to the plain definition: the id-ordered catalog cut into
 * slices, whatever writes happened before.
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
      // Another catalog's writes interleave: pages are per catalog.
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

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const v1Fingerprint = (artist: string, title: string, year: string) => sha256(`${artist}|${title}|${year}`);

describe('migration 005 over a catalog written by the previous release (positions, slug version 1)', () => {
  test('ids stay, fingerprints and event slugs move to version 2, positions go, and symbol-only titles stop colliding', async () => {
    const fresh = await freshDatabase();
    const handle = connect(fresh.url);
    try {
      const result = await migrator(handle).migrateTo('004_artwork_positions');
      expect(result.error).toBeUndefined();
      const db = handle.db as any;
      const at = '2026-01-01T00:00:00.000Z';
      await db.insertInto('entities').values({ id: 1, type: 'gallery', name: 'Old Gallery', slug: 'old-gallery', created_at: at, updated_at: at }).execute();
      await db.insertInto('entity_stats').values({ entity_id: 1, artworks: 2, events: 2 }).execute();
      await db.insertInto('artists').values({ id: 1, name: 'Ana', slug: 'ana', created_at: at }).execute();
      const artwork = (id: number, title: string, fingerprint: string, position: number) => ({
        id, entity_id: 1, title, artist_name: 'Ana', artist_id: 1, creation_year: 1999, source_fingerprint: fingerprint,
        fingerprint_version: 1, position, last_synced_at: at, created_at: at, updated_at: at,
      });
      // Version 1 gave '???' an empty title slug: '!!!' by the same artist and year was merged into it.
      await db.insertInto('artworks').values([
        artwork(7, 'Night', v1Fingerprint('ana', 'night', '1999'), 1),
        artwork(9, '???', v1Fingerprint('ana', '', '1999'), 2),
        artwork(40, 'Deleted later', v1Fingerprint('ana', 'deleted-later', '1999'), 3),
      ]).execute();
      await db.deleteFrom('artworks').where('id', '=', 40).execute();
      const event = (id: number, title: string, slug: string) => ({
        id, entity_id: 1, title, slug, last_synced_at: at, created_at: at, updated_at: at,
      });
      // Version 1 gave an event titled '???' the entity's own slug.
      await db.insertInto('events').values([event(3, 'Spring Show', 'old-gallery-spring-show'), event(4, '???', 'old-gallery')]).execute();
      if (DIALECT === 'postgres') {
        // Rows inserted with explicit ids: move the sequences where the previous release would have left them.
        for (const [table, last] of [['entities', 1], ['artists', 1], ['artworks', 40], ['events', 4]] as const) {
          await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${last})`.execute(db);
        }
      }

      expect(await migrateToLatest(handle)).toContain('005_external_id_slug_v2');
      const rows = await db.selectFrom('artworks').selectAll().orderBy('id').execute();
      expect(rows.map((r: any) => r.id)).toEqual([7, 9]);
      expect(rows[0]).not.toHaveProperty('position');
      expect(rows.map((r: any) => r.fingerprint_version)).toEqual([2, 2]);
      expect(rows[0].source_fingerprint).toBe(v1Fingerprint('ana', 'night', '1999'));
      expect(rows[1].source_fingerprint).toBe(v1Fingerprint('ana', `x${sha256('???').slice(0, 12)}`, '1999'));
      expect(rows.map((r: any) => r.external_id)).toEqual([null, null]);
      const events = await db.selectFrom('events').select(['id', 'slug', 'slug_version']).orderBy('id').execute();
      expect(events).toEqual([
        { id: 3, slug: 'old-gallery-spring-show', slug_version: 2 },
        { id: 4, slug: `old-gallery-x${sha256('???').slice(0, 12)}`, slug_version: 2 },
      ]);
    } finally {
      await handle.close();
    }

    // The service on the migrated database: '???' is the same record, '!!!' a new one, no id is reused.
    const app = await startApp({}, fresh.url);
    try {
      const key = (await import('../../src/store/keys.js')).createKey;
      const { key: secret } = await key(app.handle.db, { entityId: 1, tier: 'subscriber', scopes: ['artworks:read', 'artworks:write', 'events:read', 'events:write'], expiresAt: null });
      const api = client(app, secret);
      const same = await api.post('/v1/artworks', { title: '???', artist_name: 'Ana', creation_year: 1999, price: 5 });
      expect(same.body).toMatchObject({ id: 9, created: false });
      const other = await api.post('/v1/artworks', { title: '!!!', artist_name: 'Ana', creation_year: 1999 });
      expect(other.body.created).toBe(true);
      expect(other.body.id).toBeGreaterThan(40);
      const list = await api.get('/v1/artworks?limit=2');
      expect(list.body.artworks.map((a: { id: number }) => a.id)).toEqual([7, 9]);
      expect(list.body).toMatchObject({ total: 3, has_more: true, next_after: 9 });
      expect((await api.post('/v1/events', { title: '???' })).body).toMatchObject({ id: 4, created: false });
      expect((await api.post('/v1/events', { title: '!!!' })).body.created).toBe(true);
    } finally {
      await app.close();
      await fresh.drop();
    }
  });
});
