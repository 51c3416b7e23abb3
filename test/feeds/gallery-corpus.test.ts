import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { fileServer, type FileServer } from '../support/file-server.js';
import { workbook } from '../support/spreadsheets.js';

/**
 * Spreadsheets as galleries keep them (test/fixtures/galleries: English, German, French, Italian,
 * Spanish, Dutch, an inventory system's export, and an Excel workbook written here), each read as a
 * feed without any mapping (docs/push.md, How columns are read): the share of expected cells stored
 * exactly per file, no refused row, and no private marker in any record, public page or JSON-LD.
 */

const DIR = join(import.meta.dirname, '..', 'fixtures', 'galleries');
const MARKER = 'PRIVATE-7731';
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

let t: TestApp;
let files: FileServer;
beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0', RATE_LIMIT_SUBSCRIBER: '100000', PUBLIC_RATE_LIMIT: '100000' });
});
afterAll(async () => {
  await t?.close();
  await files?.close();
});

/** An Excel workbook as a gallery saves one: typed numbers, an English header of its own words. */
const XLSX_ROWS: [unknown[], Record<string, unknown>][] = [
  [['XL-1', 'Quiet Room', 'Ines Morel', 2012, 'Oil on canvas', '90 x 70', 14500, 'No', 'Available', '', 9000, `${MARKER} consignor`],
    { external_id: 'XL-1', title: 'Quiet Room', artist_name: 'Ines Morel', creation_year: 2012, medium: 'Oil on canvas', dimensions: '90 x 70 cm', height: 90, width: 70, dimension_unit: 'cm', price: 14500, currency: 'EUR', availability: 'available' }],
  [['XL-2', 'Quiet Room (print)', 'Ines Morel', 2014, 'Giclée', '45 x 35', 650, 'No', 'Sold', '12/40 + 4 AP', 200, ''],
    { external_id: 'XL-2', title: 'Quiet Room (print)', artist_name: 'Ines Morel', creation_year: 2014, medium: 'Giclée', dimensions: '45 x 35 cm', height: 45, width: 35, dimension_unit: 'cm', price: 650, currency: 'EUR', availability: 'sold', edition_number: 12, edition_size: 40, artist_proofs: 4 }],
  [['XL-3', 'Threshold', 'Ines Morel', 2016, 'Oil on linen', '150 x 120', '', 'Yes', 'Reserved', '', 11000, ''],
    { external_id: 'XL-3', title: 'Threshold', artist_name: 'Ines Morel', creation_year: 2016, medium: 'Oil on linen', dimensions: '150 x 120 cm', height: 150, width: 120, dimension_unit: 'cm', price_display: 'on_request', availability: 'reserved' }],
];

async function corpus(): Promise<{ name: string; body: Buffer; type: string; expected: Record<string, unknown>[] }[]> {
  const csvs = readdirSync(DIR).filter((f) => f.endsWith('.csv')).sort().map((name) => ({
    name, body: readFileSync(join(DIR, name)), type: 'text/csv',
    expected: JSON.parse(readFileSync(join(DIR, name.replace(/\.csv$/, '.expected.json')), 'utf8')) as Record<string, unknown>[],
  }));
  const header = ['Inventory No.', 'Artwork title', 'Artist name', 'Year', 'Technique', 'Size (cm)', 'Retail price (EUR)', 'POA', 'Availability', 'Edition', 'Purchase price', 'Collector'];
  const xlsx = await workbook({ Stock: [header, ...XLSX_ROWS.map(([cells]) => cells)] });
  return [...csvs, { name: 'workbook.xlsx', body: xlsx, type: XLSX_TYPE, expected: XLSX_ROWS.map(([, e]) => e) }];
}

const FIELDS = ['external_id', 'title', 'artist_name', 'creation_year', 'medium', 'dimensions', 'height', 'width', 'depth', 'dimension_unit',
  'price', 'currency', 'availability', 'price_display', 'edition_number', 'edition_size', 'artist_proofs'] as const;

describe('a corpus of gallery spreadsheets, read without any mapping', { timeout: 120_000 }, () => {
  test('each file: cells stored exactly (goal ≥ 95 %), no refused row, no private marker anywhere public', async () => {
    const table: string[] = [];
    const shares: Record<string, number> = {};
    for (const file of await corpus()) {
      const gallery = await tenant(t, { name: `Corpus ${file.name}` });
      const api = client(t, gallery.key);
      files.set(`/${file.name}`, file.body, file.type);
      const created = await api.post('/v1/feeds', { url: files.url(`/${file.name}`), kind: 'artworks' });
      expect(created.status, file.name).toBe(201);
      await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${created.body.id}`}`.execute(t.handle.db);
      await runFeed({ db: t.handle.db, fetch: feedFetcher(() => true) }, created.body.id);
      const feed = (await api.get(`/v1/feeds/${created.body.id}`)).body;
      expect(feed.last_run.counts.refused, `${file.name}: ${JSON.stringify(feed.last_run.problems)}`).toBe(0);

      const listed = (await api.get('/v1/artworks?limit=100')).body.artworks as { id: number; external_id: string }[];
      const stored = await Promise.all(listed.map(async (a) => (await api.get(`/v1/artworks/${a.id}`)).body as Record<string, unknown>));
      let exact = 0;
      let total = 0;
      const wrong: string[] = [];
      for (const expected of file.expected) {
        const record = stored.find((r) => r.external_id === expected.external_id);
        for (const field of FIELDS) {
          // Fields the file does not give are expected empty (price_display: shown).
          const want = expected[field] ?? (field === 'price_display' ? 'shown' : null);
          total++;
          if (record && record[field] === want) exact++;
          else wrong.push(`${String(expected.external_id)}.${field}: ${JSON.stringify(record?.[field])} ≠ ${JSON.stringify(want)}`);
        }
      }
      shares[file.name] = exact / total;
      table.push(`${file.name.padEnd(22)} ${String(file.expected.length).padStart(4)} rows ${String(total).padStart(5)} cells ${(100 * exact / total).toFixed(1).padStart(6)} %  unmapped: ${feed.unmapped_columns.join(', ')}${wrong.length ? `\n    ${wrong.join('\n    ')}` : ''}`);

      // Nothing private in any record, public page or JSON-LD.
      expect(JSON.stringify(stored), file.name).not.toContain(MARKER);
      const pages = [`/profiles/${gallery.slug}`, ...listed.map((a) => `/profiles/${gallery.slug}/artworks/${a.id}`)];
      for (const url of pages) {
        const page = await t.app.inject({ method: 'GET', url });
        expect(page.statusCode, url).toBe(200);
        expect(page.body, url).not.toContain(MARKER);
      }
    }
    console.log(`\nGallery corpus, read without a mapping (share of expected cells stored exactly):\n${table.join('\n')}\n`);
    for (const [name, share] of Object.entries(shares)) expect(share, name).toBeGreaterThanOrEqual(0.95);
    expect(Object.keys(shares)).toHaveLength(8);
  });
});
