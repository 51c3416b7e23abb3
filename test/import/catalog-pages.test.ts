import { afterAll, beforeAll, expect, test } from 'vitest';
import { CATALOG_PAGE, readCatalog } from '../../src/apply/index.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';

/**
 * A preview reads the entity's catalog a page at a time and the event loop turns between two pages
 * (src/apply/index.ts, readCatalog): on SQLite a page resolves without a turn of the loop, and a
 * gallery's 9,000 artworks read and fingerprinted in one go held it 40-70 ms in bench/feeds-load.mjs.
 * The property, not a time: no stretch between two turns adds more than one page.
 */

let t: TestApp;
let gallery: Tenant;

beforeAll(async () => {
  t = await startApp();
  gallery = await tenant(t);
  const api = client(t, gallery.key);
  for (let at = 0; at < 250; at += 50) {
    const items = Array.from({ length: 50 }, (_, i) => ({ title: `Page Study ${at + i}`, external_id: `PS-${at + i}` }));
    expect((await api.post('/v1/artworks/batch', { items })).status).toBe(200);
  }
}, 120_000);
afterAll(async () => t?.close());

test('the catalog is read in pages of CATALOG_PAGE records, with a turn of the event loop between every two', async () => {
  let turns = 0;
  let counting = true;
  const count = () => { turns++; if (counting) setImmediate(count); };
  setImmediate(count);
  const pages: { size: number; turn: number }[] = [];
  const catalog = await readCatalog(t.handle.db, gallery.entityId, 'artworks', gallery.slug, (size) => pages.push({ size, turn: turns }));
  counting = false;

  expect(catalog.records).toHaveLength(250);
  expect(pages.map((p) => p.size)).toEqual([CATALOG_PAGE, CATALOG_PAGE, 50]);
  for (let i = 1; i < pages.length; i++) expect(pages[i]!.turn).toBeGreaterThan(pages[i - 1]!.turn);
  // Every record is matched as before: by external_id.
  expect(catalog.match({ externalId: 'PS-249', match: '' })).toMatchObject({ action: 'match', record: { external_id: 'PS-249' } });
});
