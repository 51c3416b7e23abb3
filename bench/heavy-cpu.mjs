#!/usr/bin/env node
// How long the heavy answers of bench/heavy-answers.mjs hold the event loop, counted in the server
// thread's own CPU time (process.threadCpuUsage between two turns of the loop) rather than in a probe's
// wall-clock wait, which on a shared machine also counts the time the process was not given a core.
// The server runs in this process (the build under --root, default this checkout); the clients in a
// child process.
//
//   node bench/heavy-cpu.mjs [--root DIR] [--database-url URL] [--phase-seconds 5]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT } from './lib.mjs';
import { agent, call, phaseLoad } from './probe.mjs';
import { seedHeavyCatalog, stuckClients } from './heavy-answers.mjs';

const { values } = parseArgs({
  options: { root: { type: 'string', default: ROOT }, 'database-url': { type: 'string' }, 'phase-seconds': { type: 'string', default: '5' }, client: { type: 'string' } },
});

if (values.client) await clients(values.client, Number(values['phase-seconds']));
else await server();

async function server() {
  const dir = mkdtempSync(join(tmpdir(), 'art-catalog-heavy-cpu-'));
  const root = values.root;
  const { loadConfig } = await import(`${root}/dist/config.js`);
  const { buildApp } = await import(`${root}/dist/http/app.js`);
  const { createEntity } = await import(`${root}/dist/store/entities.js`);
  const { createKey } = await import(`${root}/dist/store/keys.js`);
  const { TIER_SCOPES } = await import(`${root}/dist/domain/keys.js`);
  const config = loadConfig({ DATABASE_URL: values['database-url'] ?? `sqlite:${join(dir, 'heavy.db')}`, LOG_LEVEL: 'silent', RATE_LIMIT_PARTNER: '1000000000' });
  const app = await buildApp({ config, logger: false });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const entity = await createEntity(app.db, { type: 'gallery', name: `Heavy CPU ${Date.now()}`, city: 'Berlin', country: 'DE' });
  const { key } = await createKey(app.db, { entityId: entity.id, tier: 'partner', scopes: TIER_SCOPES.partner, expiresAt: null });

  let worst = 0;
  let last = process.threadCpuUsage();
  const turn = () => {
    const now = process.threadCpuUsage();
    worst = Math.max(worst, (now.user + now.system - last.user - last.system) / 1000);
    last = now;
    setImmediate(turn);
  };
  const child = fork(new URL(import.meta.url).pathname, ['--client', `${url} ${key}`, '--phase-seconds', values['phase-seconds']]);
  const rows = [];
  await new Promise((resolve) => child.on('message', (message) => {
    if (message.seeded) setImmediate(turn);
    if (message.phase) rows.push({ phase: message.phase, requests: message.requests, worst_cpu_ms: Math.round(worst * 10) / 10 });
    worst = 0;
    last = process.threadCpuUsage();
    if (message.done) resolve();
  }));
  console.log(`heavy answers, ${root === ROOT ? 'this checkout' : root}, ${config.databaseUrl.startsWith('postgres') ? 'postgres' : 'sqlite'}: the longest main-thread CPU run between two event-loop turns`);
  for (const row of rows) console.log(`  ${row.phase.padEnd(46)} ${String(row.requests).padStart(6)} requests  worst ${row.worst_cpu_ms} ms`);
  await app.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

async function clients(target, seconds) {
  const [url, key] = target.split(' ');
  const bearer = { authorization: `Bearer ${key}` };
  await seedHeavyCatalog(url, { ...bearer, 'content-type': 'application/json' });
  process.send({ seeded: true });
  const page = () => call(`${url}/v1/changelog?after=0&limit=1000`, { headers: bearer });
  const wholeByCursor = async () => {
    let requests = 0;
    for (let after = 0; ;) {
      const response = await call(`${url}/v1/changelog?after=${after}&limit=1000`, { headers: bearer, keepBody: true });
      const body = JSON.parse(response.body);
      requests += 1;
      if (!body.has_more) return requests;
      after = body.next_after;
    }
  };
  for (const [phase, run] of [
    ['1 client reads after=0&limit=1000', async () => (await phaseLoad(seconds, 1, page)).times.length],
    ['5 clients at once', async () => (await phaseLoad(seconds, 5, page)).times.length],
    ['20 clients read the whole changelog by cursor', async () => (await Promise.all(Array.from({ length: 20 }, wholeByCursor))).reduce((a, b) => a + b, 0)],
    ['100 clients request it and never read', async () => {
      const sockets = stuckClients(url, key, 100);
      await new Promise((resolve) => { setTimeout(resolve, seconds * 1000); });
      for (const socket of sockets) socket.destroy();
      return sockets.length;
    }],
  ]) process.send({ phase, requests: await run() });
  agent.destroy();
  process.send({ done: true });
}
