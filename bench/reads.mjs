// Reads at the cost of their bytes (issue #27): each read of the service beside a bare node:http
// server sending the very same bytes (bench/bare-bytes.mjs), in the same run, with wrk (Debian's
// package; autocannon when wrk is missing). Rows: GET by id, a list page of 50, a changelog page of
// 100 — steady state (answers reused while nothing changes) and cold (ANSWER_CACHE_MB=0: what the
// first read after a write costs, nothing reused) — a 304, and a brotli-compressed changelog page;
// the same reads on PostgreSQL as a fraction of the SQLite service. Run by bench/run.mjs, or alone:
//   node bench/reads.mjs [--duration S] [--connections C] [--rounds N] [--postgres URL [--redis URL]] [--rows TEXT]
// --redis: the PostgreSQL service uses Redis for its rate limits (the scale set-up), and GET by id is
// also measured with RATE_LIMIT_LEASE=1 (every request asks Redis: the counting before leases).
// --rows measures only the rows whose name contains TEXT (e.g. --rows 304), without the cold phases
// (and on PostgreSQL only the same rows, and with --redis RATE_LIMIT_LEASE=1 only when the row is GET by
// id): a quick before/after of one read. Each line on stderr gives the server's CPU per request, user and
// system: the service's main thread is what limits it (wrk takes ~20 % of a core); on PostgreSQL also
// the CPU per request of the service's PostgreSQL backends and of the Redis server (Redis's counts every
// client of that server, so another program's commands on it count too).
// --profile DIR writes a CPU profile of each of the service's loads there, SQLite and PostgreSQL
// (bench/profile-hook.mjs).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { ROOT, benchTenant, cpuSplit, currentRssMb, peakRssMb, seedArtworks, startProcess, startService, stop } from './lib.mjs';

const ARTWORKS = 1000;
const LIST = '/v1/artworks?limit=50&page=3';
const CHANGELOG = '/v1/changelog?after=0&limit=100';
const HAS_WRK = spawnSync('wrk', ['--version']).error === undefined;

/** One answer exactly as the service sent it: status, headers (as sent, minus the per-connection ones), body. */
export function capture(url, headers) {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (response) => {
      const chunks = [];
      response.on('data', (chunk) => chunks.push(chunk));
      response.on('end', () => {
        const kept = {};
        for (let i = 0; i < response.rawHeaders.length; i += 2) {
          const name = response.rawHeaders[i];
          if (!/^(date|connection|keep-alive|transfer-encoding)$/i.test(name)) kept[name] = response.rawHeaders[i + 1];
        }
        const body = Buffer.concat(chunks);
        if (kept['transfer-encoding'] === undefined && !Object.keys(kept).some((h) => /^content-length$/i.test(h)) && response.statusCode !== 304) {
          kept['content-length'] = String(body.length);
        }
        resolve({ status: response.statusCode, headers: kept, body });
      });
    }).on('error', reject).end();
  });
}

/** Requests per second (and requests in all) of one load: `path` may be a function of a random number (GET by id). */
export async function load(base, { path, headers, duration, connections }) {
  if (HAS_WRK) {
    const dir = mkdtempSync(join(tmpdir(), 'reads-wrk-'));
    const script = join(dir, 'script.lua');
    const lines = Object.entries(headers).map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
    const target = typeof path === 'string' ? JSON.stringify(path) : `${JSON.stringify(path.prefix)} .. math.random(1, ${path.max})`;
    lines.push(`request = function() return wrk.format("GET", ${target}) end`);
    writeFileSync(script, `${lines.join('\n')}\n`);
    const out = execFileSync('wrk', ['-t2', `-c${connections}`, `-d${duration}s`, '-s', script, base], { encoding: 'utf8' });
    rmSync(dir, { recursive: true, force: true });
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
    const bad = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
    return { rps, bad, requests };
  }
  const result = await new Promise((resolve, reject) => {
    autocannon({
      url: base, connections, duration,
      requests: [{ method: 'GET', headers, setupRequest: (r) => ({ ...r, path: typeof path === 'string' ? path : `${path.prefix}${1 + Math.floor(Math.random() * path.max)}` }) }],
    }, (error, r) => (error ? reject(error) : resolve(r)));
  });
  return { rps: result.requests.average, bad: result.non2xx - (result['3xx'] ?? 0), requests: result.requests.total };
}

/** CPU seconds of a process so far; 0 once it has ended (a backend whose connection the pool closed). */
function cpuSecondsIfAlive(pid) {
  try {
    const { user, system } = cpuSplit(pid);
    return user + system;
  } catch {
    return 0;
  }
}

/** The Redis server's own process id (INFO server), to read its CPU time. */
async function redisProcessId(url) {
  const redis = new Redis(url);
  const info = await redis.info('server');
  redis.disconnect();
  return Number(/process_id:(\d+)/.exec(info)?.[1]);
}

async function postgresDatabase(adminUrl) {
  const name = `art_catalog_reads_${process.pid}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    /** The process ids of the backends serving this database's clients (the service's pool). */
    async backends() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      const { rows } = await c.query("select pid from pg_stat_activity where datname = $1 and backend_type = 'client backend'", [name]);
      await c.end();
      return rows.map((row) => row.pid);
    },
    async drop() {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

/** A service with a 1,000-artwork catalog (and 1,500 changelog entries: artworks and their artists). */
async function catalog(databaseUrl, extraEnv = {}) {
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0', ...extraEnv };
  const { key } = benchTenant(env, 'Reads Gallery');
  const server = startService(env);
  const url = await server.url;
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  await seedArtworks(url, auth, ARTWORKS, 'reads');
  const { artworks: [{ id: firstId }] } = await (await fetch(`${url}/v1/artworks?limit=1`, { headers: auth })).json();
  return { env, key, server, url, firstId };
}

async function answersOf(url, key, firstId) {
  const auth = { authorization: `Bearer ${key}` };
  const byId = await capture(`${url}/v1/artworks/${firstId + 500}`, auth);
  const list = await capture(`${url}${LIST}`, auth);
  const changelog = await capture(`${url}${CHANGELOG}`, auth);
  const notModified = await capture(`${url}${LIST}`, { ...auth, 'if-none-match': list.headers.etag ?? list.headers.ETag });
  // The compressed copy is made after the first compressed answer; the bench reads the kept one.
  await capture(`${url}${CHANGELOG}`, { ...auth, 'accept-encoding': 'br' });
  await new Promise((resolve) => setTimeout(resolve, 200));
  const compressed = await capture(`${url}${CHANGELOG}`, { ...auth, 'accept-encoding': 'br' });
  return { byId, list, changelog, notModified, compressed };
}

export async function runReads({ duration = 5, connections = 50, rounds = 1, postgresUrl, redisUrl, rows: only, profile } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-reads-'));
  const sqliteUrl = `sqlite:${join(dir, 'reads.db')}`;
  process.stderr.write(`reads: seeding ${ARTWORKS} artworks on SQLite (${HAS_WRK ? 'wrk' : 'autocannon'})\n`);
  const profileEnv = profile === undefined ? {} : { BENCH_PROFILE_DIR: profile, NODE_OPTIONS: `--import ${join(ROOT, 'bench', 'profile-hook.mjs')}` };
  const sqlite = await catalog(sqliteUrl, profileEnv);
  const answers = await answersOf(sqlite.url, sqlite.key, sqlite.firstId);
  const answersFile = join(dir, 'answers.json');
  writeFileSync(answersFile, JSON.stringify(Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, { ...a, body: a.body.toString('base64') }]))));
  const bare = startProcess(process.execPath, [join(ROOT, 'bench', 'bare-bytes.mjs'), answersFile], {});
  const bareUrl = await bare.url;
  // The server's CPU per request (all its threads) beside the rate: where a ratio's gap is, server or load generator.
  const pidOf = new Map();
  pidOf.set(bareUrl, bare.child.pid).set(sqlite.url, sqlite.server.child.pid);
  // The processes that serve a service beside it (PostgreSQL's backends, Redis), by the service's base URL.
  const helpersOf = new Map();

  const auth = { Authorization: `Bearer ${sqlite.key}` };
  const allReads = [
    { name: 'GET /v1/artworks/:id', answer: 'byId', path: { prefix: '/v1/artworks/', max: ARTWORKS }, headers: {} },
    { name: 'GET /v1/artworks?limit=50&page=3', answer: 'list', path: LIST, headers: {} },
    { name: 'GET /v1/changelog?after=0&limit=100', answer: 'changelog', path: CHANGELOG, headers: {} },
    { name: '304 (list, If-None-Match)', answer: 'notModified', path: LIST, headers: { 'If-None-Match': answers.list.headers.etag ?? answers.list.headers.ETag } },
    { name: 'changelog 100, brotli', answer: 'compressed', path: CHANGELOG, headers: { 'Accept-Encoding': 'br' } },
  ];
  const reads = only ? allReads.filter((spec) => spec.name.includes(only)) : allReads;
  if (reads.length === 0) throw new Error(`--rows ${only}: no read's name contains it`);
  const sums = new Map();
  const add = (key, value) => sums.set(key, (sums.get(key) ?? 0) + value / rounds);
  const run = async (label, base, spec) => {
    const pid = pidOf.get(base);
    const cpuBefore = pid === undefined ? undefined : cpuSplit(pid);
    const helpers = await helpersOf.get(base)?.();
    const helpersBefore = helpers?.map(({ pids }) => pids.map(cpuSecondsIfAlive));
    const profiled = profile !== undefined && pid !== undefined && base !== bareUrl;
    if (profiled) process.kill(pid, 'SIGUSR2');
    const { rps, bad, requests } = await load(base, { ...spec, duration, connections });
    if (profiled) process.kill(pid, 'SIGUSR2');
    if (bad > 0) throw new Error(`${label}: ${bad} answers that were not 2xx/3xx`);
    let cpuUs = '';
    if (cpuBefore !== undefined) {
      const after = cpuSplit(pid);
      const us = (seconds) => (seconds * 1e6 / requests).toFixed(1);
      cpuUs = `, server CPU ${us(after.user + after.system - cpuBefore.user - cpuBefore.system)} µs/request (user ${us(after.user - cpuBefore.user)}, system ${us(after.system - cpuBefore.system)})`;
      helpers?.forEach(({ name, pids }, i) => {
        const seconds = pids.reduce((sum, helperPid, j) => sum + Math.max(0, cpuSecondsIfAlive(helperPid) - helpersBefore[i][j]), 0);
        cpuUs += `, ${name} ${us(seconds)}`;
      });
    }
    process.stderr.write(`  ${label}: ${Math.round(rps)} req/s${cpuUs}\n`);
    return rps;
  };
  // The ids start where the tenant's do (a database may hold other tenants first).
  const idPath = (spec) => (typeof spec.path === 'string' ? spec.path : { prefix: spec.path.prefix, max: spec.path.max + sqlite.firstId - 1 });
  // The first seconds after seeding run cold code and collect the seeding's garbage: warmed up first.
  const warm = async (base, headers, pathOf) => {
    for (const spec of allReads.slice(0, 3)) await load(base, { path: pathOf(spec), headers: { ...headers, ...spec.headers }, duration: 2, connections });
  };
  await warm(sqlite.url, auth, idPath);
  const cold = {};
  for (let round = 0; round < rounds; round++) {
    for (const spec of reads) {
      add(`service ${spec.name}`, await run(`service ${spec.name}`, sqlite.url, { path: idPath(spec), headers: { ...auth, ...spec.headers } }));
      add(`bare ${spec.name}`, await run(`bare ${spec.name}`, bareUrl, { path: idPath(spec), headers: { 'x-answer': spec.answer, ...spec.headers } }));
    }
  }
  const peak = peakRssMb(sqlite.server.child.pid);
  const now = currentRssMb(sqlite.server.child.pid);
  await stop(sqlite.server.child);
  // Cold: the same database, nothing kept: every read builds its answer (the first read after a write).
  if (!only) {
    const env = { ...sqlite.env, ANSWER_CACHE_MB: '0' };
    const server = startService(env);
    const url = await server.url;
    pidOf.set(url, server.child.pid);
    await warm(url, auth, idPath);
    for (const spec of reads.slice(0, 3)) {
      cold[spec.name] = await run(`service cold ${spec.name}`, url, { path: idPath(spec), headers: { ...auth, ...spec.headers } });
    }
    await stop(server.child);
  }
  await stop(bare.child);

  let postgres;
  if (postgresUrl) {
    process.stderr.write(`reads: seeding ${ARTWORKS} artworks on PostgreSQL\n`);
    const database = await postgresDatabase(postgresUrl);
    const redisEnv = redisUrl ? { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `reads:${process.pid}:${Date.now()}:` } : {};
    const service = await catalog(database.url, { ...redisEnv, ...profileEnv });
    execFileSync(process.execPath, ['--input-type=module', '-e', `
      import pg from 'pg'; const c = new pg.Client({ connectionString: ${JSON.stringify(database.url)} });
      await c.connect(); await c.query('analyze'); await c.end();`], { cwd: ROOT, stdio: 'inherit' });
    const pgAuth = { Authorization: `Bearer ${service.key}` };
    const pgPath = (spec) => (typeof spec.path === 'string' ? spec.path : { prefix: spec.path.prefix, max: spec.path.max + service.firstId - 1 });
    postgres = {};
    const redisPid = redisUrl ? await redisProcessId(redisUrl) : undefined;
    const served = (server, url) => {
      pidOf.set(url, server.child.pid);
      helpersOf.set(url, async () => [
        { name: 'PostgreSQL backends', pids: await database.backends() },
        ...(redisPid === undefined ? [] : [{ name: 'Redis', pids: [redisPid] }]),
      ]);
    };
    served(service.server, service.url);
    await warm(service.url, pgAuth, pgPath);
    for (const spec of reads.filter((read) => allReads.indexOf(read) < 3)) postgres[spec.name] = await run(`postgres ${spec.name}`, service.url, { path: pgPath(spec), headers: pgAuth });
    await stop(service.server.child);
    if (redisUrl && reads[0] === allReads[0]) {
      const everyRequest = startService({ ...service.env, RATE_LIMIT_LEASE: '1' });
      const everyUrl = await everyRequest.url;
      served(everyRequest, everyUrl);
      await warm(everyUrl, pgAuth, pgPath);
      postgres.leaseOne = await run('postgres RATE_LIMIT_LEASE=1 GET /v1/artworks/:id', everyUrl, { path: pgPath(reads[0]), headers: pgAuth });
      await stop(everyRequest.child);
    }
    if (!only) {
      const coldServer = startService({ ...service.env, ANSWER_CACHE_MB: '0' });
      const coldUrl = await coldServer.url;
      served(coldServer, coldUrl);
      await warm(coldUrl, pgAuth, pgPath);
      postgres.cold = await run('postgres cold GET /v1/artworks/:id', coldUrl, { path: pgPath(reads[0]), headers: pgAuth });
      await stop(coldServer.child);
    }
    await database.drop();
  }
  rmSync(dir, { recursive: true, force: true });

  const rows = reads.map((spec) => {
    const service = sums.get(`service ${spec.name}`);
    const bareRps = sums.get(`bare ${spec.name}`);
    return {
      read: spec.name, bytes: answers[spec.answer].body.length,
      service_rps: Math.round(service), bare_rps: Math.round(bareRps), ratio: Number((service / bareRps).toFixed(3)),
      ...(cold[spec.name] ? { cold_rps: Math.round(cold[spec.name]), cold_ratio: Number((cold[spec.name] / bareRps).toFixed(3)) } : {}),
      ...(postgres?.[spec.name] ? { postgres_rps: Math.round(postgres[spec.name]), postgres_to_sqlite: Number((postgres[spec.name] / service).toFixed(3)) } : {}),
    };
  });
  return {
    tool: HAS_WRK ? 'wrk -t2' : 'autocannon', duration_s: duration, connections, rounds, artworks: ARTWORKS,
    rows, peak_rss_mb: Number(peak.toFixed(1)), rss_after_mb: Number(now.toFixed(1)),
    ...(postgres?.leaseOne ? { postgres_lease_1_by_id_rps: Math.round(postgres.leaseOne), postgres_lease_1_to_sqlite: Number((postgres.leaseOne / sums.get(`service ${reads[0].name}`)).toFixed(3)) } : {}),
    ...(postgres?.cold ? { postgres_cold_by_id_rps: Math.round(postgres.cold), postgres_cold_to_sqlite_cold: Number((postgres.cold / cold[reads[0].name]).toFixed(3)) } : {}),
  };
}

export function printReads(report) {
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  console.log(`\nreads (${report.tool}, ${report.connections} connections, ${report.duration_s} s each, ${report.rounds} round(s), ${report.artworks} artworks; ratio = service / bare node:http sending the same bytes)`);
  const header = `${pad('read', 38)}${lpad('bytes', 8)}${lpad('service', 10)}${lpad('bare', 9)}${lpad('ratio', 7)}${lpad('cold', 9)}${lpad('ratio', 7)}${lpad('PG', 9)}${lpad('PG/SQLite', 10)}`;
  console.log(header);
  console.log('-'.repeat(header.length));
  for (const r of report.rows) {
    console.log(`${pad(r.read, 38)}${lpad(r.bytes, 8)}${lpad(r.service_rps, 10)}${lpad(r.bare_rps, 9)}${lpad(r.ratio.toFixed(2), 7)}`
      + `${lpad(r.cold_rps ?? '', 9)}${lpad(r.cold_ratio?.toFixed(2) ?? '', 7)}${lpad(r.postgres_rps ?? '', 9)}${lpad(r.postgres_to_sqlite?.toFixed(2) ?? '', 10)}`);
  }
  console.log(`SQLite service peak RSS ${report.peak_rss_mb} MB (${report.rss_after_mb} MB at the end)`);
  if (report.postgres_lease_1_by_id_rps) console.log(`PostgreSQL + Redis, every request asking Redis (RATE_LIMIT_LEASE=1), GET by id: ${report.postgres_lease_1_by_id_rps} req/s, ${report.postgres_lease_1_to_sqlite} × SQLite`);
  if (report.postgres_cold_by_id_rps) console.log(`PostgreSQL cold GET by id: ${report.postgres_cold_by_id_rps} req/s, ${report.postgres_cold_to_sqlite_cold} × SQLite cold`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' },
      rounds: { type: 'string', default: '1' }, postgres: { type: 'string' }, redis: { type: 'string' }, rows: { type: 'string' }, profile: { type: 'string' },
    },
  });
  const report = await runReads({ duration: Number(values.duration), connections: Number(values.connections), rounds: Number(values.rounds), postgresUrl: values.postgres, redisUrl: values.redis, rows: values.rows, profile: values.profile });
  printReads(report);
  console.log(JSON.stringify(report));
}
