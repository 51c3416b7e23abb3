// The "heavy answers" stall scenario (issue #24): the largest answers the contract allows, read by
// many clients at once and requested by clients that never read them. A catalog of 900 artworks with
// 10,000-character descriptions, 100 of them rewritten with 20,000 characters, makes
// `GET /v1/changelog?after=0&limit=1000` a ~12.4 MB answer (before pages were capped by bytes).
//
//   node bench/heavy-answers.mjs [--database-url URL] [--phase-seconds 5] [--stuck 100] [--send-timeout-ms 60000]
// Also run by `npm run bench:stall` after the stall scenario.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { benchTenant, currentRssMb, startService, stop } from './lib.mjs';
import { STALL_BUDGET_MS, agent, call, loopDelays, loopDelaysBetween, mean, phaseLoad, quantile, round, sleep, startProbe } from './probe.mjs';

const HEAVY_PAGE = '/v1/changelog?after=0&limit=1000';
/** Issue #24: 100 clients that never read may grow the server's memory by this much at most. */
const RSS_GROWTH_BUDGET_MB = 150;

const artwork = (i, chars) => ({
  title: `Heavy Study ${i}`, artist_name: `Heavy Artist ${i % 50}`, creation_year: 1950 + (i % 70),
  description: `Licht, Farbe und Raum — Studie ${i}. `.repeat(Math.ceil(chars / 30)).slice(0, chars),
});

async function post(url, auth, items) {
  const response = await call(`${url}/v1/artworks/batch`, { method: 'POST', headers: auth, body: JSON.stringify({ items }), keepBody: true });
  if (response.status !== 200) throw new Error(`seeding failed: ${response.status} ${response.body.slice(0, 200)}`);
}

/** The issue's catalog: 900 artworks × 10,000 characters, then 100 of them rewritten with 20,000. */
export async function seedHeavyCatalog(url, auth) {
  for (let b = 0; b < 900; b += 50) await post(url, auth, Array.from({ length: 50 }, (_, j) => artwork(b + j, 10_000)));
  for (let b = 0; b < 100; b += 25) await post(url, auth, Array.from({ length: 25 }, (_, j) => artwork(b + j, 20_000)));
}

/** Reads the whole changelog by cursor; throws unless every entry came exactly once, in id order. */
async function readWholeChangelog(url, headers, total) {
  const times = [];
  let after = 0;
  let seen = 0;
  let pages = 0;
  for (;;) {
    const response = await call(`${url}/v1/changelog?after=${after}&limit=1000`, { headers, keepBody: true });
    times.push(response.ms);
    if (response.status !== 200) throw new Error(`cursor read: ${response.status} ${response.body.slice(0, 200)}`);
    const page = JSON.parse(response.body);
    pages += 1;
    for (const { id } of page.changes) {
      if (id <= after) throw new Error(`cursor read: entry ${id} after ${after} (repeated or out of order)`);
      after = id;
      seen += 1;
    }
    if (!page.has_more) break;
    if (page.next_after !== after) throw new Error(`cursor read: next_after ${page.next_after}, last id ${after}`);
  }
  if (seen !== total) throw new Error(`cursor read: ${seen} entries of ${total}`);
  return { times, pages, seen };
}

/** The server's connections on `port` still established (Linux /proc/net/tcp, state 01). */
function establishedOn(port) {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)
    .filter((line) => { const f = line.trim().split(/\s+/); return f[1]?.endsWith(`:${hex}`) && f[3] === '01'; }).length;
}

/** Opens `count` connections that each send the heavy request and never read a byte of the answer. */
export function stuckClients(url, key, count) {
  const { hostname, port } = new URL(url);
  return Array.from({ length: count }, () => {
    const socket = connect(Number(port), hostname);
    socket.on('error', () => {});
    socket.write(`GET ${HEAVY_PAGE} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    socket.pause();
    return socket;
  });
}

export async function runHeavyAnswers({ databaseUrl, phaseSeconds = 5, stuck = 100, sendTimeoutMs, dropWithinS = 90 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-heavy-'));
  const env = {
    DATABASE_URL: databaseUrl ?? `sqlite:${join(dir, 'heavy.db')}`,
    LOG_LEVEL: 'warn', PORT: '0', RATE_LIMIT_PARTNER: '1000000000', PUBLIC_RATE_LIMIT: '1000000000',
    ...(sendTimeoutMs ? { SEND_TIMEOUT_MS: String(sendTimeoutMs) } : {}),
  };
  const dialect = env.DATABASE_URL.startsWith('postgres') ? 'postgres' : 'sqlite';
  const { key } = benchTenant(env, 'Heavy Gallery');
  const server = startService(env);
  try {
    return await measure(server, env, key, dialect, { phaseSeconds, stuck, sendTimeoutMs, dropWithinS });
  } finally {
    await stop(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(server, env, key, dialect, { phaseSeconds, stuck, sendTimeoutMs, dropWithinS }) {
  const url = await server.url;
  const bearer = { authorization: `Bearer ${key}` };
  process.stderr.write(`heavy answers (${dialect}): seeding 900 artworks × 10,000 characters, 100 rewritten with 20,000…\n`);
  await seedHeavyCatalog(url, { ...bearer, 'content-type': 'application/json' });
  const first = await call(`${url}${HEAVY_PAGE}`, { headers: bearer, keepBody: true });
  const firstPage = JSON.parse(first.body);
  const total = firstPage.total;

  const probe = startProbe(url);
  const rows = [];
  const phase = async (name, run) => {
    probe.phase(name);
    process.stderr.write(`  ${name}…\n`);
    const before = await loopDelays(url);
    const result = await run();
    rows.push({ name, ...result, loop: loopDelaysBetween(before, await loopDelays(url)) });
  };
  await phase('idle', async () => { await sleep(1000); return { times: [], statuses: {} }; });
  await phase(`1 client reads ${HEAVY_PAGE}`, () => phaseLoad(phaseSeconds, 1, () => call(`${url}${HEAVY_PAGE}`, { headers: bearer })));
  await phase('5 clients at once', () => phaseLoad(phaseSeconds, 5, () => call(`${url}${HEAVY_PAGE}`, { headers: bearer })));
  const readers = [];
  await phase('20 clients read the whole changelog by cursor', async () => {
    // A reader that fails (an error answer, a lost or repeated entry) is counted, not fatal.
    readers.push(...await Promise.all(Array.from({ length: 20 }, () => readWholeChangelog(url, bearer, total).catch((error) => ({ error: error.message, times: [], pages: 0, seen: 0 })))));
    return { times: readers.flatMap((r) => r.times), statuses: { 200: readers.reduce((n, r) => n + r.pages, 0) } };
  });

  const port = Number(new URL(url).port);
  const rssBefore = currentRssMb(server.child.pid);
  const baseline = establishedOn(port);
  let rssMax = rssBefore;
  let droppedAllAfterS = null;
  await phase(`${stuck} clients request it and never read`, async () => {
    const started = performance.now();
    const sockets = stuckClients(url, key, stuck);
    while (performance.now() - started < dropWithinS * 1000) {
      await sleep(250);
      rssMax = Math.max(rssMax, currentRssMb(server.child.pid));
      if (performance.now() - started > 2000 && establishedOn(port) <= baseline) {
        droppedAllAfterS = round((performance.now() - started) / 1000);
        break;
      }
    }
    const stillOpen = Math.max(0, establishedOn(port) - baseline);
    for (const socket of sockets) socket.destroy();
    return { times: [], statuses: {}, stillOpen };
  });
  const samples = await probe.stop();

  const stuckRow = rows.at(-1);
  return {
    dialect, entries: total, first_page: { bytes: first.bytes, entries: firstPage.changes.length, has_more: firstPage.has_more },
    phase_seconds: phaseSeconds, send_timeout_ms: sendTimeoutMs ?? 'default',
    rows: rows.map(({ name, times, statuses, loop }) => {
      const health = samples.get(name) ?? [];
      return {
        phase: name, requests: times.length, statuses,
        request_mean_ms: round(mean(times)), request_p99_ms: round(quantile(times, 0.99)),
        healthz_probes: health.length, healthz_p99_ms: round(quantile(health, 0.99)), healthz_max_ms: round(Math.max(...health.filter(Number.isFinite))),
        server_loop_over_budget: loop.over_budget, server_loop_worst: loop.worst_bucket,
      };
    }),
    cursor_readers: {
      readers: readers.length, pages_each: readers[0]?.pages, entries_each: readers[0]?.seen,
      every_entry_once: readers.every((r) => r.seen === total), failed: readers.filter((r) => r.error).map((r) => r.error),
    },
    stuck: { clients: stuck, rss_before_mb: round(rssBefore), rss_max_mb: round(rssMax), rss_growth_mb: round(rssMax - rssBefore), still_open: stuckRow.stillOpen, all_dropped_after_s: droppedAllAfterS },
  };
}

export function printHeavyAnswers(report) {
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  console.log(`\nheavy answers on ${report.dialect}: ${report.entries} changelog entries; ${HEAVY_PAGE} answers ${(report.first_page.bytes / 1e6).toFixed(2)} MB (${report.first_page.entries} entries, has_more ${report.first_page.has_more}); send timeout ${report.send_timeout_ms}`);
  console.log(`${pad('load', 52)}${lpad('requests', 9)}${lpad('mean ms', 9)}${lpad('p99 ms', 9)}${lpad('healthz p99', 13)}${lpad('healthz max', 13)}  ${pad('server loop late > 50 ms (worst)', 34)}statuses`);
  for (const r of report.rows) {
    console.log(`${pad(r.phase, 52)}${lpad(r.requests, 9)}${lpad(r.request_mean_ms, 9)}${lpad(r.request_p99_ms, 9)}${lpad(r.healthz_p99_ms, 13)}${lpad(r.healthz_max_ms, 13)}  ${pad(`${r.server_loop_over_budget} (${r.server_loop_worst})`, 34)}${JSON.stringify(r.statuses)}`);
  }
  const { cursor_readers: readers, stuck } = report;
  console.log(`cursor readers: ${readers.readers} × ${readers.pages_each} pages, ${readers.entries_each} entries each, every entry exactly once: ${readers.every_entry_once}${readers.failed.length ? `; ${readers.failed.length} failed: ${readers.failed[0]}` : ''}`);
  const bounded = stuck.rss_growth_mb <= RSS_GROWTH_BUDGET_MB && stuck.all_dropped_after_s !== null;
  console.log(`${stuck.clients} non-reading clients: RSS ${stuck.rss_before_mb} → max ${stuck.rss_max_mb} MB (+${stuck.rss_growth_mb}); ${stuck.all_dropped_after_s === null ? `${stuck.still_open} still open` : `all dropped after ${stuck.all_dropped_after_s} s`} (${bounded ? 'within' : 'OVER'} the budget: +${RSS_GROWTH_BUDGET_MB} MB, all dropped within 90 s)`);
  const worst = Math.max(...report.rows.filter((r) => r.phase !== 'idle').map((r) => r.healthz_max_ms));
  console.log(`worst /healthz answer: ${worst} ms (${worst <= STALL_BUDGET_MS ? 'within' : 'OVER'} the ${STALL_BUDGET_MS} ms budget)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' }, 'phase-seconds': { type: 'string', default: '5' },
      stuck: { type: 'string', default: '100' }, 'send-timeout-ms': { type: 'string' }, 'drop-within-s': { type: 'string', default: '90' },
    },
  });
  const report = await runHeavyAnswers({
    databaseUrl: values['database-url'], phaseSeconds: Number(values['phase-seconds']), stuck: Number(values.stuck),
    sendTimeoutMs: values['send-timeout-ms'] ? Number(values['send-timeout-ms']) : undefined, dropWithinS: Number(values['drop-within-s']),
  });
  printHeavyAnswers(report);
  agent.destroy();
}
