#!/usr/bin/env node
// A feed of 10,000 artworks in which 10 rows changed (docs/api.md, Feeds): the run that applies the
// change must take at most 10 s on SQLite and write exactly 10 changelog entries. The file is served
// by a local HTTP server; the run is the one a feed's job performs (src/feeds/run.ts), on a fresh
// SQLite file, through the built code (npm run build first).
//
//   node bench/feeds.mjs [--rows 10000] [--changed 10]
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { connect } from '../dist/db/connect.js';
import { migrateToLatest } from '../dist/db/migrate.js';
import { createEntity } from '../dist/store/entities.js';
import { createFeed } from '../dist/store/feeds.js';
import { feedFetcher } from '../dist/feeds/fetcher.js';
import { runFeed } from '../dist/feeds/run.js';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '10000' }, changed: { type: 'string', default: '10' } } });
const ROWS = Number(values.rows);
const CHANGED = Number(values.changed);
const BUDGET_MS = 10_000;

const line = (i, edited) => `INV-${i},${edited ? 'Study (revised)' : 'Study'} ${i},Artist ${i % 400},${1950 + (i % 70)},${1000 + i},EUR,available`;
const file = (edited) => ['external_id,title,artist_name,creation_year,price,currency,availability',
  ...Array.from({ length: ROWS }, (_, i) => line(i, edited.has(i)))].join('\n');

let body = file(new Set());
const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/csv' }).end(body));
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/inventory.csv`;

const dir = mkdtempSync(join(tmpdir(), 'feeds-bench-'));
const handle = connect(`sqlite:${join(dir, 'bench.db')}`);
try {
  await migrateToLatest(handle);
  const { db } = handle;
  const entity = await createEntity(db, { type: 'gallery', name: 'Feeds Bench', city: 'Berlin', country: 'DE' });
  const { feed } = await createFeed(db, entity.id, {
    url, kind: 'artworks', mapping: {}, encoding: 'utf-8', sheet: null, mode: 'mirror', interval_minutes: 60, paused: false,
  }, new Date().toISOString());
  const deps = { db, fetch: feedFetcher(() => true) };
  const entries = async () => Number((await sql`select count(*) as n from changelog where source = ${`feed:${feed.id}`} and entity_type = 'artwork'`.execute(db)).rows[0].n);

  let started = performance.now();
  const first = await runFeed(deps, feed.id);
  const firstMs = performance.now() - started;
  console.log(`first run: ${first.status}, ${first.counts}, ${Math.round(firstMs)} ms`);

  const edited = new Set(Array.from({ length: CHANGED }, (_, k) => Math.floor((k + 0.5) * ROWS / CHANGED)));
  body = file(edited);
  const before = await entries();
  started = performance.now();
  const second = await runFeed(deps, feed.id);
  const secondMs = performance.now() - started;
  const written = (await entries()) - before;
  console.log(`run with ${CHANGED} changed rows: ${second.status}, ${second.counts}, ${Math.round(secondMs)} ms, ${written} changelog entries`);

  started = performance.now();
  const third = await runFeed(deps, feed.id);
  console.log(`identical file: ${third.status}, ${Math.round(performance.now() - started)} ms, ${(await entries()) - before - written} changelog entries`);

  const ok = second.status === 'applied' && secondMs <= BUDGET_MS && written === CHANGED && third.status === 'unchanged';
  console.log(ok ? `PASS: ${ROWS} rows, ${CHANGED} changed, applied in ${Math.round(secondMs)} ms (budget ${BUDGET_MS} ms), ${written} entries`
    : 'FAIL');
  process.exitCode = ok ? 0 : 1;
} finally {
  await handle.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
