#!/usr/bin/env node
// The console's Import under load (issue #26): a 10,000-row CSV is uploaded, previewed and applied
// from the console while a probe in its own thread asks /healthz over and over; the worst health
// answer during Apply must stay within the 50 ms budget (docs/architecture.md, The event-loop budget). An idle phase of the same run
// is the baseline. On SQLite, and on PostgreSQL when it answers (a database of its own, dropped after).
//
//   node bench/console-import.mjs [--rows 10000] [--postgres postgres://postgres@127.0.0.1:5432/postgres]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cli, startService, stop } from './lib.mjs';
import { Browser, csv } from './console-browser.mjs';
import { STALL_BUDGET_MS, quantile, round, sleep, startProbe } from './probe.mjs';

const PASSWORD = 'bench password of sixteen';

async function runDialect(databaseUrl, rows) {
  const dialect = databaseUrl.startsWith('postgres') ? 'postgres' : 'sqlite';
  const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', PORT: '0' };
  const entity = cli(env, 'entity', 'create', '--type', 'gallery', '--name', `Import Bench ${Date.now()}`);
  const invite = cli(env, 'user', 'invite', '--entity', String(entity.id), '--email', `bench-${Date.now()}@gallery.example`, '--role', 'editor');
  const server = startService(env);
  const url = await server.url;
  const probe = startProbe(url);
  let samples;
  try {
    const browser = new Browser(url);
    const invitePath = new URL(invite.link).pathname;
    await browser.request('GET', invitePath);
    const accepted = await browser.post(invitePath, { password: PASSWORD });
    if (accepted.status !== 303) throw new Error(`invite answered ${accepted.status}`);
    // As a browser follows the redirect to the overview (which sets the CSRF secret of the new session).
    await browser.request('GET', accepted.location.replace(/^https?:\/\/[^/]+/, ''));
    await sleep(2000);

    probe.phase('upload and preview');
    const page = await browser.request('GET', '/console/import');
    const action = /action="(\/console\/import\?_csrf=[^"]+)"/.exec(page.text)[1].replace(/&amp;/g, '&');
    const form = new FormData();
    form.append('kind', 'artworks');
    form.append('file', new Blob([csv(rows)]), 'bench.csv');
    const started = performance.now();
    const uploaded = await browser.request('POST', action, form);
    if (uploaded.status !== 303) throw new Error(`upload answered ${uploaded.status}: ${/<main[^]*?<\/main>/.exec(uploaded.text)?.[0]}`);
    const id = /\/console\/import\/([\w-]+)$/.exec(uploaded.location)[1];
    const columns = await browser.request('GET', `/console/import/${id}`);
    const choice = Object.fromEntries([...columns.text.matchAll(/name="(column_\d+)"><option value="">Leave out<\/option>.*?<option value="([^"]+)" selected>/g)].map((m) => [m[1], m[2]]));
    await browser.post(`/console/import/${id}/columns`, choice);
    const preview = await browser.request('GET', `/console/import/${id}/preview`);
    const previewMs = performance.now() - started;
    const planned = /id="import-summary">([^<]+)</.exec(preview.text)?.[1];

    probe.phase('apply');
    const applyStarted = performance.now();
    await browser.post(`/console/import/${id}/apply`, {});
    let status;
    do {
      await sleep(100);
      status = JSON.parse((await browser.request('GET', `/console/import/${id}/progress.json`)).text);
    } while (!status.finished);
    const applyMs = performance.now() - applyStarted;
    probe.phase('idle after');
    await sleep(2000);
    samples = await probe.stop();
    const phase = (name) => {
      const values = samples.get(name) ?? [];
      return { samples: values.length, p50_ms: round(quantile(values, 0.5)), p99_ms: round(quantile(values, 0.99)), worst_ms: round(Math.max(...values.filter(Number.isFinite))) };
    };
    const result = {
      dialect, rows, planned, summary: status.counts, preview_s: round(previewMs / 1000), apply_s: round(applyMs / 1000),
      rows_per_s: Math.round(rows / (applyMs / 1000)),
      healthz: { idle: phase('idle'), upload_and_preview: phase('upload and preview'), apply: phase('apply') },
    };
    result.within_budget = result.healthz.apply.worst_ms <= STALL_BUDGET_MS;
    result.apply_worst_vs_idle_worst = round(result.healthz.apply.worst_ms / result.healthz.idle.worst_ms);
    return result;
  } finally {
    if (!samples) await probe.stop();
    await stop(server.child);
  }
}

const { values } = parseArgs({ options: { rows: { type: 'string', default: '10000' }, postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' } } });
const rows = Number(values.rows);
const results = [];
const dir = mkdtempSync(join(tmpdir(), 'art-catalog-import-bench-'));
try {
  results.push(await runDialect(`sqlite:${join(dir, 'bench.db')}`, rows));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const admin = new pg.Client({ connectionString: values.postgres, connectionTimeoutMillis: 2000 });
const name = `bench_import_${Date.now()}`;
try {
  await admin.connect();
  await admin.query(`create database ${name}`);
} catch (error) {
  process.stderr.write(`PostgreSQL does not answer (${error.message}): SQLite only\n`);
}
if (admin._connected) {
  try {
    const url = new URL(values.postgres);
    url.pathname = `/${name}`;
    results.push(await runDialect(url.toString(), rows));
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
process.exitCode = results.every((r) => r.within_budget) ? 0 : 1;
