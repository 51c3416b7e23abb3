#!/usr/bin/env node
// A fresh server's first /healthz against its later ones, on PostgreSQL (docs/operations.md, Health,
// metrics and logs: the health check's own connection is opened as the server starts listening). Each
// --dist (another checkout's dist/) starts a server in turns in one process, 300 ms before a request
// to a path that reads no database (the client's connection and the first request's own cost), then
// /healthz four times.
//
//   node bench/first-healthz.mjs --database-url postgres://… [--starts 6] [--dist DIR ...]   (needs `npm run build`)
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const self = fileURLToPath(import.meta.url);
const { values } = parseArgs({ options: {
  'database-url': { type: 'string' },
  starts: { type: 'string', default: '6' },
  dist: { type: 'string', multiple: true, default: [join(self, '..', '..', 'dist')] },
} });
if (!values['database-url']?.startsWith('postgres')) throw new Error('--database-url postgres://… is required');
const builds = await Promise.all(values.dist.map(async (dist) => ({
  dist,
  app: await import(pathToFileURL(join(dist, 'http', 'app.js')).href),
  config: await import(pathToFileURL(join(dist, 'config.js')).href),
})));
const times = new Map(values.dist.map((dist) => [dist, { first: [], later: [] }]));
const ms = async (url) => {
  const started = performance.now();
  await (await fetch(url)).text();
  return performance.now() - started;
};
for (let start = 0; start < Number(values.starts); start++) {
  for (const { dist, app, config } of builds) {
    const server = await app.buildApp({ config: config.loadConfig({ DATABASE_URL: values['database-url'], LOG_LEVEL: 'silent' }), logger: false, jobs: false, imageWorker: false });
    const base = await server.listen({ port: 0, host: '127.0.0.1' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await ms(`${base}/no-such-path`);
    times.get(dist).first.push(await ms(`${base}/healthz`));
    for (let i = 0; i < 3; i++) times.get(dist).later.push(await ms(`${base}/healthz`));
    await server.close();
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)].toFixed(1);
for (const [dist, { first, later }] of times) {
  console.log(`${dist}: first /healthz median ${median(first)} ms (${first.map((t) => t.toFixed(1)).join(' ')}), later median ${median(later)} ms`);
}
