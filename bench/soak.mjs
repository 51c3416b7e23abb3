#!/usr/bin/env node
// The soak (issue #48; docs/performance.md, Soak): mixed work for `--minutes` (default 30) against a real
// `serve`, on SQLite (one process) and on PostgreSQL + Redis (`--processes`, default 2), while every
// second each server's RSS (/proc) and event-loop delay (its /metrics: the worst delay so far and the
// histogram's worst bucket of that second) are sampled. The work, open loop, per second:
//   - reads: 30 (by id, a list page of 50, a changelog page of 100 by cursor, 10 each)
//   - writes: 8 new artworks and 2 re-posts of earlier ones (a changed price: an update)
//   - deliveries: one webhook endpoint (a local node:http server) subscribed to artwork.created and
//     artwork.updated, so every write is a message
//   - feeds: one feed of 200 rows from a local server, its file changed and a run asked every 65 s
//   - images: every 10 s a new artwork whose image_url is a distinct 2,000 × 1,500 photo
// Goals: RSS at the end ≤ 1.1 × RSS at 5 minutes (each the median of that minute's samples); worst event-loop delay ≤ 50 ms. Built code (npm run build first).
//
//   node bench/soak.mjs [--minutes 30] [--only sqlite|postgres] [--processes 2]
//                       [--postgres-url postgres://postgres@127.0.0.1:5432/postgres] [--redis-url redis://127.0.0.1:6379]
// Writes bench/results/soak-<dialect>.json (every sample) and prints one summary line per dialect.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROOT, benchTenant, currentRssMb, startService, stop } from './lib.mjs';
import { call, round, sleep } from './probe.mjs';
import { photoJpeg, variant } from './photos.mjs';

const { values: options } = parseArgs({
  options: {
    minutes: { type: 'string', default: '30' }, only: { type: 'string' }, processes: { type: 'string', default: '2' },
    'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'redis-url': { type: 'string', default: 'redis://127.0.0.1:6379' },
  },
});
const SECONDS = Math.round(Number(options.minutes) * 60);
const RSS_BASE_S = Math.min(300, Math.floor(SECONDS / 2));
const READS = 30;
const NEW_POSTS = 8;
const RE_POSTS = 2;
const FEED_EVERY_S = 65;
const IMAGE_EVERY_S = 10;
const FEED_ROWS = 200;

/** The local origins: the feed's file, the photos, and the webhook receiver. */
async function startOrigins() {
  const photos = await Promise.all([1, 2, 3, 4].map((seed) => photoJpeg(seed, { width: 2000, height: 1500 })));
  let feedVersion = 0;
  let messages = 0;
  const server = http.createServer((request, response) => {
    const url = request.url ?? '';
    if (url.startsWith('/photo/')) {
      const n = Number(url.slice(7).replace('.jpg', ''));
      const bytes = variant(photos[n % photos.length], n);
      return response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': bytes.length }).end(bytes);
    }
    if (url === '/feed.csv') {
      const rows = Array.from({ length: FEED_ROWS }, (_, i) => `soak-${i},Feed Study ${i},Feed Artist ${i % 20},${1950 + (i % 70)},${1000 + i + (i % 10 === 0 ? feedVersion : 0)},EUR,available`);
      return response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' })
        .end(['external_id,title,artist_name,creation_year,price,currency,availability', ...rows].join('\n'));
    }
    if (url === '/hook') {
      request.resume();
      request.on('end', () => { messages += 1; response.writeHead(200).end('ok'); });
      return undefined;
    }
    response.writeHead(404).end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${server.address().port}`;
  return {
    base, messages: () => messages, nextFeed: () => { feedVersion += 1; },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** Reads the worst delay so far (the gauge) from a server's /metrics, with the histogram's buckets. */
async function sampleLoop(url) {
  const metrics = (await call(`${url}/metrics`, { keepBody: true })).body;
  const worst = Number(/^art_catalog_event_loop_delay_max_seconds (\S+)/m.exec(metrics)?.[1] ?? NaN) * 1000;
  const buckets = [...metrics.matchAll(/^art_catalog_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)]
    .map(([, le, n]) => ({ le: le === '+Inf' ? Infinity : Number(le) * 1000, n: Number(n) }));
  return { worst, buckets };
}

/** The bucket the worst delay between two readings fell in: its upper bound in ms (5 for "≤ 5 ms"). */
function worstBucket(before, after) {
  let worst = 5;
  for (let i = 1; i < after.length; i++) if (after[i].n - before[i].n > after[i - 1].n - before[i - 1].n) worst = after[i].le;
  return worst;
}

async function scenario(name, env, processes) {
  const origins = await startOrigins();
  const services = [];
  for (let i = 0; i < processes; i++) {
    const service = startService({ ...env, LOG_LEVEL: 'warn', PORT: '0', RATE_LIMIT_PARTNER: '1000000000', FETCH_ALLOW_PRIVATE: 'true', IMAGE_FETCH_ALLOW_PRIVATE: 'true' });
    services.push({ ...service, url: await service.url });
  }
  const { key } = benchTenant(env, `Soak ${name}`);
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const target = (i) => services[i % services.length].url;
  const post = (i, path, body) => call(`${target(i)}${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body), keepBody: true });
  const hook = await post(0, '/v1/webhooks', { url: `${origins.base}/hook`, events: ['artwork.created', 'artwork.updated'] });
  if (hook.status !== 201) throw new Error(`webhook endpoint: ${hook.status} ${hook.body}`);
  const feed = await post(0, '/v1/feeds', { url: `${origins.base}/feed.csv`, kind: 'artworks', mode: 'merge', interval_minutes: 1440 });
  if (feed.status !== 201) throw new Error(`feed: ${feed.status} ${feed.body}`);
  const feedId = JSON.parse(feed.body).id;
  for (const service of services) await call(`${service.url}/healthz`);

  const ids = [];
  let cursor = 0;
  const statuses = {};
  const count = (status) => { statuses[status] = (statuses[status] ?? 0) + 1; };
  const inFlight = new Set();
  const fire = (promise) => {
    const tracked = promise.then((r) => count(r.status), () => count('error')).finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };
  const samples = [];
  let previous = await Promise.all(services.map((s) => sampleLoop(s.url)));
  let n = 0;
  const started = performance.now();
  for (let second = 0; second < SECONDS; second++) {
    const due = started + second * 1000;
    if (due > performance.now()) await sleep(due - performance.now());
    // Spread the second's work over it: one tick per 10 ms slot.
    const work = [];
    for (let r = 0; r < READS; r++) {
      work.push(() => {
        const i = n++;
        const which = r % 3;
        const path = which === 0 && ids.length > 0 ? `/v1/artworks/${ids[i % ids.length]}`
          : which === 1 ? `/v1/artworks?limit=50&page=${1 + (i % 5)}` : `/v1/changelog?after=${cursor}&limit=100`;
        fire(call(`${target(i)}${path}`, { headers: auth }));
      });
    }
    for (let w = 0; w < NEW_POSTS; w++) {
      work.push(() => {
        const i = n++;
        fire(post(i, '/v1/artworks', { title: `Soak Study ${name} ${i}`, artist_name: `Soak Artist ${i % 300}`, creation_year: 1900 + (i % 120), price: 1000 + i }).then((r) => {
          if (r.status === 201) ids.push(JSON.parse(r.body).id);
          if (ids.length > 20_000) ids.splice(0, 10_000);
          return r;
        }));
      });
    }
    for (let w = 0; w < RE_POSTS; w++) {
      work.push(() => {
        const i = n++;
        const earlier = Math.max(0, i - 500);
        fire(post(i, '/v1/artworks', { title: `Soak Study ${name} ${earlier}`, artist_name: `Soak Artist ${earlier % 300}`, creation_year: 1900 + (earlier % 120), price: 2000 + i }));
      });
    }
    if (second % IMAGE_EVERY_S === 0) {
      work.push(() => {
        const i = n++;
        fire(post(i, '/v1/artworks', { title: `Soak Photo ${name} ${i}`, artist_name: 'Soak Photographer', image_url: `${origins.base}/photo/${i}.jpg` }));
      });
    }
    if (second > 0 && second % FEED_EVERY_S === 0) {
      work.push(() => {
        origins.nextFeed();
        fire(post(second, `/v1/feeds/${feedId}/runs`, {}));
      });
    }
    if (second % 10 === 0 && ids.length > 1000) cursor = Math.max(0, ids.length - 1000);
    const slot = 1000 / work.length;
    for (let w = 0; w < work.length; w++) {
      const at = due + w * slot;
      if (at > performance.now()) await sleep(at - performance.now());
      work[w]();
    }
    const loops = await Promise.all(services.map((s) => sampleLoop(s.url).catch(() => undefined)));
    samples.push({
      s: second + 1,
      rss_mb: services.map((s) => round(currentRssMb(s.child.pid))),
      loop_worst_ms: loops.map((l) => round(l?.worst ?? NaN)),
      loop_bucket_ms: loops.map((l, i) => (l && previous[i] ? worstBucket(previous[i].buckets, l.buckets) : NaN)),
      in_flight: inFlight.size,
      load: round(loadavg()[0]),
    });
    previous = loops.map((l, i) => l ?? previous[i]);
    if ((second + 1) % 60 === 0) process.stderr.write(`  ${name} ${(second + 1) / 60} min: RSS ${samples.at(-1).rss_mb.join(' / ')} MB, worst loop ${samples.at(-1).loop_worst_ms.join(' / ')} ms, in flight ${inFlight.size}, load ${samples.at(-1).load}\n`);
  }
  await Promise.all(inFlight);
  // RSS moves by tens of MB from one second to the next (collections, libvips' buffers): each end of the
  // comparison is the median of a minute's samples, the minute before RSS_BASE_S and the last one.
  const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const minuteOf = (last) => services.map((_, i) => median(samples.filter((x) => x.s > last - 60 && x.s <= last).map((x) => x.rss_mb[i])));
  const base = minuteOf(RSS_BASE_S);
  const end = minuteOf(samples.length);
  const summary = {
    scenario: name, processes, minutes: SECONDS / 60, requests: statuses, messages_arrived: origins.messages(),
    rss_mb_at_s: RSS_BASE_S, rss_mb_base: base, rss_mb_end: end, rss_mb_peak: services.map((_, i) => Math.max(...samples.map((x) => x.rss_mb[i]))),
    rss_end_over_base: end.map((mb, i) => Math.round((mb / base[i]) * 100) / 100),
    rss_goal_met: end.every((mb, i) => mb <= 1.1 * base[i]),
    loop_worst_ms: samples.at(-1).loop_worst_ms,
    seconds_with_delay_over_50ms: samples.filter((x) => x.loop_bucket_ms.some((b) => b > 50)).length,
    loop_goal_met: samples.at(-1).loop_worst_ms.every((ms) => ms <= 50),
    rss_mb_each_minute: samples.filter((x) => x.s % 60 === 0).map((x) => x.rss_mb),
    load_1min: [samples[0].load, samples.at(-1).load],
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `soak-${name}.json`), JSON.stringify({ summary, samples }));
  for (const service of services) await stop(service.child);
  await origins.close();
  return summary;
}

if (options.only !== 'postgres') {
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  try {
    console.log(JSON.stringify(await scenario('sqlite', { DATABASE_URL: `sqlite:${join(dir, 'soak.db')}`, IMAGE_STORE: `file:${join(dir, 'images')}` }, 1)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if (options.only !== 'sqlite') {
  const admin = new pg.Client({ connectionString: options['postgres-url'] });
  await admin.connect();
  const name = `bench_soak_${process.pid}`;
  await admin.query(`create database ${name}`);
  const dir = mkdtempSync(join(tmpdir(), 'soak-'));
  try {
    const url = new URL(options['postgres-url']);
    url.pathname = `/${name}`;
    const env = { DATABASE_URL: url.toString(), REDIS_URL: options['redis-url'], REDIS_KEY_PREFIX: `soak:${randomUUID()}:`, IMAGE_STORE: `file:${join(dir, 'images')}` };
    console.log(JSON.stringify(await scenario('postgres', env, Number(options.processes))));
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}
