import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { POSTGRES_ADMIN_URL, queriesDuring } from '../support/database.js';
import { client, DIALECT, freshDatabase, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, signedIn } from '../support/console.js';

/** The titles a console list shows, in order. */
const titles = (page: string): string[] => [...page.matchAll(/<a href="\/console\/artworks\/\d+">([^<]*)<\/a>/g)].map((m) => m[1]!);

describe('console search (docs/console.md, Artworks and events: title or artist, case-insensitive containment)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let viewer: ConsoleSession;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Suche' });
    await client(t, gallery.key).post('/v1/artworks/batch', { items: [
      { title: 'Abstract Painting', artist_name: 'Gerhard Richter' },
      { title: '100% Linen', artist_name: 'Anni Albers' },
      { title: 'Under_score', artist_name: 'Sol LeWitt' },
      { title: 'Back\\slash', artist_name: null },
      { title: 'Untitled (Richter study)' },
      { title: 'Grid', artist_name: 'Agnes Martin' },
    ] });
    // Another entity's artwork that every search below would match: never listed.
    const other = await tenant(t, { name: 'Galerie Andere' });
    await client(t, other.key).post('/v1/artworks', { title: 'Richter 100% Under_score Back\\slash Grid', artist_name: 'Gerhard Richter' });
    viewer = await signedIn(t, base, gallery.entityId, 'viewer');
  }, 120_000);
  afterAll(async () => t.close());

  test.each([
    ['richter', ['Abstract Painting', 'Untitled (Richter study)']],
    ['RICHTER', ['Abstract Painting', 'Untitled (Richter study)']],
    ['anni alb', ['100% Linen']],
    ['%', ['100% Linen']],
    ['_', ['Under_score']],
    ['\\', ['Back\\slash']],
    ['ri', ['Abstract Painting', 'Untitled (Richter study)', 'Grid']],
    ['no such text anywhere', []],
  ])('%j finds the same artworks on both dialects, in id order', async (q, expected) => {
    const page = await viewer.get(`/console/artworks?q=${encodeURIComponent(q)}`);
    expect(page.status).toBe(200);
    expect(titles(page.text)).toEqual(expected);
  });
});

describe.runIf(DIALECT === 'postgres')('console search on PostgreSQL (migration 009: trigram indexes)', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let viewer: ConsoleSession;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const gallery = await tenant(t, { name: 'Galerie Gross' });
    // 10,000 artworks straight into the table (the API would take a minute): only the search reads them.
    await sql`insert into artworks (entity_id, title, artist_name, source_fingerprint, fingerprint_version, last_synced_at, created_at, updated_at)
      select ${gallery.entityId}, 'Study ' || g, 'Painter ' || (g % 300), 'fp-' || g, 2, '2026-01-01', '2026-01-01', '2026-01-01'
      from generate_series(1, 10000) as g`.execute(t.handle.db);
    await sql`analyze artworks`.execute(t.handle.db);
    viewer = await signedIn(t, base, gallery.entityId, 'viewer');
  }, 120_000);
  afterAll(async () => t.close());

  test('a text found nowhere is looked up in the trigram indexes, a common one walks the list: each search is planned with its text', async () => {
    const searches = (await queriesDuring(() => viewer.get('/console/artworks?q=no+such+study'))).filter((q) => / like /.test(q.text));
    expect(searches).toHaveLength(1);
    // Unnamed: PostgreSQL plans it with its values on every run. A named statement would keep one plan for every text after its fifth run.
    expect(searches[0]!.name).toBeUndefined();
    const plan = async (text: string): Promise<string> => {
      const direct = new pg.Client({ connectionString: t.config.databaseUrl });
      await direct.connect();
      try {
        const values = searches[0]!.values!.map((v) => (v === '%no such study%' ? text : v));
        return JSON.stringify((await direct.query(`explain (format json) ${searches[0]!.text}`, values)).rows);
      } finally {
        await direct.end();
      }
    };
    expect(await plan('%no such study%')).toContain('artworks_title_trigrams');
    expect(await plan('%study%')).not.toContain('trigrams');
    expect(titles((await viewer.get('/console/artworks?q=study')).text)[0]).toBe('Study 1');
  });
});

describe.runIf(DIALECT === 'postgres')('migration 009 and the pg_trgm extension', () => {
  const role = `art_catalog_no_create_${process.pid}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;

  beforeAll(async () => {
    fresh = await freshDatabase();
    await admin.connect();
    await admin.query(`create role ${role} login`);
    const name = new URL(fresh.url).pathname.slice(1);
    // May create tables (in public) but not extensions (no CREATE on the database): not its owner.
    await admin.query(`grant connect on database ${name} to ${role}`);
    const inDatabase = new pg.Client({ connectionString: fresh.url });
    await inDatabase.connect();
    await inDatabase.query(`grant create on schema public to ${role}`);
    await inDatabase.end();
  });
  afterAll(async () => {
    await fresh.drop();
    await admin.query(`drop role if exists ${role}`);
    await admin.end();
  });

  test('a role that may not create pg_trgm gets a message that says what to run; once it exists, the migration goes through', async () => {
    const url = new URL(fresh.url);
    url.username = role;
    const handle = connect(url.toString());
    try {
      await expect(migrateToLatest(handle)).rejects.toThrow(/^migration 009_text_search failed: the pg_trgm extension could not be created \(permission denied to create extension "pg_trgm"\): run `CREATE EXTENSION pg_trgm;` in database "art_catalog_test_\w+" as its owner or a superuser/);
      const inDatabase = new pg.Client({ connectionString: fresh.url });
      await inDatabase.connect();
      await inDatabase.query('create extension pg_trgm');
      await inDatabase.end();
      expect(await migrateToLatest(handle)).toContain('009_text_search');
    } finally {
      await handle.close();
    }
  });
});
