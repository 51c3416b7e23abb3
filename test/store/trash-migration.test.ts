import { expect, test } from 'vitest';
import { sql } from 'kysely';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest, migrator } from '../../src/db/migrate.js';
import { freshDatabase } from '../helpers.js';

// Migration 019 (docs/api.md, Trash; Runs) over data written before it.

test('migration 019 gives each record the feed of its latest feed entry, and makes feed runs every run\'s table', async () => {
  const fresh = await freshDatabase();
  const handle = connect(fresh.url);
  const db = handle.db as any;
  try {
    expect((await migrator(handle).migrateTo('016_sealed_webhook_secrets')).error).toBeUndefined();
    const at = '2026-01-01T00:00:00.000Z';
    // Rows as the schema of 016 holds them: today's store writes columns later migrations add.
    const gallery = (name: string, slug: string) => db.insertInto('entities').values({ type: 'gallery', name, slug, created_at: at, updated_at: at }).returning('id').executeTakeFirstOrThrow();
    const entity = await gallery('Migrated Gallery', 'migrated-gallery');
    const other = await gallery('Other Gallery', 'other-gallery');
    const feed = { mapping: '{}', encoding: 'utf-8', mode: 'mirror', interval_minutes: 60, created_at: at };
    const [csv, excel, gone] = await db.insertInto('feeds').values([
      { ...feed, entity_id: entity.id, url: 'https://a.example/works.csv', kind: 'artworks' },
      { ...feed, entity_id: entity.id, url: 'https://a.example/works.xlsx', kind: 'artworks' },
      { ...feed, entity_id: entity.id, url: 'https://a.example/shows.csv', kind: 'events' },
    ]).returning('id').execute();
    const work = (title: string, owner = entity.id) => ({
      entity_id: owner, title, source_fingerprint: title, fingerprint_version: 2, last_synced_at: at, created_at: at, updated_at: at,
    });
    const [a, b, c, d] = await db.insertInto('artworks').values([work('A'), work('B'), work('C'), work('D', other.id)]).returning('id').execute();
    const [e] = await db.insertInto('events').values([{ entity_id: entity.id, title: 'E', slug: 'e', slug_version: 2, last_synced_at: at, created_at: at, updated_at: at }]).returning('id').execute();
    const entry = (type: string, id: number, source: string, owner = entity.id) => ({
      owner_id: owner, entity_type: type, record_id: id, action: 'update', source, field_changes: '{}', created_at: at,
    });
    await db.insertInto('changelog').values([
      entry('artwork', a.id, `feed:${csv.id}`), entry('artwork', a.id, `feed:${excel.id}`), entry('artwork', a.id, 'api:ak_live_x'),
      entry('artwork', b.id, `feed:${csv.id}`),
      entry('artwork', c.id, 'console:someone'),
      // Another entity's record never takes this entity's feed.
      entry('artwork', d.id, `feed:${csv.id}`, other.id),
      entry('event', e.id, `feed:${gone.id}`),
    ]).execute();
    await db.insertInto('feed_runs').values({ feed_id: csv.id, status: 'applied', queued_at: at }).execute();
    await db.deleteFrom('feeds').where('id', '=', gone.id).execute();

    await migrateToLatest(handle);

    const feeds = await db.selectFrom('artworks').select(['id', 'feed_id']).orderBy('id').execute();
    expect(feeds).toEqual([{ id: a.id, feed_id: excel.id }, { id: b.id, feed_id: csv.id }, { id: c.id, feed_id: null }, { id: d.id, feed_id: null }]);
    expect(await db.selectFrom('events').select(['id', 'feed_id']).execute()).toEqual([{ id: e.id, feed_id: null }]);
    expect(await db.selectFrom('feed_runs').select(['feed_id', 'entity_id', 'kind', 'record_kind', 'source', 'status']).execute())
      .toEqual([{ feed_id: csv.id, entity_id: entity.id, kind: 'feed', record_kind: 'artworks', source: `feed:${csv.id}`, status: 'applied' }]);
    // A run without a feed (an import, an undo) now fits.
    await db.insertInto('feed_runs').values({ feed_id: null, entity_id: entity.id, kind: 'import', record_kind: 'artworks', status: 'queued', queued_at: at }).execute();
    expect(await db.selectFrom('trash').selectAll().execute()).toEqual([]);
  } finally {
    await handle.close();
    await fresh.drop();
  }
});

test('migration 021 drops feed_runs.allow_mass_delete and keeps every run; down gives the column back, 0 for each run', async () => {
  const fresh = await freshDatabase();
  const handle = connect(fresh.url);
  const db = handle.db as any;
  try {
    expect((await migrator(handle).migrateTo('020_one_schedule')).error).toBeUndefined();
    const at = '2026-01-01T00:00:00.000Z';
    const entity = await db.insertInto('entities').values({ type: 'gallery', name: 'Runs Gallery', slug: 'runs-gallery', created_at: at, updated_at: at })
      .returning('id').executeTakeFirstOrThrow();
    await db.insertInto('feed_runs').values({ feed_id: null, entity_id: entity.id, kind: 'import', record_kind: 'artworks', status: 'applied', allow_mass_delete: 0, queued_at: at }).execute();

    expect((await migrator(handle).migrateTo('021_mass_deletes')).error).toBeUndefined();
    await expect(sql`select allow_mass_delete from feed_runs`.execute(db)).rejects.toThrow();
    expect(await db.selectFrom('feed_runs').select(['kind', 'status']).execute()).toEqual([{ kind: 'import', status: 'applied' }]);

    expect((await migrator(handle).migrateDown()).error).toBeUndefined();
    expect(await db.selectFrom('feed_runs').select(['kind', 'allow_mass_delete']).execute()).toEqual([{ kind: 'import', allow_mass_delete: 0 }]);
  } finally {
    await handle.close();
    await fresh.drop();
  }
});
