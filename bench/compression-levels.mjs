// Bytes and time of brotli qualities and gzip levels on the service's own answers (a changelog page
// of 100 and a list page of 50 at the bench's catalog): how the service's levels were chosen
// (src/http-common/compression.ts, docs/performance.md).  node bench/compression-levels.mjs
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { benchTenant, seedArtworks, startService, stop } from './lib.mjs';

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-levels-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'levels.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0' };
const { key } = benchTenant(env, 'Levels Gallery');
const server = startService(env);
const url = await server.url;
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
await seedArtworks(url, auth, 1000, 'levels');
const bodies = {
  'changelog 100': Buffer.from(await (await fetch(`${url}/v1/changelog?after=0&limit=100`, { headers: auth })).arrayBuffer()),
  'list 50': Buffer.from(await (await fetch(`${url}/v1/artworks?limit=50&page=3`, { headers: auth })).arrayBuffer()),
};
await stop(server.child);
rmSync(dir, { recursive: true, force: true });

const time = (fn) => {
  for (let i = 0; i < 5; i++) fn();
  const runs = 40;
  const start = process.hrtime.bigint();
  let out;
  for (let i = 0; i < runs; i++) out = fn();
  return { us: Number(process.hrtime.bigint() - start) / 1000 / runs, bytes: out.length };
};
for (const [name, body] of Object.entries(bodies)) {
  console.log(`\n${name}: ${body.length} bytes`);
  console.log('coding            bytes   ratio   µs each');
  const row = (label, r) => console.log(`${label.padEnd(16)}${String(r.bytes).padStart(7)}${(r.bytes / body.length).toFixed(3).padStart(8)}${r.us.toFixed(0).padStart(10)}`);
  for (const level of [1, 6, 9]) row(`gzip ${level}`, time(() => gzipSync(body, { level })));
  for (const quality of [1, 4, 5, 6, 9, 11]) {
    row(`br ${quality}`, time(() => brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: quality, [constants.BROTLI_PARAM_LGWIN]: 18, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } })));
  }
}
