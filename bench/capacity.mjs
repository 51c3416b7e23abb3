#!/usr/bin/env node
// How throughput scales with service processes on one PostgreSQL (docs/deploy.md, "Capacity"):
// N = 1, 2, 4 processes (`npm start` each, own port, own pool of PG_POOL_SIZE), 50 connections in all
// spread evenly, one autocannon per process at once; the rates are summed.
//   node bench/capacity.mjs --database-url postgres://… [--duration 10] [--processes 1,2,4]
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchTenant, startService, stop } from './lib.mjs';

const { values: options } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    duration: { type: 'string', default: '10' },
    processes: { type: 'string', default: '1,2,4' },
  },
});
if (!options['database-url']?.startsWith('postgres')) throw new Error('--database-url postgres://… is required');
const CONNECTIONS = 50;
const env = { ...process.env, DATABASE_URL: options['database-url'], LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0' };
const serve = () => startService(env);

const { key } = benchTenant(env, 'Capacity');
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
let counter = 0;
const item = () => ({ title: `Capacity Study ${counter++}`, artist_name: `Capacity Artist ${counter % 50}`, creation_year: 1990, price: counter, currency: 'EUR', availability: 'available' });

const rows = [];
for (const n of options.processes.split(',').map(Number)) {
  const servers = Array.from({ length: n }, serve);
  try {
    const urls = await Promise.all(servers.map((s) => s.url));
    // Seed 1,000 artworks to read (and warm every process's artist cache).
    for (let b = 0; b < 10; b++) {
      await fetch(`${urls[b % n]}/v1/artworks/batch`, { method: 'POST', headers, body: JSON.stringify({ items: Array.from({ length: 100 }, item) }) });
    }
    const ids = (await (await fetch(`${urls[0]}/v1/artworks?limit=100`, { headers })).json()).artworks.map((a) => a.id);
    const scenarios = {
      'POST /v1/artworks (new)': { method: 'POST', path: '/v1/artworks', headers, setupRequest: (r) => ({ ...r, body: JSON.stringify(item()) }) },
      'GET /v1/artworks/:id': { method: 'GET', headers, setupRequest: (r) => ({ ...r, path: `/v1/artworks/${ids[Math.floor(Math.random() * ids.length)]}` }) },
    };
    for (const [name, request] of Object.entries(scenarios)) {
      const results = await Promise.all(urls.map((url) => autocannon({
        url, connections: Math.round(CONNECTIONS / n), duration: Number(options.duration), requests: [request],
      })));
      const rps = results.reduce((sum, r) => sum + r.requests.average, 0);
      const non2xx = results.reduce((sum, r) => sum + r.non2xx + r.errors, 0);
      rows.push({ processes: n, scenario: name, rps: Math.round(rps), non2xx });
      process.stderr.write(`  ${n} process(es), ${name}: ${Math.round(rps)} req/s${non2xx ? ` (${non2xx} non-2xx)` : ''}\n`);
    }
  } finally {
    await Promise.all(servers.map((s) => stop(s.child)));
  }
}
console.table(rows);
