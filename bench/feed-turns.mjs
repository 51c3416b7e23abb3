#!/usr/bin/env node
// A large feed file, turn by turn (issue #44): the longest event-loop turns of the server while
// POST /v1/feeds/preview reads a 380,000-row CSV, and while a run of the same feed reads and applies it,
// in the main thread's CPU ms (process.threadCpuUsage: what a turn cost, without the time the shared
// machine's other processes took from it; wall-clock ms are given too but mean little on a loaded
// machine). The server runs in this process (the real app on a socket); the file is served by a local
// HTTP server; a chain of setImmediate callbacks sees each turn's end, as bench/console-import-turns.mjs.
//
//   node bench/feed-turns.mjs [--rows 380000] [--run-rows 40000] (npm run build first; --run-rows 0: no run). A run
// writes each row it creates (380,000 creates take minutes): its file is --run-rows rows; the read of the
// file, the step that was one block, is the preview's own function (readFeedRows).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { meterTurns } from './lib.mjs';
import { loadConfig } from '../dist/config.js';
import { buildApp } from '../dist/http/app.js';
import { createEntity } from '../dist/store/entities.js';
import { createFeed } from '../dist/store/feeds.js';
import { createKey } from '../dist/store/keys.js';
import { runFeed } from '../dist/feeds/run.js';
import { SCOPES } from '../dist/schemas/keys.js';

const { values: options } = parseArgs({ options: { rows: { type: 'string', default: '380000' }, 'run-rows': { type: 'string', default: '40000' } } });
const rows = Number(options.rows);
const runRows = Number(options['run-rows']);
const file = (count) => {
  const lines = ['external_id,title,artist_name,creation_year,price,currency'];
  for (let i = 1; i <= count; i++) lines.push(`F-${i},Study ${i},Artist ${i % 400},${1900 + (i % 120)},${1000 + i},EUR`);
  return Buffer.from(`${lines.join('\n')}\n`);
};
const files = { '/inventory.csv': file(rows), '/run.csv': runRows > 0 ? file(runRows) : Buffer.alloc(0) };
const body = files['/inventory.csv'];
const origin = http.createServer((request, response) => {
  const served = files[request.url] ?? Buffer.alloc(0);
  response.writeHead(200, { 'content-type': 'text/csv', 'content-length': served.length }).end(served);
});
await new Promise((resolve) => origin.listen(0, '127.0.0.1', resolve));
const fileUrl = `http://127.0.0.1:${origin.address().port}/inventory.csv`;
const runUrl = `http://127.0.0.1:${origin.address().port}/run.csv`;

const dir = mkdtempSync(join(tmpdir(), 'feed-turns-'));
const app = await buildApp({ config: loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'silent', FETCH_ALLOW_PRIVATE: 'true' }), logger: false });
const base = await app.listen({ port: 0, host: '127.0.0.1' });
const entity = await createEntity(app.db, { type: 'gallery', name: `Feed Turns ${Date.now()}` });
const { key } = await createKey(app.db, { entityId: entity.id, tier: 'partner', scopes: SCOPES, expiresAt: null });

const meter = meterTurns;

const summary = (turns) => {
  const byCpu = [...turns].sort((a, b) => b.cpu - a.cpu);
  const round = (n) => Math.round(n * 10) / 10;
  return {
    turns: turns.length,
    longest_cpu_ms: round(byCpu[0].cpu), its_wall_ms: round(byCpu[0].wall),
    turns_over_50ms_cpu: turns.filter((t) => t.cpu > 50).length,
    turns_over_10ms_cpu: turns.filter((t) => t.cpu > 10).length,
    cpu_ms_total: Math.round(turns.reduce((sum, t) => sum + t.cpu, 0)),
  };
};

const phases = {};
const mapping = { external_id: 'external_id', title: 'title', artist_name: 'artist_name', creation_year: 'creation_year', price: 'price', currency: 'currency' };
let stop = meter();
const answer = await fetch(`${base}/v1/feeds/preview`, {
  method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ url: fileUrl, kind: 'artworks', mapping }),
});
const preview = await answer.json();
if (answer.status !== 200) throw new Error(`preview answered ${answer.status}: ${JSON.stringify(preview)}`);
phases.preview = { ...summary(stop()), counts: preview.counts };

if (runRows > 0) {
  const { feed } = await createFeed(app.db, entity.id, { url: runUrl, kind: 'artworks', mapping, encoding: 'utf-8', sheet: null, mode: 'merge', interval_minutes: 1440, paused: false }, new Date().toISOString());
  stop = meter();
  // The feed's job may start the run first: then its end is awaited through the API.
  let run = await runFeed({ db: app.db, fetch: app.feedFetch }, feed.id);
  while (!run?.finished_at) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const shown = await (await fetch(`${base}/v1/feeds/${feed.id}`, { headers: { authorization: `Bearer ${key}` } })).json();
    run = shown.last_run?.finished_at ? shown.last_run : undefined;
  }
  phases.run = { rows: runRows, ...summary(stop()), status: run.status, counts: typeof run.counts === 'string' ? JSON.parse(run.counts) : run.counts };
}

process.stdout.write(`${JSON.stringify({ rows, bytes: body.length, phases }, null, 2)}\n`);
await app.close();
origin.close();
rmSync(dir, { recursive: true, force: true });
