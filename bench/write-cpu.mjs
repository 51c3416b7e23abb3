#!/usr/bin/env node
// The server's CPU time per POST /v1/artworks (issue #48): utime + stime of the server process (all
// threads, from /proc/<pid>/stat) over one load ÷ the requests it answered, which a shared machine
// disturbs far less than req/s. A new work and a re-post (an existing work posted again, unchanged but
// for its sync time, as bench/run.mjs sends it), on SQLite and on PostgreSQL, for this checkout and
// optionally another build (--before DIR: a checkout with its own dist/, e.g. main exported by
// `git archive main | tar -x -C DIR`, node_modules linked, `npm run build`), alternated in one run.
//
//   node bench/write-cpu.mjs --database-url postgres://postgres@127.0.0.1:5432/postgres [--before DIR]
//        [--redis-url URL] [--duration 5] [--rounds 2] [--connections 10]
// The PostgreSQL databases are scratch ones created beside --database-url and dropped afterwards; on
// PostgreSQL the CPU of the database's own backends (the server's connections, by pg_stat_activity)
// per POST is shown beside the service's.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { ROOT, artworkItem, backendCpuSeconds, cpuSeconds, seedArtworks, startProcess, stop } from './lib.mjs';

const { values } = parseArgs({
  options: {
    before: { type: 'string' }, 'database-url': { type: 'string' }, 'redis-url': { type: 'string' },
    duration: { type: 'string', default: '5' }, rounds: { type: 'string', default: '2' }, connections: { type: 'string', default: '10' },
  },
});
const DURATION = Number(values.duration);
const CONNECTIONS = Number(values.connections);
const SEEDED = 1000;

async function admin(url, statement) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}


const cli = (root, env, ...args) => JSON.parse(execFileSync(join(root, 'bin', 'art-catalog'), [...args, '--json'], { env: { ...process.env, ...env } }).toString());

const serve = (root, env) => startProcess(join(root, 'bin', 'art-catalog'), ['serve'], env);

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-write-cpu-'));
const builds = [...(values.before ? [{ name: 'before', root: values.before }] : []), { name: 'after', root: ROOT }];
const dialects = [{ name: 'sqlite' }, ...(values['database-url'] ? [{ name: 'postgres' }] : [])];
const servers = [];
const scratch = [];
try {
  for (const build of builds) {
    for (const dialect of dialects) {
      let databaseUrl = `sqlite:${join(dir, `${build.name}.db`)}`;
      let databaseName;
      if (dialect.name === 'postgres') {
        const name = `art_catalog_write_cpu_${build.name}_${process.pid}`;
        await admin(values['database-url'], `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin(values['database-url'], `CREATE DATABASE ${name}`);
        scratch.push(name);
        const url = new URL(values['database-url']);
        url.pathname = `/${name}`;
        databaseUrl = url.toString();
        databaseName = name;
      }
      const env = {
        DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0',
        ...(values['redis-url'] ? { REDIS_URL: values['redis-url'], REDIS_KEY_PREFIX: `write-cpu-${process.pid}-${build.name}-${dialect.name}:` } : {}),
      };
      const entity = cli(build.root, env, 'entity', 'create', '--type', 'gallery', '--name', `Write CPU ${build.name}`);
      const { key } = cli(build.root, env, 'key', 'create', '--entity', String(entity.id), '--tier', 'partner');
      const server = serve(build.root, env);
      const url = await server.url;
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      await seedArtworks(url, headers, SEEDED, 'seed');
      servers.push({ name: `${build.name} ${dialect.name}`, build: build.name, dialect: dialect.name, child: server.child, url, headers, databaseName, counter: 0, results: { new: [], repost: [] } });
    }
  }

  const load = (server, kind, duration) => new Promise((resolve, reject) => {
    const body = kind === 'new'
      ? () => JSON.stringify(artworkItem(server.counter++, 'new'))
      : () => JSON.stringify(artworkItem(Math.floor(Math.random() * SEEDED), 'seed'));
    const instance = autocannon({
      url: server.url, connections: CONNECTIONS, duration,
      requests: [{ method: 'POST', path: '/v1/artworks', headers: server.headers, setupRequest: (r) => ({ ...r, body: body() }) }],
    }, (error, result) => (error ? reject(error) : resolve(result)));
    instance.on('error', reject);
  });

  // Warm-up: the JIT and the prepared statements of every path.
  for (const server of servers) for (const kind of ['new', 'repost']) await load(server, kind, 1);
  for (let round = 0; round < Number(values.rounds); round++) {
    for (const kind of ['new', 'repost']) {
      for (const server of servers) {
        const backendBefore = await backendCpuSeconds(values['database-url'], server.databaseName);
        const before = cpuSeconds(server.child.pid);
        const result = await load(server, kind, DURATION);
        const cpuUs = ((cpuSeconds(server.child.pid) - before) / result.requests.total) * 1e6;
        const backendUs = ((await backendCpuSeconds(values['database-url'], server.databaseName) - backendBefore) / result.requests.total) * 1e6;
        if (result.non2xx > 0 || result.errors > 0) throw new Error(`${server.name} ${kind}: ${result.non2xx} non-2xx, ${result.errors} errors`);
        server.results[kind].push({ rps: result.requests.average, cpuUs, backendUs });
        process.stderr.write(`  ${server.name} ${kind}: ${Math.round(result.requests.average)} req/s, ${cpuUs.toFixed(0)} µs CPU per POST, PostgreSQL ${backendUs.toFixed(0)} µs\n`);
      }
    }
  }
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`\nCPU µs per POST /v1/artworks (server process, utime+stime ÷ requests; ${CONNECTIONS} connections, ${DURATION} s × ${values.rounds} rounds), load ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`);
  console.log('| server | new: µs | new: PostgreSQL µs | new: req/s | re-post: µs | re-post: PostgreSQL µs | re-post: req/s |');
  console.log('|---|---:|---:|---:|---:|---:|---:|');
  const column = (runs, field, digits = 0) => mean(runs.map((r) => r[field])).toFixed(digits);
  for (const s of servers) {
    console.log(`| ${s.name} | ${column(s.results.new, 'cpuUs')} | ${column(s.results.new, 'backendUs')} | ${column(s.results.new, 'rps')} | ${column(s.results.repost, 'cpuUs')} | ${column(s.results.repost, 'backendUs')} | ${column(s.results.repost, 'rps')} |`);
  }
} finally {
  await Promise.all(servers.map((server) => stop(server.child)));
  for (const name of scratch) await admin(values['database-url'], `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  rmSync(dir, { recursive: true, force: true });
}
