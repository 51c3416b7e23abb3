#!/usr/bin/env node
// Public feed cost (docs/public-pages.md, Pages and feeds): 1,000 events with 10 KB descriptions, the feed built cold, then
// served from the cache, 304 and HEAD; the worst event-loop block while it is built (a 1 ms timer's
// largest gap) and the slowest /healthz answered meanwhile. In process, through the real app.
// Options: --database-url URL (default: a fresh SQLite file), --events N (default 1000), --runs R (default 5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../dist/config.js';
import { buildApp } from '../dist/http/app.js';
import { createEntity } from '../dist/store/entities.js';
import { createKey } from '../dist/store/keys.js';

const { values: options } = parseArgs({ options: { 'database-url': { type: 'string' }, events: { type: 'string', default: '1000' }, runs: { type: 'string', default: '5' } } });
const dir = options['database-url'] ? undefined : mkdtempSync(join(tmpdir(), 'public-feed-'));
const config = loadConfig({ DATABASE_URL: options['database-url'] ?? `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'silent', PUBLIC_RATE_LIMIT: '1000000', RATE_LIMIT_SUBSCRIBER: '1000000' });
const app = await buildApp({ config, logger: false });
await app.ready();

const entity = await createEntity(app.db, { type: 'gallery', name: `Feed Bench ${Date.now()}` });
const { key } = await createKey(app.db, { entityId: entity.id, tier: 'subscriber', scopes: ['events:write'], expiresAt: null });
const description = 'Paintings, drawings and prints; a survey of five decades, with loans from private collections. '.repeat(110).slice(0, 10_000);
const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const total = Number(options.events);
for (let i = 0; i < total; i += 100) {
  const items = Array.from({ length: Math.min(100, total - i) }, (_, j) => ({ title: `Event ${i + j}`, description, start_date: day(i + j - 300), location_city: 'Berlin', location_country: 'DE' }));
  const r = await app.inject({ method: 'POST', url: '/v1/events/batch', headers: { authorization: `Bearer ${key}` }, payload: { items } });
  if (r.statusCode !== 200) throw new Error(r.body);
}
const url = `/profiles/${encodeURIComponent(entity.slug)}/events.ics`;

/** Runs `request` while a 1 ms timer and a /healthz probe watch the event loop. */
async function watched(request) {
  let worstGap = 0;
  let last = performance.now();
  const timer = setInterval(() => { const now = performance.now(); worstGap = Math.max(worstGap, now - last); last = now; }, 1);
  let worstHealth = 0;
  let running = true;
  const probe = (async () => {
    while (running) {
      const start = performance.now();
      await app.inject({ method: 'GET', url: '/healthz' });
      worstHealth = Math.max(worstHealth, performance.now() - start);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const start = performance.now();
  const response = await request();
  const ms = performance.now() - start;
  running = false;
  await probe;
  clearInterval(timer);
  return { ms, worstGap, worstHealth, response };
}

const get = (headers = {}, method = 'GET') => app.inject({ method, url, headers });
const rows = [];
for (let run = 0; run < Number(options.runs); run++) {
  app.publicCache.clear();
  const cold = await watched(() => get());
  const cached = await watched(() => get());
  const etag = cached.response.headers.etag;
  const notModified = await watched(() => get({ 'if-none-match': etag }));
  app.publicCache.clear();
  const head = await watched(() => get({}, 'HEAD'));
  rows.push({ cold, cached, notModified, head, bytes: cold.response.rawPayload.length, status: [cold, cached, notModified, head].map((x) => x.response.statusCode).join('/') });
}
const median = (values) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
const max = (values) => Math.max(...values);
const f = (n) => n.toFixed(1);
console.log(`database: ${config.databaseUrl.split(':')[0]}, ${total} events × 10 KB (feed: ${rows[0].bytes} bytes, statuses ${rows[0].status}), ${rows.length} runs`);
for (const kind of ['cold', 'cached', 'notModified', 'head']) {
  console.log(`${kind.padEnd(12)} median ${f(median(rows.map((r) => r[kind].ms)))} ms, worst ${f(max(rows.map((r) => r[kind].ms)))} ms; worst event-loop gap ${f(max(rows.map((r) => r[kind].worstGap)))} ms; slowest /healthz ${f(max(rows.map((r) => r[kind].worstHealth)))} ms`);
}
console.log(`cold, per run: ${rows.map((r) => `${f(r.cold.ms)} ms (gap ${f(r.cold.worstGap)})`).join(', ')}`);
await app.close();
if (dir) rmSync(dir, { recursive: true, force: true });
