// The server's memory part by part (issue #27): RSS, its peak, and where it lives after each phase of
// the reads bench's workload — idle, after seeding 1,000 artworks, then each read under load (by id,
// a list page, a changelog page, a 304, brotli), twice. Parts: anonymous and file-backed RSS (the
// latter mostly the node binary's pages), glibc's main arena (`[heap]`: what the main thread mallocs),
// the other anonymous mappings (V8's heap, the other threads' arenas, stacks), and V8's own view from
// /metrics (heap committed/used, new and old space, Buffers outside the heap), and how many event-loop
// delays so far were over 25 and over 50 ms (what a flag that saves memory may cost).
//
//   node bench/memory.mjs [--seconds 4] [--rounds 2] [--node-flags="--max-semi-space-size=4 …"]
//
// Without --node-flags the server starts as `npm start` starts it (bin/art-catalog, its V8 flags and
// malloc settings); with it, node runs bin/art-catalog.js with those flags instead, under the same
// malloc settings, so one flag can be compared with the launcher's in two runs of this script.
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { load } from './reads.mjs';
import { BIN, ROOT, benchTenant, seedArtworks, startProcess, stop } from './lib.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '4' }, rounds: { type: 'string', default: '2' }, 'node-flags': { type: 'string' } } });
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

const mb = (kb) => Math.round(kb / 1024);

/** RSS parts of a process from /proc: status for the totals, smaps for the main arena and the other anonymous maps. */
function rssParts(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN);
  const byMapping = new Map();
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) { name = header[1] || 'anonymous'; continue; }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) byMapping.set(name, (byMapping.get(name) ?? 0) + Number(rss[1]));
  }
  return {
    rss: mb(field('VmRSS')), peak: mb(field('VmHWM')), anon: mb(field('RssAnon')), file: mb(field('RssFile')),
    mainArena: mb(byMapping.get('[heap]') ?? 0), otherAnon: mb(byMapping.get('anonymous') ?? 0),
  };
}

/** V8's view, from the service's own /metrics. */
async function heapParts(url) {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (pattern) => Math.round(Number(pattern.exec(text)?.[1] ?? NaN) / 2 ** 20);
  return {
    heap: value(/nodejs_heap_size_total_bytes (\d+)/), heapUsed: value(/nodejs_heap_size_used_bytes (\d+)/),
    newSpace: value(/heap_space_size_total_bytes\{space="new"\} (\d+)/), oldSpace: value(/heap_space_size_total_bytes\{space="old"\} (\d+)/),
    external: value(/nodejs_external_memory_bytes (\d+)/),
    // What a flag that saves memory may cost: event-loop delays over 25 and over 50 ms so far (the
    // server's own histogram; the start-up's module loading is in it once, the same in every run).
    late25: Number(/delay_seconds_count (\d+)/.exec(text)?.[1]) - Number(/delay_seconds_bucket\{le="0.025"\} (\d+)/.exec(text)?.[1]),
    late50: Number(/delay_seconds_count (\d+)/.exec(text)?.[1]) - Number(/delay_seconds_bucket\{le="0.05"\} (\d+)/.exec(text)?.[1]),
  };
}

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-memory-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'memory.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0' };
const { key } = benchTenant(env, 'Memory Gallery');
const flags = values['node-flags']?.split(/\s+/).filter(Boolean);
// The launcher's malloc settings apply either way (bin/art-catalog sets them unless set).
const server = flags
  ? startProcess(join(ROOT, 'node_modules', '.bin', 'node'), [...flags, join(ROOT, 'bin', 'art-catalog.js'), 'serve'],
    { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '1048576', ...env })
  : startProcess(BIN, ['serve'], env);
const rows = [];
try {
  const url = await server.url;
  const pid = server.child.pid;
  const record = async (phase) => rows.push({ phase, ...rssParts(pid), ...await heapParts(url) });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await record('idle');
  const auth = { authorization: `Bearer ${key}` };
  await seedArtworks(url, { ...auth, 'content-type': 'application/json' }, 1000, 'memory');
  await record('seeded 1,000 artworks');
  const page = await fetch(`${url}/v1/artworks?limit=50&page=3`, { headers: auth });
  const { artworks: [{ id: firstId }] } = await (await fetch(`${url}/v1/artworks?limit=1`, { headers: auth })).json();
  const reads = [
    ['by id', { prefix: '/v1/artworks/', max: firstId + 999 }, {}],
    ['list of 50', '/v1/artworks?limit=50&page=3', {}],
    ['changelog 100', '/v1/changelog?after=0&limit=100', {}],
    ['304', '/v1/artworks?limit=50&page=3', { 'If-None-Match': page.headers.get('etag') }],
    ['changelog 100, brotli', '/v1/changelog?after=0&limit=100', { 'Accept-Encoding': 'br' }],
  ];
  for (let round = 1; round <= rounds; round++) {
    for (const [name, path, headers] of reads) {
      await load(url, { path, headers: { Authorization: auth.authorization, ...headers }, duration: seconds, connections: 50 });
      await record(`${name}${rounds > 1 ? ` (round ${round})` : ''}`);
    }
  }
} finally {
  await stop(server.child);
  rmSync(dir, { recursive: true, force: true });
}

console.log(`\nserver memory, MB (${flags ? `node ${flags.join(' ')}` : 'as npm start runs it'}; wrk or autocannon, 50 connections, ${seconds} s a read)`);
const columns = ['phase', 'rss', 'peak', 'anon', 'file', 'mainArena', 'otherAnon', 'heap', 'heapUsed', 'newSpace', 'oldSpace', 'external', 'late25', 'late50'];
console.log(columns.map((c, i) => (i === 0 ? c.padEnd(30) : c.padStart(10))).join(''));
for (const row of rows) console.log(columns.map((c, i) => (i === 0 ? String(row[c]).padEnd(30) : String(row[c]).padStart(10))).join(''));
console.log(JSON.stringify({ flags: flags ?? null, seconds, rows }));
