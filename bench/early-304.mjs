// The 304 of a keyed GET (issue #27) answered before the framework and through it, in one run: two
// services on the same 1,000-artwork SQLite catalog, one with the early 304s (the default) and one
// with NOT_MODIFIED_MEMO_KB=0, and a bare node:http server sending the same bytes, loaded in turn
// (wrk, 50 connections). Besides req/s, the server's CPU time per request (utime + stime of the
// process, all threads, over the requests of one load), which a shared machine disturbs less.
//   node bench/early-304.mjs [--duration S] [--connections C] [--rounds N]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, benchTenant, cpuSeconds, seedArtworks, startProcess, startService, stop } from './lib.mjs';
import { capture, load } from './reads.mjs';

const LIST = '/v1/artworks?limit=50&page=3';
const { values } = parseArgs({ options: { duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '50' }, rounds: { type: 'string', default: '3' } } });
const duration = Number(values.duration);
const connections = Number(values.connections);

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-early-304-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'reads.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0' };
const { key } = benchTenant(env, 'Early 304 Gallery');
const auth = { authorization: `Bearer ${key}` };
const early = startService(env);
const framework = startService({ ...env, NOT_MODIFIED_MEMO_KB: '0' });
const [earlyUrl, frameworkUrl] = await Promise.all([early.url, framework.url]);
process.stderr.write('early-304: seeding 1000 artworks\n');
await seedArtworks(earlyUrl, { ...auth, 'content-type': 'application/json' }, 1000, 'early');
const list = await capture(`${earlyUrl}${LIST}`, auth);
const condition = { 'if-none-match': list.headers.etag };
const notModified = await capture(`${earlyUrl}${LIST}`, { ...auth, ...condition });
const answersFile = join(dir, 'answers.json');
writeFileSync(answersFile, JSON.stringify({ notModified: { ...notModified, body: '' } }));
const bare = startProcess(process.execPath, [join(ROOT, 'bench', 'bare-bytes.mjs'), answersFile], {});
const servers = [
  { name: 'service, early 304 (default)', url: earlyUrl, pid: early.child.pid, headers: { ...auth, ...condition } },
  { name: 'service, NOT_MODIFIED_MEMO_KB=0', url: frameworkUrl, pid: framework.child.pid, headers: { ...auth, ...condition } },
  { name: 'bare node:http, same bytes', url: await bare.url, pid: bare.child.pid, headers: { 'x-answer': 'notModified', ...condition } },
];
for (const server of servers) {
  for (const path of [LIST, '/v1/artworks/1', LIST]) await load(server.url, { path, headers: path === LIST ? server.headers : auth, duration: 2, connections });
}

const results = servers.map(() => ({ rps: [], cpuUs: [] }));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const [i, server] of servers.entries()) {
    const before = cpuSeconds(server.pid);
    const { rps, bad, requests } = await load(server.url, { path: LIST, headers: server.headers, duration, connections });
    const cpuUs = ((cpuSeconds(server.pid) - before) / requests) * 1e6;
    if (bad > 0) throw new Error(`${server.name}: ${bad} answers that were not 2xx/3xx`);
    results[i].rps.push(rps);
    results[i].cpuUs.push(cpuUs);
    process.stderr.write(`  ${server.name}: ${Math.round(rps)} req/s, ${cpuUs.toFixed(1)} µs CPU per request\n`);
  }
}
await Promise.all([early, framework, bare].map((p) => stop(p.child)));
rmSync(dir, { recursive: true, force: true });

const bareRps = results[2].rps;
console.log(`\n304 (list, If-None-Match), wrk, ${connections} connections, ${duration} s × ${values.rounds} rounds; ratio = service / bare in the same round`);
for (const [i, server] of servers.entries()) {
  const ratios = results[i].rps.map((rps, round) => (rps / bareRps[round]).toFixed(2));
  console.log(`${server.name.padEnd(34)} req/s ${results[i].rps.map((r) => Math.round(r)).join(' / ')}   ratio ${ratios.join(' / ')}   CPU µs/request ${results[i].cpuUs.map((c) => c.toFixed(1)).join(' / ')}`);
}
