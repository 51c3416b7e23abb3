#!/usr/bin/env node
// Many feeds due at once (docs/api.md, Feeds; docs/performance.md, Feeds): 200 feeds of 1,000 rows each —
// 20 galleries with the 10 feeds an account may have — are due when a real `serve` starts. While they run,
// a probe in its own thread asks `/healthz` over and over (a run that held the event loop shows up as a
// slow answer), and once 50 runs have ended another gallery connects its one feed: round-robin between
// entities must start it after the run in progress, not after the 150 waiting ones. Every file is served
// by a local HTTP server (FETCH_ALLOW_PRIVATE=true); the runs are the feed jobs of the one job queue, at
// FEED_CONCURRENCY (default 1) per process. Built code (npm run build first).
//
//   node bench/feeds-load.mjs [--galleries 20] [--feeds 10] [--rows 1000] [--other-after 50] [--database-url URL]
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
import { startService, stop } from './lib.mjs';
import { STALL_BUDGET_MS, mean, quantile, round, sleep, startProbe } from './probe.mjs';

const { values } = parseArgs({
  options: {
    galleries: { type: 'string', default: '20' }, feeds: { type: 'string', default: '10' }, rows: { type: 'string', default: '1000' },
    'other-after': { type: 'string', default: '50' }, 'database-url': { type: 'string' },
  },
});
const GALLERIES = Number(values.galleries);
const FEEDS = Number(values.feeds);
const ROWS = Number(values.rows);
const OTHER_AFTER = Number(values['other-after']);
const TOTAL = GALLERIES * FEEDS;

/** One feed's file: its own 1,000 works (every run of the first round creates them all). */
const csv = (name) => ['external_id,title,artist_name,creation_year,price,currency,availability',
  ...Array.from({ length: ROWS }, (_, i) => `${name}-${i},Study ${i} (${name}),Artist ${i % 300},${1950 + (i % 70)},${1000 + i},EUR,available`)].join('\n');
const files = new Map();
const server = http.createServer((request, response) => {
  const name = /^\/(f[\w-]+)\.csv$/.exec(request.url ?? '')?.[1];
  if (!name) return response.writeHead(404).end();
  if (!files.has(name)) files.set(name, Buffer.from(csv(name)));
  response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(files.get(name));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const fileUrl = (name) => `http://127.0.0.1:${server.address().port}/${name}.csv`;

const dir = mkdtempSync(join(tmpdir(), 'feeds-load-'));
const databaseUrl = values['database-url'] ?? `sqlite:${join(dir, 'feeds.db')}`;
const handle = connect(databaseUrl, { connectTimeoutMs: 10_000 });
const spec = (url) => ({ url, kind: 'artworks', mapping: {}, encoding: 'utf-8', sheet: null, mode: 'merge', interval_minutes: 1440, paused: false });
let service;
try {
  await migrateToLatest(handle);
  const { db } = handle;
  for (let g = 0; g < GALLERIES; g++) {
    const entity = await createEntity(db, { type: 'gallery', name: `Feeds Load ${g} ${Date.now()}`, city: 'Berlin', country: 'DE' });
    for (let f = 0; f < FEEDS; f++) await createFeed(db, entity.id, spec(fileUrl(`f${g}-${f}`)), new Date().toISOString());
  }
  const other = await createEntity(db, { type: 'gallery', name: `Feeds Load other ${Date.now()}`, city: 'Berlin', country: 'DE' });
  console.log(`feeds-load: ${TOTAL} feeds of ${ROWS} rows due at once (${GALLERIES} galleries x ${FEEDS}), ${databaseUrl.split(':')[0]}`);

  const runs = () => sql`select r.feed_id, f.entity_id, r.status, r.started_at, r.finished_at from feed_runs r join feeds f on f.id = r.feed_id`.execute(db).then((r) => r.rows);
  const started = performance.now();
  service = startService({ DATABASE_URL: databaseUrl, PORT: '0', LOG_LEVEL: 'warn', FETCH_ALLOW_PRIVATE: 'true' });
  const url = await service.url;
  const probe = startProbe(url);
  probe.phase('feeds running');

  let otherFeed;
  let otherDueAt;
  for (;;) {
    const all = await runs();
    const ended = all.filter((r) => r.finished_at !== null);
    if (!otherFeed && ended.length >= Math.min(OTHER_AFTER, TOTAL)) {
      otherDueAt = new Date().toISOString();
      otherFeed = (await createFeed(db, other.id, spec(fileUrl('f-other')), otherDueAt)).feed;
    }
    if (otherFeed && ended.length >= TOTAL + 1) break;
    if (performance.now() - started > 30 * 60_000) throw new Error(`feeds-load: ${ended.length} of ${TOTAL + 1} runs ended after 30 minutes`);
    await sleep(250);
  }
  const wallS = (performance.now() - started) / 1000;
  const samples = (await probe.stop()).get('feeds running') ?? [];
  const all = await runs();
  const ms = (a, b) => Date.parse(b) - Date.parse(a);
  const durations = all.filter((r) => r.feed_id !== otherFeed.id).map((r) => ms(r.started_at, r.finished_at));
  const otherRun = all.find((r) => r.feed_id === otherFeed.id);
  const waited = ms(otherDueAt, otherRun.started_at);
  const startedBefore = all.filter((r) => r.feed_id !== otherFeed.id && Date.parse(r.started_at) < Date.parse(otherRun.started_at)).length;
  const statuses = Object.entries(all.reduce((n, r) => ({ ...n, [r.status]: (n[r.status] ?? 0) + 1 }), {})).map(([s, n]) => `${s} ${n}`).join(', ');
  const health = { p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), max: Math.max(...samples.filter(Number.isFinite)) };
  const longest = Math.max(...durations);

  console.log(`\n${TOTAL + 1} runs (${statuses}) in ${round(wallS)} s; a run ${round(mean(durations))} ms on average, ${round(longest)} ms at most`);
  console.log(`/healthz while they ran: ${samples.length} answers, p50 ${round(health.p50)} ms, p99 ${round(health.p99)} ms, max ${round(health.max)} ms (budget ${STALL_BUDGET_MS} ms)`);
  console.log(`the other gallery's feed, due after ${OTHER_AFTER} runs had ended: started ${waited} ms after it was due, `
    + `${startedBefore - OTHER_AFTER} other runs started in between (${TOTAL - startedBefore} were still waiting)`);
  const fair = waited <= longest + 2_000;
  console.log(`${health.p99 <= STALL_BUDGET_MS ? 'PASS' : 'OVER'} health p99; ${fair ? 'PASS' : 'FAIL'} the other gallery's run started within one run's time (+ the 2 s the queue may take to notice)`);
  process.exitCode = fair ? 0 : 1;
} finally {
  if (service) await stop(service.child);
  await handle.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
