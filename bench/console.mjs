#!/usr/bin/env node
// Console page cost (docs/performance.md, Console: each page's server time ≤ 5 ms at 10,000 artworks). In process,
// through the real app (app.inject: routing, session guard, store reads, rendering; no socket), signed
// in as an owner. Baselines from the same run: GET /healthz and the API's GET /v1/artworks?limit=50.
// Options: --database-url URL (default: a fresh SQLite file; give an empty PostgreSQL database for
// that dialect), --artworks N (default 10000), --runs R (default 200).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../dist/config.js';
import { buildApp } from '../dist/http/app.js';
import { hashPassword, newSecret, sha256 } from '../dist/domain/passwords.js';
import { createEntity } from '../dist/store/entities.js';
import { createKey } from '../dist/store/keys.js';
import { acceptInvite, inviteUser, startSession } from '../dist/store/users.js';
import { analyze, artworkItem } from './lib.mjs';

const { values: options } = parseArgs({ options: { 'database-url': { type: 'string' }, artworks: { type: 'string', default: '10000' }, runs: { type: 'string', default: '200' } } });
const dir = options['database-url'] ? undefined : mkdtempSync(join(tmpdir(), 'console-bench-'));
const databaseUrl = options['database-url'] ?? `sqlite:${join(dir, 'bench.db')}`;
const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', RATE_LIMIT_PARTNER: '100000000' });
const app = await buildApp({ config, logger: false });
await app.ready();

const entity = await createEntity(app.db, { type: 'gallery', name: `Console Bench ${Date.now()}` });
const { key } = await createKey(app.db, { entityId: entity.id, tier: 'partner', scopes: ['artworks:read', 'artworks:write', 'events:read', 'events:write'], expiresAt: null });
const auth = { authorization: `Bearer ${key}` };
const total = Number(options.artworks);
for (let i = 0; i < total; i += 100) {
  const items = Array.from({ length: Math.min(100, total - i) }, (_, j) => ({ ...artworkItem(i + j, 'console'), availability: ['available', 'reserved', 'sold'][(i + j) % 3] }));
  const r = await app.inject({ method: 'POST', url: '/v1/artworks/batch', headers: auth, payload: { items } });
  if (r.statusCode !== 200) throw new Error(r.body);
}
for (let i = 0; i < 100; i++) await app.inject({ method: 'POST', url: '/v1/events', headers: auth, payload: { title: `Bench Show ${i}`, start_date: '2099-01-01' } });
const some = JSON.parse((await app.inject({ method: 'GET', url: `/v1/artworks?after=${Math.floor(total / 2)}&limit=1`, headers: auth })).body).artworks[0].id;
const event = JSON.parse((await app.inject({ method: 'GET', url: '/v1/events?limit=1', headers: auth })).body).events[0].id;
await app.inject({ method: 'PUT', url: `/v1/artworks/${some}`, headers: auth, payload: { price: 1 } });
// A trash of 1,000 works beside the 10,000 live ones: created, then deleted.
const trashed = [];
for (let i = 0; i < 1000; i += 100) {
  const items = Array.from({ length: 100 }, (_, j) => artworkItem(total + i + j, 'trashed'));
  const r = await app.inject({ method: 'POST', url: '/v1/artworks/batch', headers: auth, payload: { items } });
  trashed.push(...JSON.parse(r.body).results.map((result) => result.id));
}
for (const id of trashed) await app.inject({ method: 'DELETE', url: `/v1/artworks/${id}`, headers: auth });
const trashAfter = JSON.parse((await app.inject({ method: 'GET', url: '/v1/trash?kind=artworks&limit=100', headers: auth })).body).next_after;

// Planner statistics, as autovacuum gathers them on a live database.
if (databaseUrl.startsWith('postgres')) analyze(databaseUrl);

// An owner's session, as the invite page makes it.
const token = newSecret();
const user = await inviteUser(app.db, { entityId: entity.id, email: `bench-${Date.now()}@bench.example`, role: 'owner', inviteHash: sha256(token), expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
await acceptInvite(app.db, sha256(token), await hashPassword('bench password long enough'));
const session = newSecret();
await startSession(app.db, sha256(session), user.id, undefined);
const cookie = { cookie: `console_session=${session}` };

const pages = [
  ['baseline: GET /healthz', '/healthz', {}],
  ['baseline: GET /v1/artworks?limit=50 (API)', '/v1/artworks?limit=50', auth],
  ['Overview', '/console', cookie],
  ['Artworks, first page', '/console/artworks', cookie],
  ['Artworks, a page deep (after)', `/console/artworks?after=${some}`, cookie],
  ['Artworks, availability=sold', '/console/artworks?availability=sold', cookie],
  ['Artworks, search "artist 49" (title or artist)', '/console/artworks?q=artist+49', cookie],
  ['Artworks, search with no match', '/console/artworks?q=nothing+like+this', cookie],
  ['Artwork page', `/console/artworks/${some}`, cookie],
  ['Events', '/console/events', cookie],
  ['Event page', `/console/events/${event}`, cookie],
  ['Changelog', '/console/changelog', cookie],
  ['Changelog of one record', `/console/changelog?kind=artwork&record=${some}`, cookie],
  ['Trash (1,000 works in it)', '/console/trash', cookie],
  ['Trash, artworks, a page deep (after)', `/console/trash?kind=artworks&after=${trashAfter}`, cookie],
  [`Trash, Delete forever's question`, `/console/trash/artworks/${trashed[0]}/delete`, cookie],
  ['Keys', '/console/keys', cookie],
  ['People', '/console/people', cookie],
];

const runs = Number(options.runs);
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
console.log(`console pages at ${total.toLocaleString('en')} artworks, ${databaseUrl.split(':')[0]}, ${runs} runs each (server time, app.inject)`);
console.log('page'.padEnd(50), 'median ms'.padStart(10), 'p95 ms'.padStart(8), 'x healthz'.padStart(10));
let healthz;
for (const [name, url, headers] of pages) {
  for (let i = 0; i < 10; i++) await app.inject({ method: 'GET', url, headers });
  const times = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const r = await app.inject({ method: 'GET', url, headers });
    times.push(performance.now() - start);
    if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 200)}`);
  }
  times.sort((a, b) => a - b);
  const median = percentile(times, 0.5);
  healthz ??= median;
  console.log(name.padEnd(50), median.toFixed(2).padStart(10), percentile(times, 0.95).toFixed(2).padStart(8), (median / healthz).toFixed(1).padStart(10));
}
await app.close();
if (dir) rmSync(dir, { recursive: true, force: true });
