#!/usr/bin/env node
// Undo of a 10,000-row run (issue #45; docs/api.md, Runs: undo a run; docs/performance.md, Undo): a feed's
// first run creates 10,000 artworks in a real `serve`; then the run is undone (every record to the trash,
// in batches of a few records per transaction, a job of the one queue) while a probe in its own thread asks /healthz over
// and over (a step that held the event loop shows up as a slow answer; goal: under 50 ms). The same probe
// on a bare node:http server of the same run, for as long, says how loaded the machine was.
//
//   npm run build && node bench/undo.mjs [--rows 10000] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { benchTenant, startService, stop } from './lib.mjs';
import { STALL_BUDGET_MS, baselineProbe, call, round, sleep, startProbe, summary } from './probe.mjs';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '10000' }, 'database-url': { type: 'string' } } });
const ROWS = Number(values.rows);

const body = Buffer.from(['external_id,title,artist_name,creation_year,price,currency',
  ...Array.from({ length: ROWS }, (_, i) => `U-${i},Study ${i},Artist ${i % 300},${1950 + (i % 70)},${1000 + i},EUR`)].join('\n'));
const files = http.createServer((request, response) => response.writeHead(200, { 'content-type': 'text/csv; charset=utf-8' }).end(body));
await new Promise((resolve) => files.listen(0, '127.0.0.1', resolve));

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-undo-'));
const databaseUrl = values['database-url'] ?? `sqlite:${join(dir, 'undo.db')}`;
const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', FETCH_ALLOW_PRIVATE: 'true', PORT: '0' };
const service = startService(env);
try {
  const url = await service.url;
  const { key } = benchTenant(env, `Undo bench ${Date.now()}`);
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const json = async (path, method = 'GET', payload) => {
    const answer = await call(`${url}${path}`, { method, headers: auth, keepBody: true, ...(payload ? { body: JSON.stringify(payload) } : {}) });
    return { status: answer.status, body: JSON.parse(answer.body) };
  };
  const feed = await json('/v1/feeds', 'POST', { url: `http://127.0.0.1:${files.address().port}/stock.csv`, kind: 'artworks' });
  if (feed.status !== 201) throw new Error(`creating the feed: ${feed.status} ${JSON.stringify(feed.body)}`);
  process.stderr.write(`the feed's first run creates ${ROWS} artworks…\n`);
  let run;
  for (;;) {
    [run] = (await json(`/v1/feeds/${feed.body.id}/runs?limit=1`)).body.runs;
    if (run && run.status !== 'queued' && run.status !== 'running') break;
    await sleep(500);
  }
  if (run.counts?.created !== ROWS) throw new Error(`the run: ${JSON.stringify(run)}`);
  await call(`${url}/healthz`);

  const probe = startProbe(url);
  const load = [loadavg()[0]];
  const started = performance.now();
  const undo = await json(`/v1/runs/${run.id}/undo`, 'POST', {});
  if (undo.status !== 202) throw new Error(`the undo: ${undo.status} ${JSON.stringify(undo.body)}`);
  let done;
  for (;;) {
    done = (await json(`/v1/runs/${undo.body.id}`)).body;
    if (done.status !== 'queued' && done.status !== 'running') break;
    await sleep(200);
  }
  const seconds = (performance.now() - started) / 1000;
  const health = summary(await probe.stop());
  load.push(loadavg()[0]);
  const bare = await baselineProbe(Math.min(60, Math.max(5, Math.round(seconds))));
  const total = (await json('/v1/artworks?limit=1')).body.total;
  console.log(JSON.stringify({
    dialect: databaseUrl.split(':')[0], rows: ROWS, undo_status: done.status, counts: done.counts, live_after: total, undo_s: round(seconds),
    records_per_s: Math.round(ROWS / seconds), healthz_during_undo: health, healthz_bare_node_http: bare,
    p99_ratio_to_bare: round(health.p99 / bare.p99), max_ratio_to_bare: round(health.max / bare.max), load_1min: load.map(round),
    budget_ms: STALL_BUDGET_MS, verdict: health.p99 <= STALL_BUDGET_MS ? 'PASS p99' : 'OVER p99',
  }, null, 1));
} finally {
  await stop(service.child);
  files.close();
  rmSync(dir, { recursive: true, force: true });
}
