#!/usr/bin/env node
// Benchmark: the service against a bare node:http baseline measured in the same run (npm run bench).
// Options: --artworks N (catalog size, default 1000), --duration S (per scenario, default 10),
//          --connections C (default 50), --database-url URL (default: a fresh SQLite file),
//          --redis-url URL (the service under test shares its counters in Redis, as a scaled-out one does),
//          --growth (the same scenarios at 1,000 and 100,000 artworks and a 1,000,000-entry changelog),
//          --stall (then the stall scenario of bench/stall.mjs at 100,000 artworks and 1,000,000 entries),
//          --reads-only (only the reads table of bench/reads.mjs), --skip-reads (without it),
//          --batch-only (only the 10,000 artworks by batch, --rounds N times on one server; no reads, no baseline).
// Run apart: bench/abuse.mjs (one account's worst at once while another gallery reads; docs/performance.md, Abuse scenario).
// First the reads table (bench/reads.mjs): each read beside a bare server sending the same bytes.
// With a postgres:// URL the run also measures pgbench (bench/pgbench.mjs); GET by id on PostgreSQL against
// SQLite is the reads table's row (bench/reads.mjs, wrk when installed), so --skip-reads leaves it out.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { pgbenchRates, postgresRatios, printRatios } from './pgbench.mjs';
import { printReads, runReads } from './reads.mjs';
import { printStall, runStall } from './stall.mjs';
import { printHeavyAnswers, runHeavyAnswers } from './heavy-answers.mjs';
import {
  ROOT, analyze, artworkItem, backendCpuSeconds, benchTenant, currentRssMb, padChangelog, peakRssMb, seedArtworks, startProcess, startService, stop,
} from './lib.mjs';

const { values: options } = parseArgs({
  options: {
    artworks: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    'database-url': { type: 'string' },
    'redis-url': { type: 'string' },
    growth: { type: 'boolean', default: false },
    stall: { type: 'boolean', default: false },
    'reads-only': { type: 'boolean', default: false },
    'skip-reads': { type: 'boolean', default: false },
    'batch-only': { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
  },
});
const DURATION = Number(options.duration);
const CONNECTIONS = Number(options.connections);

// ---------- load ----------

function load(url, { title, requests, method = 'GET', path = '/', body, headers = {}, connections = CONNECTIONS, duration = DURATION, amount }) {
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url, connections, duration, amount, method, headers, body, title,
      ...(requests ? { requests } : { requests: [{ method, path, body, headers }] }),
    }, (error, result) => (error ? reject(error) : resolve(result)));
    instance.on('error', reject);
  });
}

const HAS_WRK = spawnSync('wrk', ['--version']).error === undefined;

/**
 * POSTs of `artworkItem` bodies with wrk (Debian's package) when installed: its Lua builds each body,
 * the same JSON as JSON.stringify(artworkItem(i, tag)), in C's time, so the load is off the two cores
 * the service and PostgreSQL share, as pgbench's own client is (autocannon, in this process, took
 * about a tenth of a core per 1,000 POSTs a second). `pick`: 'next' numbers works from 0 per wrk thread
 * (the tag names the thread: new works); 'random' picks one of `size` works of `tag` (re-posts).
 * Answers in autocannon's shape for `summary`.
 */
function wrkPosts(url, { headers, tag, pick, size, connections = CONNECTIONS, duration = DURATION }) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  const script = join(dir, 'posts.lua');
  const lines = [
    'wrk.method = "POST"',
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`),
    'local threads = 0',
    'function setup(thread) thread:set("index", threads); threads = threads + 1 end',
    'local n = 0',
    'local function body(i, tag)',
    '  return string.format(\'{"title":"Bench Study %s %d","artist_name":"Bench Artist %d","creation_year":%d,"medium":"Oil on canvas","dimensions":"60 x 80 cm","price":%d,"currency":"EUR","availability":"available"}\', tag, i, i % 500, 1900 + i % 120, 1000 + i)',
    'end',
    pick === 'next'
      ? `function request() n = n + 1; return wrk.format(nil, "/v1/artworks", nil, body(n - 1, ${JSON.stringify(tag)} .. "-t" .. index)) end`
      : `function request() return wrk.format(nil, "/v1/artworks", nil, body(math.random(0, ${size - 1}), ${JSON.stringify(tag)})) end`,
  ];
  writeFileSync(script, `${lines.join('\n')}\n`);
  const out = execFileSync('wrk', ['-t2', `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, url], { encoding: 'utf8' });
  rmSync(dir, { recursive: true, force: true });
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const total = Number(/(\d+) requests in/.exec(out)?.[1]);
  const ms = (percent) => {
    const [, value, unit] = new RegExp(`\\s${percent}%\\s+([\\d.]+)(us|ms|s)`).exec(out) ?? [];
    return value === undefined ? null : Number(value) * { us: 0.001, ms: 1, s: 1000 }[unit];
  };
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).reduce((sum, n) => sum + Number(n), 0) ?? 0;
  return {
    tool: 'wrk -t2', requests: { average: rps, total }, latency: { p50: ms(50), p99: ms(99) },
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0), errors, timeouts: 0,
  };
}

function summary(name, result, baseline) {
  const ok = result.requests.total - result.non2xx;
  return {
    scenario: name,
    rps: Math.round(result.requests.average),
    p50_ms: Math.round(result.latency.p50),
    p99_ms: Math.round(result.latency.p99),
    ratio: baseline ? Number((result.requests.average / baseline).toFixed(3)) : 1,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    ok,
    tool: result.tool ?? 'autocannon',
  };
}

// ---------- one run at one catalog size ----------

async function runAtSize(size, { databaseUrl, redisUrl, changelogEntries }) {
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-bench-'));
  const env = {
    DATABASE_URL: databaseUrl ?? `sqlite:${join(dir, 'bench.db')}`,
    // The scale-out setting (docs/deploy.md): rate-limit counters and idempotency locks in Redis.
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `bench-${process.pid}:` } : {}),
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PARTNER: '1000000000',
    PORT: '0',
  };
  const { entity, key } = benchTenant(env, 'Bench Gallery');
  // History first (older entries, lower ids), as a catalog that has been syncing for years would have it.
  if (changelogEntries > 0) padChangelog(env.DATABASE_URL, entity.id, changelogEntries);
  const server = startService(env);
  const url = await server.url;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };

  const seedStart = performance.now();
  await seedArtworks(url, auth, size, 'seed');
  const seedSeconds = (performance.now() - seedStart) / 1000;

  const tenThousandSeconds = await tenThousandByBatch(url, auth, `timed-${size}`);
  if (options['batch-only']) {
    // The same timed part again on the same server (a catalog 10,000 larger each round), and the
    // server's CPU over all rounds (utime + stime, /proc): steadier than the wall time on a shared machine;
    // on PostgreSQL also its database's backends' (the pool's connections; PostgreSQL on this machine).
    const database = env.DATABASE_URL.startsWith('postgres') ? new URL(env.DATABASE_URL).pathname.slice(1) : undefined;
    const cpuBefore = cpuSeconds(server.child.pid);
    const backendBefore = await backendCpuSeconds(env.DATABASE_URL, database);
    const seconds = [tenThousandSeconds];
    for (let round = 1; round < Number(options.rounds); round++) seconds.push(await tenThousandByBatch(url, auth, `timed-${size}-${round}`));
    const later = Math.max(1, seconds.length - 1);
    const cpu = (cpuSeconds(server.child.pid) - cpuBefore) / later;
    const backendCpu = database ? (await backendCpuSeconds(env.DATABASE_URL, database) - backendBefore) / later : null;
    await stop(server.child);
    rmSync(dir, { recursive: true, force: true });
    return { size, seedSeconds, batchRounds: seconds, serverCpuSecondsPerRound: seconds.length > 1 ? cpu : null, backendCpuSecondsPerRound: seconds.length > 1 ? backendCpu : null };
  }

  // A live PostgreSQL has planner statistics (autovacuum gathers them); a database filled a second ago
  // has none, and its plans would be a fresh database's, not a running service's.
  if (env.DATABASE_URL.startsWith('postgres')) analyze(env.DATABASE_URL);
  // The tenant's own ids, read page by page: PostgreSQL's ids have gaps (an insert that meets a conflict
  // still takes a sequence number), so 1..total would ask for records that do not exist and time 404s.
  const idList = [];
  for (let after = 0; ;) {
    const page = await (await fetch(`${url}/v1/artworks?limit=100&after=${after}`, { headers: auth })).json();
    idList.push(...page.artworks.map((artwork) => artwork.id));
    if (!page.has_more) break;
    after = page.next_after;
  }
  const ids = idList.length;
  const pages = Math.max(1, Math.floor(ids / 50));
  const random = (n) => 1 + Math.floor(Math.random() * n);
  let counter = 0;

  const scenarios = [
    ['GET /v1/artworks/:id', { requests: [{ method: 'GET', headers: auth, setupRequest: (r) => ({ ...r, path: `/v1/artworks/${idList[random(ids) - 1]}` }) }] }],
    ['GET /v1/artworks?limit=50', { requests: [{ method: 'GET', headers: auth, setupRequest: (r) => ({ ...r, path: `/v1/artworks?limit=50&page=${random(pages)}` }) }] }],
    ['POST /v1/artworks (new)', HAS_WRK ? { wrk: { tag: `new-${size}`, pick: 'next' } }
      : { requests: [{ method: 'POST', path: '/v1/artworks', headers: auth, setupRequest: (r) => ({ ...r, body: JSON.stringify(artworkItem(counter++, `new-${size}`)) }) }] }],
    ['POST /v1/artworks (re-post)', HAS_WRK ? { wrk: { tag: 'seed', pick: 'random', size } }
      : { requests: [{ method: 'POST', path: '/v1/artworks', headers: auth, setupRequest: (r) => ({ ...r, body: JSON.stringify(artworkItem(random(size) - 1, 'seed')) }) }] }],
    ['POST /v1/artworks/batch (100)', {
      connections: 10,
      requests: [{ method: 'POST', path: '/v1/artworks/batch', headers: auth, setupRequest: (r) => ({ ...r, body: JSON.stringify({ items: Array.from({ length: 100 }, () => artworkItem(counter++, `batch-${size}`)) }) }) }],
    }],
  ];

  const rows = [];
  const run = async (name, spec) => {
    const works = async () => (await (await fetch(`${url}/v1/artworks?limit=1`, { headers: auth })).json()).total;
    const before = spec.wrk && await works();
    const result = spec.wrk ? wrkPosts(url, { headers: auth, ...spec.wrk }) : await load(url, { title: name, ...spec });
    // wrk's Lua builds the bodies: re-posts that made works would mean they are not artworkItem's bytes.
    if (spec.wrk?.pick === 'random' && (await works()) !== before) throw new Error(`${name} created works: wrk's bodies are not artworkItem's`);
    rows.push({ name, result });
    process.stderr.write(`  ${name}: ${Math.round(result.requests.average)} req/s, server RSS now ${currentRssMb(server.child.pid).toFixed(0)} MB\n`);
  };
  for (const [name, spec] of scenarios) await run(name, spec);
  // A sync client polls with the time of its last sync: `since` = 100 entries before the newest.
  const { total: entries } = await (await fetch(`${url}/v1/changelog?limit=1`, { headers: auth })).json();
  const [mark] = (await (await fetch(`${url}/v1/changelog?limit=1&page=${Math.max(1, entries - 100)}`, { headers: auth })).json()).changes;
  await run('GET /v1/changelog?since=…', { path: `/v1/changelog?since=${encodeURIComponent(mark.created_at)}&limit=100`, headers: auth });
  const rss = peakRssMb(server.child.pid);
  await stop(server.child);
  rmSync(dir, { recursive: true, force: true });
  return { size, seedSeconds, tenThousandSeconds, rows, peakRssMb: rss, changelogEntries };
}

/**
 * The 10,000-artwork batch target: 100 requests of 100 new works, one after another. The bodies are
 * built beforehand (that is the client's work, not the server's); every answer is read and checked.
 */
async function tenThousandByBatch(url, auth, tag) {
  const bodies = Array.from({ length: 100 }, (_, b) =>
    JSON.stringify({ items: Array.from({ length: 100 }, (_, j) => artworkItem(b * 100 + j, tag)) }));
  const batchStart = performance.now();
  let created = 0;
  for (const body of bodies) {
    const response = await fetch(`${url}/v1/artworks/batch`, { method: 'POST', headers: auth, body });
    const { results } = await response.json();
    if (response.status !== 200) throw new Error(`batch failed: ${response.status}`);
    created += results.filter((r) => r.status === 201 && r.created).length;
  }
  if (created !== 10_000) throw new Error(`the timed batches created ${created} artworks, not 10,000`);
  return (performance.now() - batchStart) / 1000;
}

/** A process's CPU seconds so far (user + system, /proc/PID/stat, in clock ticks of 1/100 s). */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// ---------- baseline ----------

async function baseline(url, label) {
  const result = await load(url, { title: label, path: '/' });
  process.stderr.write(`  ${label}: ${Math.round(result.requests.average)} req/s\n`);
  return result;
}

// ---------- main ----------

if (options['batch-only']) {
  const run = await runAtSize(Number(options.artworks), { databaseUrl: options['database-url'], redisUrl: options['redis-url'], changelogEntries: 0 });
  const rounds = run.batchRounds.map((seconds) => seconds.toFixed(3)).join(' s, ');
  const backend = run.backendCpuSecondsPerRound == null ? '' : `, its PostgreSQL backends ${run.backendCpuSecondsPerRound.toFixed(2)} s`;
  const cpu = run.serverCpuSecondsPerRound === null ? '' : `; server CPU ${run.serverCpuSecondsPerRound.toFixed(2)} s per later round (user + system)${backend}`;
  console.log(`10,000 artworks by batch (${run.size} seeded first): ${rounds} s${cpu}`);
  process.exit(0);
}

let reads;
if (!options['skip-reads']) {
  // With a postgres:// URL this is also where GET by id on PostgreSQL (+ Redis with --redis-url) is
  // measured against SQLite (wrk when installed: the load off this process and the service's cores).
  reads = await runReads({
    duration: Math.max(2, Math.round(DURATION / 2)), connections: CONNECTIONS,
    postgresUrl: options['database-url']?.startsWith('postgres') ? options['database-url'] : undefined, redisUrl: options['redis-url'],
  });
  printReads(reads);
  if (options['reads-only']) {
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', 'reads.json'), `${JSON.stringify(reads, null, 2)}\n`);
    process.exit(0);
  }
}

const baselineServer = startProcess(process.execPath, [join(ROOT, 'bench', 'baseline.mjs')], {});
const baselineUrl = await baselineServer.url;
process.stderr.write('baseline (before)\n');
const before = await baseline(baselineUrl, 'node:http baseline (before)');

const sizes = options.growth ? [1000, 100_000] : [Number(options.artworks)];
const runs = [];
for (const size of sizes) {
  process.stderr.write(`service with ${size} artworks\n`);
  runs.push(await runAtSize(size, {
    databaseUrl: options['database-url'],
    redisUrl: options['redis-url'],
    changelogEntries: options.growth && size >= 100_000 ? 1_000_000 : 0,
    baselineUrl,
  }));
}
// PostgreSQL: its own limit (pgbench), same run. The read ratio to SQLite is the reads table's (one way of measuring it).
const postgresUrl = options['database-url']?.startsWith('postgres') ? options['database-url'] : undefined;
let postgres;
if (postgresUrl) {
  process.stderr.write('pgbench\n');
  postgres = { rates: await pgbenchRates(postgresUrl, { duration: DURATION }) };
}
process.stderr.write('baseline (after)\n');
const after = await baseline(baselineUrl, 'node:http baseline (after)');
await stop(baselineServer.child);

const baselineRps = (before.requests.average + after.requests.average) / 2;
const report = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, cpu: cpus()[0]?.model, memory_gb: Math.round(totalmem() / 2 ** 30), node: process.version },
  options: { duration_s: DURATION, connections: CONNECTIONS, database: options['database-url'] ? 'postgres' : 'sqlite', redis: Boolean(options['redis-url']) },
  baseline: { before_rps: Math.round(before.requests.average), after_rps: Math.round(after.requests.average), mean_rps: Math.round(baselineRps) },
  runs: runs.map((run) => runReport(run)),
};
if (reads) report.reads = reads;
if (postgres) report.postgres = postgresRatios(postgres.rates, report.runs[0], reads);

function runReport(run) {
  return {
    artworks: run.size,
    changelog_padding: run.changelogEntries,
    seed_seconds: Number(run.seedSeconds.toFixed(2)),
    batch_10000_seconds: Number(run.tenThousandSeconds.toFixed(3)),
    peak_rss_mb: Number(run.peakRssMb.toFixed(1)),
    scenarios: run.rows.map(({ name, result }) => summary(name, result, baselineRps)),
  };
}

// ---------- report ----------

const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);
console.log(`\nnode:http baseline: ${report.baseline.before_rps} req/s before, ${report.baseline.after_rps} after (mean ${report.baseline.mean_rps})`);
console.log(`machine: ${report.machine.cpus} × ${report.machine.cpu}, ${report.machine.memory_gb} GB, Node ${report.machine.node}; ${CONNECTIONS} connections, ${DURATION} s per scenario\n`);
const header = `${pad('scenario', 32)}${runs.map((r) => `${lpad(`${r.size} artworks: req/s`, 26)}${lpad('p50', 6)}${lpad('p99', 6)}${lpad('ratio', 7)}`).join('  ')}`;
console.log(header);
console.log('-'.repeat(header.length));
for (let i = 0; i < report.runs[0].scenarios.length; i++) {
  const name = report.runs[0].scenarios[i].scenario;
  console.log(`${pad(name, 32)}${report.runs.map((r) => {
    const s = r.scenarios[i];
    return `${lpad(s.rps, 26)}${lpad(s.p50_ms, 6)}${lpad(s.p99_ms, 6)}${lpad(s.ratio.toFixed(3), 7)}`;
  }).join('  ')}`);
}
console.log('');
for (const r of report.runs) {
  const failures = r.scenarios.filter((s) => s.non2xx > 0 || s.errors > 0);
  console.log(`${r.artworks} artworks: 10,000 artworks via batch in ${r.batch_10000_seconds} s; seeding ${r.seed_seconds} s; server peak RSS ${r.peak_rss_mb} MB${failures.length ? `; NON-2XX in ${failures.map((f) => f.scenario).join(', ')}` : ''}`);
}
if (report.runs.length === 2) {
  console.log('\nread throughput at the larger catalog relative to the smaller:');
  for (const i of [0, 1, 5]) {
    const small = report.runs[0].scenarios[i];
    const large = report.runs[1].scenarios[i];
    console.log(`  ${pad(small.scenario, 30)} ${(large.rps / small.rps).toFixed(3)}`);
  }
}

if (report.postgres) printRatios(report.postgres);
if (reads) printReads(reads);

if (options.stall) {
  report.stall = await runStall({ databaseUrl: options['database-url'] });
  printStall(report.stall);
  report.heavy_answers = await runHeavyAnswers({ databaseUrl: options['database-url'] });
  printHeavyAnswers(report.heavy_answers);
}

mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(join(ROOT, 'bench', 'results', 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
console.log('\nwritten to bench/results/latest.json');
