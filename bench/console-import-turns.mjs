#!/usr/bin/env node
// The console's Import, turn by turn (issue #26): the longest event-loop turns of the server while a
// 10,000-row CSV is uploaded, previewed and applied, in wall-clock ms and in the main thread's CPU ms
// (process.threadCpuUsage: what a turn cost, without the time the shared machine's other processes
// took from it). The server runs in this process (the real app on a socket, driven by fetch like a
// browser); a chain of setImmediate callbacks sees each turn's end. bench/console-import.mjs gives the
// same import's /healthz answers from a probe in its own thread.
//
//   node bench/console-import-turns.mjs [--rows 10000] [--database-url URL] (default: a fresh SQLite file;
//   give an empty PostgreSQL database for that dialect)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { meterTurns } from './lib.mjs';
import { loadConfig } from '../dist/config.js';
import { buildApp } from '../dist/http/app.js';
import { hashPassword, newSecret, sha256 } from '../dist/domain/passwords.js';
import { createEntity } from '../dist/store/entities.js';
import { acceptInvite, inviteUser, startSession } from '../dist/store/users.js';
import { Browser, csv } from './console-browser.mjs';

const { values: options } = parseArgs({ options: { 'database-url': { type: 'string' }, rows: { type: 'string', default: '10000' } } });
const dir = options['database-url'] ? undefined : mkdtempSync(join(tmpdir(), 'console-turns-'));
const databaseUrl = options['database-url'] ?? `sqlite:${join(dir, 'bench.db')}`;
const rows = Number(options.rows);
const app = await buildApp({ config: loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }), logger: false });
const base = await app.listen({ port: 0, host: '127.0.0.1' });

const entity = await createEntity(app.db, { type: 'gallery', name: `Turns Bench ${Date.now()}` });
const token = newSecret();
const user = await inviteUser(app.db, { entityId: entity.id, email: `turns-${Date.now()}@bench.example`, role: 'editor', inviteHash: sha256(token), expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
await acceptInvite(app.db, sha256(token), await hashPassword('bench password long enough'));
const session = newSecret();
await startSession(app.db, sha256(session), user.id, undefined);
const browser = new Browser(base);
browser.cookies.set('console_session', session);
// As the sign-in's redirect does: the overview sets the session's CSRF secret.
await browser.request('GET', '/console');

const meter = meterTurns;

const summary = (turns) => {
  const byWall = [...turns].sort((a, b) => b.wall - a.wall);
  const byCpu = [...turns].sort((a, b) => b.cpu - a.cpu);
  const round = (n) => Math.round(n * 10) / 10;
  return {
    turns: turns.length,
    longest_wall_ms: round(byWall[0].wall), its_cpu_ms: round(byWall[0].cpu),
    longest_cpu_ms: round(byCpu[0].cpu), its_wall_ms: round(byCpu[0].wall),
    turns_over_10ms_cpu: turns.filter((t) => t.cpu > 10).length,
    cpu_ms_total: Math.round(turns.reduce((sum, t) => sum + t.cpu, 0)),
  };
};

const phases = {};
let stop = meter();
const page = await browser.request('GET', '/console/import');
const action = /action="(\/console\/import\?_csrf=[^"]+)"/.exec(page.text)[1].replace(/&amp;/g, '&');
const form = new FormData();
form.append('kind', 'artworks');
form.append('file', new Blob([csv(rows)]), 'bench.csv');
const uploaded = await browser.request('POST', action, form);
if (uploaded.status !== 303) throw new Error(`upload answered ${uploaded.status}`);
phases.upload = summary(stop());

stop = meter();
const id = /\/console\/import\/([\w-]+)$/.exec(uploaded.location)[1];
const columns = await browser.request('GET', `/console/import/${id}`);
const choice = Object.fromEntries([...columns.text.matchAll(/name="(column_\d+)"><option value="">Leave out<\/option>.*?<option value="([^"]+)" selected>/g)].map((m) => [m[1], m[2]]));
const previewed = await browser.post(`/console/import/${id}/columns`, choice);
if (previewed.status !== 303) throw new Error(`columns answered ${previewed.status}`);
phases.preview = summary(stop());

stop = meter();
await browser.request('GET', `/console/import/${id}/preview`);
phases.preview_page = summary(stop());

stop = meter();
await browser.post(`/console/import/${id}/apply`, {});
let status;
do {
  await new Promise((resolve) => setTimeout(resolve, 100));
  status = JSON.parse((await browser.request('GET', `/console/import/${id}/progress.json`)).text);
} while (!status.finished);
phases.apply = summary(stop());

stop = meter();
await browser.request('GET', `/console/import/${id}/progress`);
phases.summary_page = summary(stop());

stop = meter();
await new Promise((resolve) => setTimeout(resolve, 1000));
phases.idle_1s = summary(stop());

process.stdout.write(`${JSON.stringify({ dialect: databaseUrl.split(':')[0], rows, summary: status.counts, phases }, null, 2)}\n`);
await app.close();
if (dir) rmSync(dir, { recursive: true, force: true });
