// `npm run bench:images`: the image pipeline end to end (docs/api.md, Images; issue #25), beside the bare
// sharp baseline (bench/images-bare.mjs) measured in the same run on the same photos.
//
// 1. Throughput: N distinct 12-megapixel JPEGs (made by bench/photos.mjs) are posted as artworks to a
//    real `art-catalog serve` (SQLite); the server fetches them from a local origin, queues, derives
//    and stores them. Images per CPU second of the server process (utime + stime from /proc) against
//    the bare script's images per CPU second: the ratio must be ≥ 0.8. Meanwhile the server's own
//    event-loop delay histogram (art_catalog_event_loop_delay_seconds) gives p99 and max (≤ 50 ms).
// 2. Bytes a 390 px phone (2× screen) downloads for a profile page of 20 artworks: the galleries'
//    originals before, the copies our srcset makes it choose after (goal ≤ 1/10).
// 3. A large import: IMPORT images (default 1,000) of IMPORT_MP megapixels through one server; its
//    peak RSS (VmHWM, goal ≤ 350 MB), event-loop delay, and the disk its store uses per 1,000 artworks.
//
// Usage: npm run bench:images [-- N=8 IMPORT=1000 IMPORT_MP=1]   (results in bench/results/images.json)
// Tracing the server: SERVE_NODE_OPTIONS="--import /abs/trace.mjs" BENCH_SERVER_LOG=server.log (see startServer).
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import sharp from 'sharp';
import { bareBaseline, benchPhotos } from './images-bare.mjs';
import { photoJpeg, variant } from './photos.mjs';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'art-catalog');
const args = Object.fromEntries(process.argv.slice(2).map((arg) => arg.split('=')));
const N = Number(args.N ?? 8);
const IMPORT = Number(args.IMPORT ?? 1000);
const IMPORT_MP = Number(args.IMPORT_MP ?? 1);
const CONCURRENCY = 2;

/** An origin for the gallery's images: path → bytes, on 127.0.0.1. */
async function startOrigin(files) {
  const server = createServer((request, response) => {
    const bytes = files.get(request.url);
    if (!bytes) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': bytes.length }).end(bytes);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${server.address().port}` };
}

/** A server process on a fresh SQLite database with one gallery and a partner key. */
async function startServer(dir) {
  const env = {
    ...process.env, DATABASE_URL: `sqlite:${join(dir, 'catalog.db')}`, IMAGE_STORE: `file:${join(dir, 'images')}`,
    IMAGE_FETCH_ALLOW_PRIVATE: 'true', IMAGE_CONCURRENCY: String(CONCURRENCY), RATE_LIMIT_PARTNER: '100000000', LOG_LEVEL: 'warn', PORT: '0',
  };
  const entity = JSON.parse(execFileSync(BIN, ['entity', 'create', '--type', 'gallery', '--name', 'Bench Gallery', '--json'], { env }).toString());
  const { key } = JSON.parse(execFileSync(BIN, ['key', 'create', '--entity', String(entity.id), '--tier', 'partner', '--json'], { env }).toString());
  // SERVE_NODE_OPTIONS reaches the server alone (not the CLI calls above, whose JSON is read), and
  // BENCH_SERVER_LOG=FILE keeps what it prints: e.g. a preloaded module that turns on --trace-gc.
  const serveEnv = process.env.SERVE_NODE_OPTIONS ? { ...env, NODE_OPTIONS: process.env.SERVE_NODE_OPTIONS } : env;
  const child = spawn(BIN, ['serve'], { env: serveEnv });
  if (process.env.BENCH_SERVER_LOG) child.stdout.on('data', (chunk) => appendFileSync(process.env.BENCH_SERVER_LOG, chunk));
  const url = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code})`)));
  });
  const call = async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body && JSON.stringify(body),
    });
    return response.headers.get('content-type')?.includes('json') ? response.json() : response.text();
  };
  return { child, url, call, slug: entity.slug, dir };
}

const clockTicks = 100;
/** CPU seconds the process has used (user + system), from /proc. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}
const statusKb = (pid, field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

/** The server's event-loop delay histogram: cumulative bucket counts. */
async function loopHistogram(server) {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const buckets = [...text.matchAll(/^art_catalog_event_loop_delay_seconds_bucket\{le="([^"]+)"\} (\d+)/gm)].map((m) => [m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2])]);
  const max = Number(/^art_catalog_event_loop_delay_max_seconds (\S+)/m.exec(text)?.[1] ?? 0);
  return { buckets, max };
}
/**
 * The bench's own event-loop delay while it only waits: on a shared machine a timer also fires late
 * when the process is not scheduled at all. This baseline tells such delays from a blocked loop.
 */
function idleLoop() {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return () => {
    histogram.disable();
    return { p99_ms: Math.round(histogram.percentile(99) / 1e6), max_ms: Math.round(histogram.max / 1e6) };
  };
}

/** p99 and the largest bucket reached between two scrapes, in ms (bucket upper bounds). */
function loopDelay(before, after) {
  const counts = after.buckets.map(([le, n], i) => [le, n - before.buckets[i][1]]);
  const total = counts.at(-1)[1];
  const p99 = counts.find(([, n]) => n >= total * 0.99)[0];
  const worst = counts.find(([, n]) => n === total)[0];
  return { samples: total, p99_ms_at_most: p99 * 1000, max_ms_at_most: worst * 1000, max_since_start_ms: Math.round(after.max * 1000) };
}

async function importAll(server, urls) {
  for (let i = 0; i < urls.length; i += 100) {
    const items = urls.slice(i, i + 100).map((image_url, j) => ({ title: `Bench Work ${i + j}`, image_url }));
    const answer = await server.call('POST', '/v1/artworks/batch', { items });
    if (!answer.results) throw new Error(`batch failed: ${JSON.stringify(answer)}`);
  }
  for (;;) {
    const { images } = await server.call('GET', '/v1/sync/status');
    if (images.pending === 0) return images;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function folderBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).size;
  return total;
}

async function stop(server) {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
}

const results = { machine: 'shared: 8 engineers on 2 cores; ratios are against a baseline measured in the same run', n: N, concurrency: CONCURRENCY };

// 1. Throughput against the bare baseline, same photos.
const photos = benchPhotos(N);
const bare = await bareBaseline(photos, { concurrency: CONCURRENCY });
results.bare = bare;
{
  const files = new Map(photos.map((bytes, i) => [`/photo-${i}.jpg`, variant(bytes, 1000 + i)]));
  const origin = await startOrigin(files);
  const server = await startServer(mkdtempSync(join(tmpdir(), 'art-catalog-bench-images-')));
  const loopBefore = await loopHistogram(server);
  const idle = idleLoop();
  const cpuBefore = cpuSeconds(server.child.pid);
  const start = performance.now();
  const images = await importAll(server, [...files.keys()].map((path) => origin.base + path));
  const wall = (performance.now() - start) / 1000;
  const cpu = cpuSeconds(server.child.pid) - cpuBefore;
  results.pipeline = {
    images, wallSeconds: wall, cpuSeconds: cpu, imagesPerSecond: N / wall, imagesPerCoreSecond: N / cpu,
    ratioToBare: (N / cpu) / bare.imagesPerCoreSecond, eventLoop: loopDelay(loopBefore, await loopHistogram(server)),
    idleProcessLoopMeanwhile: idle(),
  };

  // 2. What a 390 px phone (2× screen) loads for a profile of 20 artworks: the browser picks the first
  //    srcset width ≥ 390 × 2 (the card is 100vw there) in the first format it supports (AVIF).
  const artworks = (await server.call('GET', '/v1/artworks?limit=20')).artworks;
  let before = 0;
  let after = 0;
  for (let i = 0; i < 20; i++) {
    const artwork = artworks[i % artworks.length];
    before += files.get(new URL(artwork.image_url).pathname).length;
    const candidates = artwork.image.srcset.avif.split(', ').map((entry) => entry.split(' ')).map(([url, w]) => ({ url, width: parseInt(w, 10) }));
    const chosen = candidates.find((c) => c.width >= 780) ?? candidates.at(-1);
    after += Number((await fetch(chosen.url.replace(/^https?:\/\/[^/]+/, server.url), { method: 'HEAD' })).headers.get('content-length'));
  }
  results.phone390 = { artworks: 20, originalsBytes: before, ourCopiesBytes: after, ratio: after / before };
  await stop(server);
  origin.server.close();
  rmSync(server.dir, { recursive: true, force: true });
}

// 3. A large import: peak RSS, event-loop delay and disk per 1,000 artworks.
{
  const width = Math.round(Math.sqrt(IMPORT_MP * 1e6 * 4 / 3));
  const base = await photoJpeg(7, { width, height: Math.round(width * 3 / 4) });
  const files = new Map(Array.from({ length: IMPORT }, (_, i) => [`/import-${i}.jpg`, variant(base, 50_000 + i)]));
  const origin = await startOrigin(files);
  const server = await startServer(mkdtempSync(join(tmpdir(), 'art-catalog-bench-import-')));
  const rssStart = statusKb(server.child.pid, 'VmRSS') / 1024;
  const loopBefore = await loopHistogram(server);
  const idle = idleLoop();
  const start = performance.now();
  const images = await importAll(server, [...files.keys()].map((path) => origin.base + path));
  const wall = (performance.now() - start) / 1000;
  const idleLoopMeanwhile = idle();
  const meta = await sharp(base).metadata();
  const storeBytes = folderBytes(join(server.dir, 'images'));
  results.import = {
    images, originalMegapixels: (meta.width * meta.height) / 1e6, originalBytes: base.length, wallSeconds: wall,
    rssAtStartMb: rssStart, peakRssMb: statusKb(server.child.pid, 'VmHWM') / 1024,
    eventLoop: loopDelay(loopBefore, await loopHistogram(server)), idleProcessLoopMeanwhile: idleLoopMeanwhile,
    storeBytes, storeMbPer1000: (storeBytes / IMPORT) * 1000 / 1024 / 1024,
    databaseMb: statSync(join(server.dir, 'catalog.db')).size / 1024 / 1024,
  };
  await stop(server);
  origin.server.close();
  rmSync(server.dir, { recursive: true, force: true });
}

console.log(JSON.stringify(results, null, 2));
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results', 'images.json'), `${JSON.stringify(results, null, 2)}\n`);
const verdicts = [
  [`pipeline ${results.pipeline.ratioToBare.toFixed(2)} × bare images per core-second (goal ≥ 0.8)`, results.pipeline.ratioToBare >= 0.8],
  [`event loop during the pipeline: p99 ≤ ${results.pipeline.eventLoop.p99_ms_at_most} ms, max ≤ ${results.pipeline.eventLoop.max_ms_at_most} ms (goal ≤ 50)`, results.pipeline.eventLoop.max_ms_at_most <= 50],
  [`phone at 390 px: ${(results.phone390.ratio * 100).toFixed(1)} % of the originals' bytes (goal ≤ 10 %)`, results.phone390.ratio <= 0.1],
  [`import of ${IMPORT}: peak RSS ${results.import.peakRssMb.toFixed(0)} MB (goal ≤ 350)`, results.import.peakRssMb <= 350],
];
for (const [text, ok] of verdicts) console.log(`${ok ? 'ok  ' : 'MISS'} ${text}`);
