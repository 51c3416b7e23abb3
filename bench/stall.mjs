#!/usr/bin/env node
// The "stall" scenario (docs/architecture.md, The event-loop budget: no request holds the event loop for more than 50 ms): at the
// bench's catalog sizes, abusive requests run phase by phase while a probe in its own thread asks
// `/healthz` over and over and records how long each answer took. A request that blocks the server's
// event loop shows up as a slow health answer.
//
//   node bench/stall.mjs [--database-url URL] [--artworks 100000] [--changelog 1000000] [--events 1000]
//                        [--phase-seconds 5] [--only stall|heavy] [--send-timeout-ms MS]
// Then, on a database of its own, the heavy-answers scenario of bench/heavy-answers.mjs (issue #24:
// the largest answers the contract allows, read by 20 cursor readers at once and requested by 100
// clients that never read). Also run by `npm run bench -- --stall`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { analyze, benchTenant, padChangelog, seedArtworks, startService, stop } from './lib.mjs';
import { printHeavyAnswers, runHeavyAnswers } from './heavy-answers.mjs';
import { STALL_BUDGET_MS, agent, call, mean, phaseLoad, quantile, round, roundAll, sleep, startProbe, text } from './probe.mjs';

export { STALL_BUDGET_MS };


const eventItem = (i) => {
  const day = new Date(Date.now() + (i - 500) * 86_400_000 * 0.7).toISOString().slice(0, 10);
  return {
    title: `Stall Exhibition ${i}`, event_type: 'exhibition', start_date: day, end_date: day, location_city: 'Berlin',
    description: `Ein Text über Farbe, Licht und Raum — ${i}. `.repeat(240).slice(0, 10_000),
  };
};

export async function runStall({ databaseUrl, artworks = 100_000, changelog = 1_000_000, events = 1000, phaseSeconds = 5 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-stall-'));
  const env = {
    DATABASE_URL: databaseUrl ?? `sqlite:${join(dir, 'stall.db')}`,
    LOG_LEVEL: 'warn', PORT: '0', RATE_LIMIT_PARTNER: '1000000000', PUBLIC_RATE_LIMIT: '1000000000',
  };
  const dialect = env.DATABASE_URL.startsWith('postgres') ? 'postgres' : 'sqlite';
  const { entity, key } = benchTenant(env, 'Stall Gallery');
  if (changelog > 0) padChangelog(env.DATABASE_URL, entity.id, changelog);
  const server = startService(env);
  const url = await server.url;
  const bearer = { authorization: `Bearer ${key}` };
  const auth = { ...bearer, 'content-type': 'application/json' };
  const measures = {};

  // DELETE at a small catalog first, then at the full one: the cost must not grow with the catalog.
  process.stderr.write(`stall (${dialect}): seeding 1,000 artworks…\n`);
  await seedArtworks(url, auth, 1000, 'small');
  const deleteTimes = async (count) => {
    const { artworks: page } = JSON.parse(await text(`${url}/v1/artworks?limit=${count}`, bearer));
    const times = [];
    for (const { id } of page) times.push((await call(`${url}/v1/artworks/${id}`, { method: 'DELETE', headers: bearer })).ms);
    return times;
  };
  const small = await deleteTimes(50);
  measures.delete_ms_at_1000 = { mean: mean(small), p99: quantile(small, 0.99) };

  process.stderr.write(`stall (${dialect}): seeding ${artworks.toLocaleString('en')} artworks and ${events} events of 10 KB…\n`);
  await seedArtworks(url, auth, artworks - 950, 'large');
  for (let b = 0; b < events; b += 50) {
    const items = Array.from({ length: Math.min(50, events - b) }, (_, j) => eventItem(b + j));
    const response = await call(`${url}/v1/events/batch`, { method: 'POST', headers: auth, body: JSON.stringify({ items }) });
    if (response.status !== 200) throw new Error(`event seeding failed: ${response.status}`);
  }
  if (dialect === 'postgres') analyze(env.DATABASE_URL);
  const profile = JSON.parse(await text(`${url}/v1/profile`, bearer));
  const slug = profile.slug;
  const { total: entries } = JSON.parse(await text(`${url}/v1/changelog?limit=1`, bearer));
  const { events: [someEvent] } = JSON.parse(await text(`${url}/v1/events?limit=1`, bearer));
  const deepArtworkPage = Math.floor(artworks / 50) - 10;
  const deepChangelogPage = Math.floor(entries / 100) - 10;

  const probe = startProbe(url);
  const phases = [];
  const phase = async (name, workers, step) => {
    probe.phase(name);
    process.stderr.write(`  ${name}…\n`);
    const result = await phaseLoad(phaseSeconds, workers, step);
    phases.push({ name, ...result });
  };
  await phase('idle', 1, async () => { await sleep(50); return { ms: 0, status: 'sleep' }; });
  // Each feed request follows a write, so each is built cold.
  let edits = 0;
  await phase('feed, rebuilt after every write', 1, async () => {
    await call(`${url}/v1/events/${someEvent.id}`, { method: 'PUT', headers: auth, body: JSON.stringify({ description: `edit ${edits++}` }) });
    return call(`${url}/profiles/${slug}/events.ics`);
  });
  await phase('feed, cached (4 clients)', 4, () => call(`${url}/profiles/${slug}/events.ics`));
  await phase('profile pages (4 clients)', 4, (i) => call(`${url}/profiles/${slug}?page=${1 + (i % 50)}`));
  const large = [];
  await phase('DELETE early artworks (2 clients)', 2, async (i) => {
    const result = await call(`${url}/v1/artworks/${1000 + i}`, { method: 'DELETE', headers: bearer });
    large.push(result.ms);
    return result;
  });
  measures.delete_ms_at_full = { mean: mean(large), p99: quantile(large, 0.99) };
  await phase(`changelog deep page=${deepChangelogPage} since=2020 (4 clients)`, 4, () =>
    call(`${url}/v1/changelog?since=2020-01-01T00:00:00.000Z&limit=100&page=${deepChangelogPage}`, { headers: bearer }));
  await phase('changelog after=cursor (4 clients)', 4, (i) =>
    call(`${url}/v1/changelog?after=${1 + ((i * 997) % Math.max(1, entries - 200))}&limit=100`, { headers: bearer }));
  await phase(`artworks deep page=${deepArtworkPage} (4 clients)`, 4, () =>
    call(`${url}/v1/artworks?limit=50&page=${deepArtworkPage}`, { headers: bearer }));
  await phase('artworks after=cursor (4 clients)', 4, (i) =>
    call(`${url}/v1/artworks?limit=50&after=${(i * 7919) % artworks}`, { headers: bearer }));
  let n = 0;
  await phase('batches of 100 artworks (4 clients)', 4, () =>
    call(`${url}/v1/artworks/batch`, { method: 'POST', headers: auth, body: JSON.stringify({ items: Array.from({ length: 100 }, () => ({ title: `Stall batch ${n++}`, artist_name: 'Stall Artist', creation_year: 2001 })) }) }));

  const samples = await probe.stop();
  const metrics = await text(`${url}/metrics`, {});
  await stop(server.child);
  rmSync(dir, { recursive: true, force: true });

  const rows = phases.map(({ name, times, statuses }) => {
    const health = samples.get(name) ?? [];
    return {
      phase: name, requests: times.length, statuses,
      request_mean_ms: round(mean(times)), request_p99_ms: round(quantile(times, 0.99)),
      healthz_probes: health.length, healthz_p99_ms: round(quantile(health, 0.99)), healthz_max_ms: round(Math.max(...health.filter(Number.isFinite))),
    };
  });
  // The service's own worst delay since it listened (prom-client's nodejs_eventloop_lag_max_seconds
  // counts the start-up too, before any request could wait).
  const loopMax = /^art_catalog_event_loop_delay_max_seconds ([\d.e+-]+)/m.exec(metrics);
  return {
    dialect, artworks, changelog: entries, events, phase_seconds: phaseSeconds, rows,
    delete_ms: { at_1000_artworks: roundAll(measures.delete_ms_at_1000), at_full_catalog: roundAll(measures.delete_ms_at_full) },
    worst_healthz_ms: round(Math.max(...rows.filter((r) => r.phase !== 'idle').map((r) => r.healthz_max_ms))),
    event_loop_max_ms_from_metrics: loopMax ? round(Number(loopMax[1]) * 1000) : null,
  };
}

export function printStall(report) {
  const pad = (s, n) => String(s).padEnd(n);
  const lpad = (s, n) => String(s).padStart(n);
  console.log(`\nstall scenario on ${report.dialect}: ${report.artworks.toLocaleString('en')} artworks, ${report.changelog.toLocaleString('en')} changelog entries, ${report.events} events × 10 KB; ${report.phase_seconds} s per phase`);
  console.log(`${pad('abusive load', 48)}${lpad('requests', 9)}${lpad('mean ms', 9)}${lpad('p99 ms', 9)}${lpad('healthz p99', 13)}${lpad('healthz max', 13)}  statuses`);
  for (const r of report.rows) {
    console.log(`${pad(r.phase, 48)}${lpad(r.requests, 9)}${lpad(r.request_mean_ms, 9)}${lpad(r.request_p99_ms, 9)}${lpad(r.healthz_p99_ms, 13)}${lpad(r.healthz_max_ms, 13)}  ${JSON.stringify(r.statuses)}`);
  }
  const { at_1000_artworks: small, at_full_catalog: large } = report.delete_ms;
  console.log(`DELETE /v1/artworks/:id: ${small.mean} ms mean (p99 ${small.p99}) at 1,000 artworks, ${large.mean} ms (p99 ${large.p99}) at ${report.artworks.toLocaleString('en')}`);
  const verdict = report.worst_healthz_ms <= STALL_BUDGET_MS ? 'within' : 'OVER';
  console.log(`worst /healthz answer during abuse: ${report.worst_healthz_ms} ms (${verdict} the ${STALL_BUDGET_MS} ms budget)${report.event_loop_max_ms_from_metrics === null ? '' : `; event-loop delay max from /metrics: ${report.event_loop_max_ms_from_metrics} ms`}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      'database-url': { type: 'string' }, artworks: { type: 'string', default: '100000' },
      changelog: { type: 'string', default: '1000000' }, events: { type: 'string', default: '1000' },
      'phase-seconds': { type: 'string', default: '5' }, only: { type: 'string' }, 'send-timeout-ms': { type: 'string' },
    },
  });
  if (values.only !== 'heavy') {
    printStall(await runStall({
      databaseUrl: values['database-url'], artworks: Number(values.artworks), changelog: Number(values.changelog),
      events: Number(values.events), phaseSeconds: Number(values['phase-seconds']),
    }));
  }
  if (values.only !== 'stall') {
    printHeavyAnswers(await runHeavyAnswers({
      databaseUrl: values['database-url'], phaseSeconds: Number(values['phase-seconds']),
      sendTimeoutMs: values['send-timeout-ms'] ? Number(values['send-timeout-ms']) : undefined,
    }));
  }
  agent.destroy();
}
