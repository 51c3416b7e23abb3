import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest, migrator } from '../../src/db/migrate.js';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, freshDatabase, tenant, type TestApp } from '../helpers.js';
import { csv, type FileServer } from '../support/file-server.js';
import { closeFeeds, startFeeds } from '../support/feeds.js';

/** A feed of a gallery's own spreadsheet, without a mapping (docs/api.md, Feeds; docs/push.md, How columns are read). */

let t: TestApp;
let files: FileServer;
let api: ReturnType<typeof client>;

// Runs are driven by the test (runFeed, as the feed's job does), not by the app's job runner.
beforeAll(async () => ({ t, files, api } = await startFeeds()));
afterAll(() => closeFeeds({ t, files }));

const allowAll = feedFetcher(() => true);
async function runNow(feedId: number) {
  await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db);
  await runFeed({ db: t.handle.db, fetch: allowAll }, feedId);
  return (await api.get(`/v1/feeds/${feedId}`)).body;
}

const MARKER = 'PRIVATE-MARKER-7731';
const sheet = csv('Stock number;Title;Artist;Year;Medium;Dimensions (cm);Price (EUR);Price on request;Edition;Cost price;Consignor',
  ...Array.from({ length: 30 }, (_, i) => [
    `S-${100 + i}`, `Harbour ${i + 1}`, i % 2 ? 'Ada Berg' : 'Cem Ak', `c. ${1990 + i}`, 'Oil on canvas', '60 x 80',
    i === 3 ? '' : `${12 + i}.500`, i === 3 ? 'yes' : 'no', i % 5 === 0 ? `${i + 1}/50 + 5 AP` : 'unique', `${MARKER} ${i}`, `${MARKER} consignor`,
  ].join(';')));

describe('a feed created without a mapping', () => {
  test('whose file cannot be read at creation stores its suggested mapping at its first run', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    const created = await own.post('/v1/feeds', { url: files.url('/later.csv'), kind: 'artworks' });
    expect(created.body).toMatchObject({ mapping: {}, unmapped_columns: null });
    files.set('/later.csv', csv('Titel;Künstler;Notes', 'Blue;Ada Berg;PRIVATE'));
    await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${created.body.id}`}`.execute(t.handle.db);
    await runFeed({ db: t.handle.db, fetch: allowAll }, created.body.id);
    const feed = (await own.get(`/v1/feeds/${created.body.id}`)).body;
    expect(feed).toMatchObject({ mapping: { Titel: 'title', Künstler: 'artist_name', Notes: null }, unmapped_columns: ['Notes'], last_run: { counts: { created: 1 } } });
  });

  test('reads the file at creation and stores the suggested mapping; the run applies it; private columns stay out; a remap afterwards leaves 30 records, not 60', async () => {
    files.set('/gallery.csv', sheet);
    const created = await api.post('/v1/feeds', { url: files.url('/gallery.csv'), kind: 'artworks' });
    expect(created.status).toBe(201);
    const suggested = {
      'Stock number': 'external_id', Title: 'title', Artist: 'artist_name', Year: 'creation_year', Medium: 'medium', 'Dimensions (cm)': 'dimensions',
      'Price (EUR)': 'price', 'Price on request': 'price_on_request', Edition: 'edition', 'Cost price': null, Consignor: null,
    };
    expect(created.body).toMatchObject({ mapping: suggested, unmapped_columns: ['Cost price', 'Consignor'] });

    const first = await runNow(created.body.id);
    expect(first.last_run).toMatchObject({ status: 'applied', counts: { rows: 30, created: 30, refused: 0 } });
    expect(first.mapping).toEqual(suggested);
    expect(first.unmapped_columns).toEqual(['Cost price', 'Consignor']);

    const listed = (await api.get('/v1/artworks?limit=100')).body.artworks as any[];
    expect(listed).toHaveLength(30);
    const one = (await api.get(`/v1/artworks/${listed[0].id}`)).body;
    expect(one).toMatchObject({
      external_id: 'S-100', title: 'Harbour 1', artist_name: 'Cem Ak', creation_year: 1990, price: 12500, currency: 'EUR',
      dimensions: '60 x 80 cm', height: 60, width: 80, dimension_unit: 'cm', edition_number: 1, edition_size: 50, artist_proofs: 5,
    });
    expect((await api.get(`/v1/artworks/${listed[3].id}`)).body).toMatchObject({ price: null, price_display: 'on_request' });
    expect(JSON.stringify(listed)).not.toContain(MARKER);

    // Remapped: the stock number's column named by hand, the rest read as stored; the same records are matched.
    const remapped = await api.put(`/v1/feeds/${created.body.id}`, { mapping: { 'Stock number': 'external_id', 'Cost price': null } });
    expect(remapped.status).toBe(200);
    const second = await runNow(created.body.id);
    expect(second.last_run).toMatchObject({ status: 'applied', counts: { rows: 30, created: 0, refused: 0 } });
    expect((await api.get('/v1/artworks?limit=100')).body.artworks).toHaveLength(30);
    expect(second.mapping).toMatchObject({ 'Cost price': null, Consignor: null, Artist: 'artist_name' });
  });

  test('a run\'s price without a currency is a warning, the row written', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    files.set('/nocurrency.csv', csv('Titel;Preis', 'Blue;12.500'));
    const created = await own.post('/v1/feeds', { url: files.url('/nocurrency.csv'), kind: 'artworks' });
    await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${created.body.id}`}`.execute(t.handle.db);
    await runFeed({ db: t.handle.db, fetch: allowAll }, created.body.id);
    const run = (await own.get(`/v1/feeds/${created.body.id}`)).body.last_run;
    expect(run).toMatchObject({ status: 'applied', counts: { created: 1, refused: 0 } });
    expect(run.problems).toEqual([{ line: 2, column: 'Preis', level: 'warning', message: expect.stringMatching(/^price: no currency/) }]);
  });
});

test('migration 018 freezes the feeds made before it as they read today, adds the profile\'s default currency, and allows not_for_sale, keeping the artworks', async () => {
  const fresh = await freshDatabase();
  const handle = connect(fresh.url);
  const db = handle.db as any;
  try {
    expect((await migrator(handle).migrateTo('016_sealed_webhook_secrets')).error).toBeUndefined();
    const at = '2026-01-01T00:00:00.000Z';
    const entity = await db.insertInto('entities').values({ type: 'gallery', name: 'Old', slug: 'old', created_at: at, updated_at: at }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('feeds').values({
      entity_id: entity.id, url: 'https://old.example/a.csv', kind: 'artworks', mapping: '{"Künstler":"artist_name"}', encoding: 'utf-8', sheet: null,
      mode: 'merge', interval_minutes: 60, paused: 0, created_at: at,
    }).execute();
    const artwork = {
      entity_id: entity.id, title: 'Kept', source_fingerprint: 'f'.repeat(64), fingerprint_version: 2, availability: 'sold', price: 100,
      created_at: at, updated_at: at, last_synced_at: at,
    };
    await db.insertInto('artworks').values([artwork, { ...artwork, title: 'Deleted', source_fingerprint: 'e'.repeat(64) }]).execute();
    await db.deleteFrom('artworks').where('title', '=', 'Deleted').execute();
    await expect(db.insertInto('artworks').values({ ...artwork, title: 'NFS', source_fingerprint: 'd'.repeat(64), availability: 'not_for_sale' }).execute()).rejects.toThrow();
    await migrateToLatest(handle);
    // The artworks' check allows not_for_sale; the rows and the id counter are kept (a deleted id is not reused).
    expect(await db.selectFrom('artworks').select(['id', 'title', 'availability', 'price']).execute()).toEqual([{ id: 1, title: 'Kept', availability: 'sold', price: 100 }]);
    const nfs = await db.insertInto('artworks').values({ ...artwork, title: 'NFS', source_fingerprint: 'd'.repeat(64), availability: 'not_for_sale' }).returning('id').executeTakeFirstOrThrow();
    expect(nfs.id).toBeGreaterThan(2);
    await expect(db.insertInto('artworks').values({ ...artwork, title: 'Lost', source_fingerprint: 'c'.repeat(64), availability: 'lost' }).execute()).rejects.toThrow();
    await db.deleteFrom('artworks').where('id', '=', nfs.id).execute();
    expect(await db.selectFrom('feeds').select(['mapping', 'mapping_frozen']).execute()).toEqual([{ mapping: '{"Künstler":"artist_name"}', mapping_frozen: 1 }]);
    expect(await db.selectFrom('entities').select('default_currency').execute()).toEqual([{ default_currency: null }]);
    await db.insertInto('feeds').values({
      entity_id: entity.id, url: 'https://old.example/b.csv', kind: 'artworks', mapping: '{}', encoding: 'utf-8', sheet: null,
      mode: 'merge', interval_minutes: 60, paused: 0, created_at: at,
    }).execute();
    expect((await db.selectFrom('feeds').select('mapping_frozen').orderBy('id').execute()).map((r: any) => r.mapping_frozen)).toEqual([1, 0]);
    expect((await migrator(handle).migrateTo('016_sealed_webhook_secrets')).error).toBeUndefined();
  } finally {
    await handle.close();
    await fresh.drop();
  }
});

describe('POST /v1/feeds/preview (docs/api.md, Feed preview)', () => {
  test('shows the mapping, the first 20 rows as they would be written, a run\'s counts and the problems; writes nothing', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    const existing = await own.post('/v1/artworks', { title: 'Harbour 1', artist_name: 'Cem Ak', creation_year: 1990, external_id: 'S-100' });
    files.set('/preview.csv', sheet.toString().replace('S-101;Harbour 2;Ada Berg;c. 1991', 'S-101;Harbour 2;Ada Berg;nineties').replace(/\r?\n$/, ''));
    const before = (await own.get('/v1/changelog?limit=1')).body.total;
    const answer = await own.post('/v1/feeds/preview', { url: files.url('/preview.csv'), kind: 'artworks' });
    expect(answer.status).toBe(200);
    expect(answer.body.unmapped_columns).toEqual(['Cost price', 'Consignor']);
    expect(answer.body.mapping.Edition).toBe('edition');
    expect(answer.body.counts).toEqual({ rows: 30, created: 28, updated: 1, unchanged: 0, deleted: 0, refused: 1, duplicates: 0 });
    expect(answer.body.rows).toHaveLength(20);
    expect(answer.body.rows[0]).toMatchObject({ line: 2, action: 'update', id: existing.body.id, fields: { external_id: 'S-100', price: 12500, currency: 'EUR' } });
    expect(answer.body.rows[1]).toMatchObject({ line: 3, action: 'refused', id: null });
    expect(answer.body.rows[2]).toMatchObject({ line: 4, action: 'create', id: null, fields: { title: 'Harbour 3', creation_year: 1992 } });
    expect(answer.body.problems).toEqual([{ line: 3, column: 'Year', level: 'error', message: 'creation_year: "nineties" is not a year (such as 1990, c. 1990 or 1990–92)' }]);
    expect(JSON.stringify(answer.body)).not.toContain(MARKER);
    expect((await own.get('/v1/changelog?limit=1')).body.total).toBe(before);
    expect((await own.get('/v1/artworks')).body.artworks).toHaveLength(1);
  });

  test('a file that cannot be read is a 400 naming the URL; a key without the kind\'s write scope is 403', async () => {
    const other = await tenant(t);
    const missing = await client(t, other.key).post('/v1/feeds/preview', { url: files.url('/nothing-here.csv'), kind: 'artworks' });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toEqual([{ field: 'url', message: 'the file cannot be read: HTTP 404' }]);
    const reader = await tenant(t, { scopes: ['artworks:read'] });
    expect((await client(t, reader.key).post('/v1/feeds/preview', { url: files.url('/preview.csv'), kind: 'artworks' })).status).toBe(403);
  });

  test('holds one of the entity\'s two import slots: a third preview at once is 429 with retry_after', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    files.set('/slow.csv', sheet);
    // Two previews (or imports being applied) hold the slots while their file is being read.
    const claims = [t.app.heldImports.claim(other.entityId), t.app.heldImports.claim(other.entityId)];
    expect(claims.every(Boolean)).toBe(true);
    const third = await own.post('/v1/feeds/preview', { url: files.url('/slow.csv'), kind: 'artworks' });
    expect(third.status).toBe(429);
    expect(third.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(third.headers['retry-after']).toBeDefined();
    claims.forEach((done) => done!());
    expect((await own.post('/v1/feeds/preview', { url: files.url('/slow.csv'), kind: 'artworks' })).status).toBe(200);
  });

  test('parses its file in one of the process\'s read turns: it waits while two other files are read; one that gets none is 503 with Retry-After', async () => {
    const other = await tenant(t);
    const own = client(t, other.key);
    files.set('/turns.csv', sheet);
    // Another gallery reads two files (both of the process's turns), as the console's uploads do.
    const turns = [(await t.app.heldImports.readTurn(-1))!, (await t.app.heldImports.readTurn(-1))!];
    const refused = await own.post('/v1/feeds/preview', { url: files.url('/turns.csv'), kind: 'artworks' });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ error: 'service_unavailable', retry_after: 30 });
    expect(refused.headers['retry-after']).toBe('30');
    // Its import slot was let go with the refusal.
    expect(t.app.heldImports.claim(other.entityId)).toBeDefined();
    const waiting = own.post('/v1/feeds/preview', { url: files.url('/turns.csv'), kind: 'artworks' });
    setTimeout(turns[0]!, 300);
    const answer = await waiting;
    expect(answer.status).toBe(200);
    expect(answer.body.counts.rows).toBe(30);
    turns[1]!();
  });
});
