import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest, migrator } from '../../src/db/migrate.js';
import { transaction } from '../../src/db/run.js';
import { statement } from '../../src/db/statement.js';
import { all } from '../../src/db/work.js';
import { postArtworkWork } from '../../src/store/artworks.js';
import { client, DIALECT, freshDatabase, keyFor, startApp, tenant, type FreshDatabase, type TestApp } from '../helpers.js';

/** Migration 006: writes of one catalog side by side on PostgreSQL, and a changelog cursor that misses nothing. */

describe.skipIf(DIALECT !== 'postgres')('concurrent writers of one catalog on PostgreSQL', () => {
  let database: FreshDatabase;
  let apps: TestApp[];

  beforeAll(async () => {
    database = await freshDatabase();
    // Two apps, two connection pools, one database: writes of one entity from both at once.
    apps = [await startApp({ RATE_LIMIT_SUBSCRIBER: '1000000' }, database.url)];
    apps.push(await startApp({ RATE_LIMIT_SUBSCRIBER: '1000000' }, database.url));
  });
  afterAll(async () => {
    for (const app of apps ?? []) await app.close();
    await database?.drop();
  });

  const hold = statement((db) => ({ compile: () => sql`select pg_sleep(0.8)`.compile(db) }));

  test('a write of a catalog completes while another write of it is open, and a poller sees neither until both are final', async () => {
    const [a] = apps;
    const gallery = await tenant(a!);
    const api = client(a!, gallery.key);
    const actor = { entityId: gallery.entityId, entitySlug: gallery.slug, source: 'test' };
    const seen = (await api.get('/v1/changelog?after=0&limit=100')).body.next_after ?? 0;

    // The first write takes its changelog id, then stays open.
    const open = transaction(a!.handle.db, function* () {
      const posted = yield* postArtworkWork(a!.handle.db, actor, { title: 'Slow write' });
      yield* all(hold, {});
      return posted;
    });
    let openDone = false;
    void open.then(() => { openDone = true; });
    await new Promise((resolve) => setTimeout(resolve, 150));
    // The second, later one does not wait for the first to commit.
    const fast = await api.post('/v1/artworks', { title: 'Fast write' });
    expect(fast.status).toBe(201);
    expect(openDone).toBe(false);
    // Its entry is committed but not final: an earlier entry may still come below it.
    const early = await api.get(`/v1/changelog?after=${seen}&limit=100`);
    expect(early.body.changes).toEqual([]);
    expect(openDone).toBe(false);

    const slow = await open;
    const late = await api.get(`/v1/changelog?after=${seen}&limit=100`);
    expect(late.body.changes.map((c: { entity_id: number }) => c.entity_id)).toEqual([slow.artwork.id, fast.body.id]);
  });

  test('read-your-writes while an older transaction ends during the read: a writer polling right after its write finds its entry', async () => {
    const [a] = apps;
    const gallery = await tenant(a!);
    const api = client(a!, gallery.key);
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      let after = (await api.get('/v1/changelog?after=0&limit=100')).body.next_after ?? 0;
      // Each round: a transaction of this database older than the write holds the write's entry back
      // (not final), and commits at a moment within the read's first statements. A page and its check
      // for entries still becoming final taken on two horizons missed the entry when the commit fell
      // between them (about one round in ten).
      for (let round = 0; round < 40; round++) {
        await holder.query('begin');
        await holder.query('select pg_current_xact_id()');
        const posted = await api.post('/v1/artworks', { title: `Written ${round}` });
        expect(posted.status).toBe(201);
        const polled = api.get(`/v1/changelog?after=${after}&limit=100`);
        await new Promise((resolve) => setTimeout(resolve, round % 6));
        await holder.query('commit');
        const page = await polled;
        expect(page.status).toBe(200);
        expect(page.body.changes.map((c: { entity_id: number }) => c.entity_id)).toEqual([posted.body.id]);
        after = page.body.next_after;
      }
    } finally {
      await holder.end();
    }
  });

  test('writers on two connection pools and a cursor poller: the poller receives every entry exactly once, in id order', async () => {
    const [a, b] = apps;
    const gallery = await tenant(a!);
    const keys = [gallery.key, (await keyFor(a!, gallery.entityId)).key];
    const apis = [client(a!, keys[0]), client(b!, keys[1])];
    let writing = true;
    const received: number[] = [];
    let after = 0;
    const poll = async () => {
      const r = await apis[0]!.get(`/v1/changelog?after=${after}&limit=37`);
      expect(r.status).toBe(200);
      received.push(...r.body.changes.map((c: { id: number }) => c.id));
      after = r.body.next_after ?? after;
      return r.body.has_more as boolean;
    };
    const poller = (async () => {
      while (writing) await poll();
    })();
    // Eight writers, four per pool: single posts (some with a new artist) and batches of 20.
    const writers = Array.from({ length: 8 }, async (_, w) => {
      const api = apis[w % 2]!;
      for (let round = 0; round < 6; round++) {
        if (w % 4 === 3) {
          const items = Array.from({ length: 20 }, (_, i) => ({ title: `Batch ${w}.${round}.${i}`, artist_name: `Painter ${round}` }));
          expect((await api.post('/v1/artworks/batch', { items })).status).toBe(200);
        } else {
          expect((await api.post('/v1/artworks', { title: `Single ${w}.${round}`, artist_name: `Artist ${w}` })).status).toBe(201);
        }
      }
    });
    await Promise.all(writers);
    writing = false;
    await poller;
    while (await poll());

    const everything = (await apis[1]!.get('/v1/changelog?limit=500')).body;
    const ids = everything.changes.map((c: { id: number }) => c.id);
    expect(everything.total).toBe(ids.length);
    expect(received).toEqual(ids);
    expect(new Set(received).size).toBe(received.length);
    // 6 singles × 6 writers + 6 batches × 2 writers × 20, and each new artist's creation.
    expect(everything.changes.filter((c: { entity_type: string }) => c.entity_type === 'artwork')).toHaveLength(36 + 240);
    const counts = (await apis[0]!.get('/v1/artworks?limit=1')).body;
    expect(counts.total).toBe(36 + 240);
  });

  test("a transaction's changelog ids run on from its transaction's first id, and it may write 4,096 entries, not one more", async () => {
    const db = apps[0]!.handle.db;
    const { entityId } = await tenant(apps[0]!);
    const entries = (n: number) => sql<{ id: string | number; first: string | number }>`
      insert into changelog (owner_id, entity_type, record_id, action, source, field_changes, created_at)
      select ${entityId}, 'artwork', g, 'create', 'api:test', '{}', '2026-01-01T00:00:00.000Z' from generate_series(1, ${n}) as g
      returning id, (select id_base + (pg_current_xact_id()::text::bigint - xid_base) * 4096 from changelog_clock) as first`;
    const written = await db.transaction().execute(async (trx) => (await entries(3).execute(trx)).rows);
    const first = Number(written[0]!.first);
    expect(written.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual([first, first + 1, first + 2]);
    await expect(db.transaction().execute((trx) => entries(4_097).execute(trx))).rejects.toMatchObject({ code: '54000' });
    const full = await db.transaction().execute(async (trx) => (await entries(4_096).execute(trx)).rows);
    expect(full).toHaveLength(4_096);
  });
});

describe('migration 006 over a catalog written by the previous release', () => {
  let t: TestApp | undefined;
  afterAll(async () => { await t?.close(); });

  test('counts and changelog entries stay; new entries get ids above every old one and the counts go on from the old ones', async () => {
    const fresh = await freshDatabase();
    const handle = connect(fresh.url);
    const db = handle.db as any;
    try {
      expect((await migrator(handle).migrateTo('005_external_id_slug_v2')).error).toBeUndefined();
      const at = '2026-01-01T00:00:00.000Z';
      await db.insertInto('entities').values({ id: 1, type: 'gallery', name: 'Old Gallery', slug: 'old-gallery', created_at: at, updated_at: at }).execute();
      await db.insertInto('artworks').values({
        id: 5, entity_id: 1, title: 'Night', source_fingerprint: 'fp-night', fingerprint_version: 2, availability: 'sold',
        last_synced_at: at, created_at: at, updated_at: at,
      }).execute();
      await db.insertInto('entity_stats').values({ entity_id: 1, artworks: 1, sold: 1, changelog: 2, artworks_synced_at: at }).execute();
      const entry = (id: number, recordId: number) => ({
        id, owner_id: 1, entity_type: 'artwork', record_id: recordId, action: 'create', source: 'api:old', field_changes: '{}', created_at: at,
      });
      await db.insertInto('changelog').values([entry(3, 4), entry(900, 5)]).execute();
      if (DIALECT === 'postgres') {
        for (const [table, last] of [['entities', 1], ['artworks', 5], ['changelog', 900]] as const) {
          await sql`select setval(pg_get_serial_sequence(${table}, 'id'), ${last})`.execute(db);
        }
      }
      // 006 runs first; later migrations (008, …) follow it.
      expect((await migrateToLatest(handle))[0]).toBe('006_parallel_writes');
    } finally {
      await handle.close();
    }

    t = await startApp({}, fresh.url);
    const closeApp = t.close.bind(t);
    t.close = async () => { await closeApp(); await fresh.drop(); };
    const { key } = await keyFor(t, 1);
    const api = client(t, key);
    const created = await api.post('/v1/artworks', { title: 'Day', availability: 'sold' });
    expect(created.status).toBe(201);
    const log = (await api.get('/v1/changelog?after=0&limit=10')).body;
    expect(log.changes.map((c: { id: number }) => c.id).slice(0, 2)).toEqual([3, 900]);
    expect(log.changes).toHaveLength(3);
    expect(log.changes[2].id).toBeGreaterThan(900);
    expect(log.changes[2]).toMatchObject({ entity_id: created.body.id, action: 'create' });
    expect(log.total).toBe(3);
    const sold = (await api.get('/v1/artworks?availability=sold&limit=10')).body;
    expect(sold.total).toBe(2);
    expect((await api.get('/v1/sync/status')).body.artworks).toMatchObject({ count: 2 });
  });
});
