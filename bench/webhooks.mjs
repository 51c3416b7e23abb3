#!/usr/bin/env node
// Webhook delivery under a steady write load (issue #37, docs/api.md, Webhooks): `--rate` artwork
// POSTs a second for `--seconds` by an entity with one endpoint subscribed to `artwork.created`, the
// endpoint (a local node:http server) answering 200 after `--answer-ms`. Measured: the time from each
// write's answer to its message's arrival at the receiver (p50/p95/p99; goal p95 ≤ 1 s) and /healthz
// asked over and over by a probe in its own thread on every server process (goal: under 50 ms
// throughout). First on SQLite (one process), then on PostgreSQL with two processes sharing the
// writes and the deliveries. The same probe on a bare node:http server of the same run says how
// loaded the machine was.
//
// Where the CPU went, per message delivered: each server process, the PostgreSQL backends of the
// bench's database (sampled from /proc every second, by the database's name in their command line),
// and this process (the writers and the receiver). `--trace`: the statements each server sent, per
// delivery, with their mean round trip (bench/pg-trace-hook.mjs, PostgreSQL only).
//
// `--drain N` (PostgreSQL): the delivery side alone. N artworks are written by batches with every
// process's deliveries off (WEBHOOK_CONCURRENCY=0), then the processes start again with deliveries on
// and no writes: how fast the N messages arrive, and the CPU per message, without the writes' share
// (on a machine shared with other work, wall time says little; CPU per message and statements do).
//
//   npm run build && node bench/webhooks.mjs [--seconds 60] [--rate 100] [--answer-ms 20] [--trace] [--drain N]
//                                            [--only sqlite|postgres] [--postgres-url postgres://postgres@127.0.0.1:5432/postgres]
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROOT, benchTenant, cpuSeconds, seedArtworks, startService, stop } from './lib.mjs';
import { STALL_BUDGET_MS, baselineProbe, call, quantile, round, sleep, startProbe, summary } from './probe.mjs';

const { values: options } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' }, rate: { type: 'string', default: '100' }, 'answer-ms': { type: 'string', default: '20' },
    only: { type: 'string' }, trace: { type: 'boolean', default: false }, drain: { type: 'string' }, profile: { type: 'string' }, 'postgres-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
});
const SECONDS = Number(options.seconds);
const RATE = Number(options.rate);
const ANSWER_MS = Number(options['answer-ms']);
const GOAL_P95_MS = 1000;
// After the last write, how long its messages may take to arrive before they count as missing.
const DRAIN_MS = 30_000;

/** CPU seconds of the PostgreSQL backends serving `database` (each one's latest reading, gone ones included). */
function backendsCpu(database) {
  const last = new Map();
  const sample = () => {
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(` ${database} `)) continue;
        last.set(pid, cpuSeconds(pid));
      } catch { /* gone meanwhile */ }
    }
  };
  sample();
  const before = new Map(last);
  const timer = setInterval(sample, 1000);
  return () => {
    clearInterval(timer);
    sample();
    let total = 0;
    for (const [pid, seconds] of last) total += seconds - (before.get(pid) ?? 0);
    return total;
  };
}

/** The statements the servers sent (bench/pg-trace-hook.mjs), summed over processes, per delivery. */
function traced(dir, delivered) {
  const sums = new Map();
  for (const file of readdirSync(dir)) {
    for (const [text, { calls, ms }] of JSON.parse(readFileSync(join(dir, file), 'utf8'))) {
      const entry = sums.get(text) ?? { calls: 0, ms: 0 };
      entry.calls += calls;
      entry.ms += ms;
      sums.set(text, entry);
    }
  }
  const rows = [...sums].sort((a, b) => b[1].calls - a[1].calls)
    .map(([text, { calls, ms }]) => ({ per_delivery: round(calls / delivered), mean_ms: round(ms / calls), text }));
  return { statements_per_delivery: round(rows.reduce((n, row) => n + row.per_delivery, 0)), rows };
}

/** The receiver: each artwork.created message's arrival time, by the artwork's id. */
async function startReceiver() {
  const arrivals = new Map();
  let requests = 0;
  const server = http.createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      const at = performance.now();
      requests += 1;
      try {
        const id = JSON.parse(Buffer.concat(chunks).toString('utf8')).data?.record?.id;
        if (id !== undefined && !arrivals.has(id)) arrivals.set(id, at);
      } catch { /* not a message of this bench */ }
      setTimeout(() => response.writeHead(200).end('ok'), ANSWER_MS);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, arrivals, requests: () => requests, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}



async function scenario(name, databaseUrl, processes) {
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', FETCH_ALLOW_PRIVATE: 'true', PORT: '0' };
  const traceDir = options.trace && name === 'postgres' ? mkdtempSync(join(tmpdir(), 'webhooks-trace-')) : undefined;
  const serverEnv = traceDir ? { ...env, NODE_OPTIONS: `--import ${join(ROOT, 'bench', 'pg-trace-hook.mjs')}`, BENCH_PG_TRACE_DIR: traceDir } : env;
  const services = [];
  // One after the other: the first applies the migrations.
  for (let i = 0; i < processes; i++) {
    const service = startService(serverEnv);
    services.push({ ...service, url: await service.url });
  }
  const { entity, key } = benchTenant(env, `Webhooks bench ${name}`);
  const receiver = await startReceiver();
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const hook = await call(`${services[0].url}/v1/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: `${receiver.url}/hook`, events: ['artwork.created'] }), keepBody: true });
  if (hook.status !== 201) throw new Error(`creating the endpoint: ${hook.status} ${hook.body}`);
  // Each process answers one /healthz before the probes start: a process's first answer opens its health
  // check's database connection (62-76 ms on PostgreSQL, the only answers over 50 ms in the runs that
  // did not do this); the goal is about the time deliveries run, not a process's first request.
  for (const service of services) await call(`${service.url}/healthz`);
  const probes = services.map((s) => startProbe(s.url));
  const load = [loadavg()[0]];
  const database = name === 'postgres' ? new URL(databaseUrl).pathname.slice(1) : undefined;
  const backends = database ? backendsCpu(database) : () => 0;
  const cpuAtStart = services.map((s) => cpuSeconds(s.child.pid));
  const ownAtStart = process.cpuUsage();

  // Open loop: a write every 1000/RATE ms whatever the answers take, spread over the processes.
  const answered = new Map();
  const statuses = {};
  const writes = [];
  const total = Math.round(SECONDS * RATE);
  const started = performance.now();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const target = services[i % services.length].url;
    writes.push(call(`${target}/v1/artworks`, { method: 'POST', headers: auth, body: JSON.stringify({ title: `Bench ${name} ${i}`, artist_name: `Bench Artist ${i % 50}` }), keepBody: true })
      .then((result) => {
        const at = performance.now();
        statuses[result.status] = (statuses[result.status] ?? 0) + 1;
        if (result.status === 201) answered.set(JSON.parse(result.body).id, at);
      }, () => { statuses.error = (statuses.error ?? 0) + 1; }));
    if (i % (RATE * 10) === 0) load.push(loadavg()[0]);
  }
  await Promise.all(writes);
  const writeSeconds = (performance.now() - started) / 1000;
  const drainEnd = performance.now() + DRAIN_MS;
  while (performance.now() < drainEnd && [...answered.keys()].some((id) => !receiver.arrivals.has(id))) await sleep(50);
  load.push(loadavg()[0]);
  const health = await Promise.all(probes.map((p) => p.stop()));
  const serverCpu = services.map((s, i) => cpuSeconds(s.child.pid) - cpuAtStart[i]);
  const backendCpu = backends();
  const own = process.cpuUsage(ownAtStart);
  const ownCpu = (own.user + own.system) / 1e6;

  const delays = [...answered].filter(([id]) => receiver.arrivals.has(id)).map(([id, at]) => Math.max(0, receiver.arrivals.get(id) - at));
  const missing = [...answered.keys()].filter((id) => !receiver.arrivals.has(id)).length;
  const result = {
    scenario: name, processes, writes: total, write_seconds: round(writeSeconds), statuses,
    delivered: delays.length, missing_after_30s: missing, receiver_requests: receiver.requests(),
    arrival_ms: { p50: round(quantile(delays, 0.5)), p95: round(quantile(delays, 0.95)), p99: round(quantile(delays, 0.99)), max: round(Math.max(...delays)) },
    p95_goal_met: quantile(delays, 0.95) <= GOAL_P95_MS && missing === 0,
    healthz_ms: health.map(summary),
    healthz_goal_met: health.every((samples) => summary(samples).max < STALL_BUDGET_MS),
    load_1min: load.map(round),
    // CPU over the writes and the drain, and per message delivered (ms): servers, PostgreSQL, this process.
    cpu_s: { servers: serverCpu.map(round), postgres_backends: round(backendCpu), bench_process: round(ownCpu) },
    cpu_ms_per_delivered: {
      servers: round((serverCpu.reduce((a, b) => a + b, 0) * 1000) / delays.length),
      postgres_backends: round((backendCpu * 1000) / delays.length), bench_process: round((ownCpu * 1000) / delays.length),
    },
    entity: entity.id,
  };
  await receiver.close();
  for (const service of services) await stop(service.child);
  if (traceDir) {
    result.trace = traced(traceDir, delays.length);
    rmSync(traceDir, { recursive: true, force: true });
  }
  return result;
}

/** `--drain N`: N messages queued with deliveries off, then delivered by `processes` processes and nothing else. */
async function drainScenario(databaseUrl, processes, count) {
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', FETCH_ALLOW_PRIVATE: 'true', PORT: '0' };
  const receiver = await startReceiver();
  const writer = startService({ ...env, WEBHOOK_CONCURRENCY: '0' });
  const writerUrl = await writer.url;
  const { key } = benchTenant(env, 'Webhooks drain');
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const hook = await call(`${writerUrl}/v1/webhooks`, { method: 'POST', headers: auth, body: JSON.stringify({ url: `${receiver.url}/hook`, events: ['artwork.created'] }), keepBody: true });
  if (hook.status !== 201) throw new Error(`creating the endpoint: ${hook.status} ${hook.body}`);
  await seedArtworks(writerUrl, auth, count, 'drain');
  await stop(writer.child);
  const traceDir = options.trace ? mkdtempSync(join(tmpdir(), 'webhooks-trace-')) : undefined;
  // `--profile DIR`: each process's CPU profile of the drain alone (bench/profile-hook.mjs, SIGUSR2 around it).
  const hooks = [traceDir && join(ROOT, 'bench', 'pg-trace-hook.mjs'), options.profile && join(ROOT, 'bench', 'profile-hook.mjs')].filter(Boolean);
  const serverEnv = {
    ...env, ...(hooks.length > 0 ? { NODE_OPTIONS: hooks.map((hook) => `--import ${hook}`).join(' ') } : {}),
    ...(traceDir ? { BENCH_PG_TRACE_DIR: traceDir } : {}), ...(options.profile ? { BENCH_PROFILE_DIR: options.profile } : {}),
  };
  const backends = backendsCpu(new URL(databaseUrl).pathname.slice(1));
  const services = [];
  for (let i = 0; i < processes; i++) services.push(startService(serverEnv));
  // From the processes listening: their start-up's CPU (about a second each) is not a delivery's.
  await Promise.all(services.map((s) => s.url));
  if (options.profile) for (const s of services) s.child.kill('SIGUSR2');
  const started = performance.now();
  const cpuAtStart = services.map((s) => cpuSeconds(s.child.pid));
  const ownAtStart = process.cpuUsage();
  const load = [loadavg()[0]];
  const deadline = started + 300_000;
  while (receiver.arrivals.size < count && performance.now() < deadline) await sleep(20);
  const seconds = (performance.now() - started) / 1000;
  load.push(loadavg()[0]);
  const serverCpu = services.map((s, i) => cpuSeconds(s.child.pid) - cpuAtStart[i]);
  const backendCpu = backends();
  const own = process.cpuUsage(ownAtStart);
  const delivered = receiver.arrivals.size;
  if (options.profile) {
    for (const s of services) s.child.kill('SIGUSR2');
    await sleep(2000);
  }
  const result = {
    scenario: 'postgres drain', processes, messages: count, delivered, seconds: round(seconds), per_second: round(delivered / seconds),
    cpu_s: { servers: serverCpu.map(round), postgres_backends: round(backendCpu), bench_process: round((own.user + own.system) / 1e6) },
    cpu_ms_per_delivered: {
      servers: round((serverCpu.reduce((a, b) => a + b, 0) * 1000) / delivered), postgres_backends: round((backendCpu * 1000) / delivered),
      bench_process: round((own.user + own.system) / 1e3 / delivered),
    },
    load_1min: load.map(round),
  };
  await receiver.close();
  for (const service of services) await stop(service.child);
  if (traceDir) {
    result.trace = traced(traceDir, delivered);
    rmSync(traceDir, { recursive: true, force: true });
  }
  return result;
}

const results = [];
if (!options.drain) console.log(JSON.stringify({ baseline_healthz_ms: await baselineProbe(Math.min(10, SECONDS)), load_1min: round(loadavg()[0]) }));
if (options.only !== 'postgres' && !options.drain) {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-bench-'));
  try {
    results.push(await scenario('sqlite', `sqlite:${join(dir, 'bench.db')}`, 1));
    console.log(JSON.stringify(results.at(-1)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
if (options.only !== 'sqlite') {
  const admin = new pg.Client({ connectionString: options['postgres-url'] });
  await admin.connect();
  const name = `bench_webhooks_${process.pid}`;
  await admin.query(`create database ${name}`);
  try {
    const url = new URL(options['postgres-url']);
    url.pathname = `/${name}`;
    results.push(options.drain ? await drainScenario(url.toString(), 2, Number(options.drain)) : await scenario('postgres', url.toString(), 2));
    console.log(JSON.stringify(results.at(-1)));
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
console.log(JSON.stringify({ load_1min_after: round(loadavg()[0]) }));
