// What a sync client's reads cost on the wire (issue #27): a full mirror of 10,000 artworks through
// the typed client (by cursor, 100 per page), the same mirror again when nothing changed, and an idle
// changelog poll — before (plain answers, no ETags: what the service and client did until now) and
// after (compression and conditional requests). Bytes are counted on a TCP proxy between the two,
// headers included.   node bench/mirror.mjs [--artworks N]
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ArtCatalogClient } from '../dist/client/index.js';
import { benchTenant, seedArtworks, startService, stop } from './lib.mjs';

const { values } = parseArgs({ options: { artworks: { type: 'string', default: '10000' } } });
const ARTWORKS = Number(values.artworks);

/** A proxy that counts the bytes the server sends. */
function countingProxy(target) {
  const { hostname, port } = new URL(target);
  const counter = { bytes: 0 };
  const server = createServer((socket) => {
    // No Nagle on either side: a streamed answer's chunks would otherwise wait for delayed ACKs (40 ms).
    const upstream = createConnection({ host: hostname, port: Number(port), noDelay: true });
    socket.setNoDelay(true);
    upstream.on('data', (chunk) => { counter.bytes += chunk.length; });
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, counter, url: `http://127.0.0.1:${server.address().port}` })));
}

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-mirror-'));
const env = { DATABASE_URL: `sqlite:${join(dir, 'mirror.db')}`, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0' };
const { key } = benchTenant(env, 'Mirror Gallery');
const service = startService(env);
const serviceUrl = await service.url;
process.stderr.write(`seeding ${ARTWORKS} artworks…\n`);
await seedArtworks(serviceUrl, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ARTWORKS, 'mirror');
const proxy = await countingProxy(serviceUrl);

async function measure(label, client, work) {
  const before = proxy.counter.bytes;
  const started = performance.now();
  const result = await work(client);
  const ms = performance.now() - started;
  return { label, bytes: proxy.counter.bytes - before, ms: Math.round(ms), result };
}

const mirror = async (client) => {
  let n = 0;
  for await (const artwork of client.iterateArtworks({ limit: 100 })) n += artwork.id > 0 ? 1 : 0;
  return n;
};
const lastEntry = (await (await fetch(`${serviceUrl}/v1/changelog?limit=1&page=${ARTWORKS * 2}`, { headers: { authorization: `Bearer ${key}` } })).json()).total;
const poll = (client) => client.changelog({ after: lastEntry * 10, limit: 1000 });

// Before: no coding asked for (the server sent none before) and no kept answers.
const plainFetch = (input, init) => fetch(input, { ...init, headers: { ...init?.headers, 'accept-encoding': 'identity' } });
const plain = new ArtCatalogClient({ baseUrl: proxy.url, key, etags: false, fetch: plainFetch });
const current = new ArtCatalogClient({ baseUrl: proxy.url, key });
const rows = [];
for (const [when, client] of [['before', plain], ['after', current]]) {
  for (let i = 0; i < 2; i++) {
    const full = await measure(`${when}: full mirror${i ? ' again, nothing changed' : ''}`, client, mirror);
    if (full.result !== ARTWORKS) throw new Error(`mirrored ${full.result} artworks, not ${ARTWORKS}`);
    rows.push(full);
  }
  await poll(client);
  rows.push(await measure(`${when}: idle changelog poll`, client, poll));
}
proxy.server.close();
await stop(service.child);
rmSync(dir, { recursive: true, force: true });

console.log(`\n${ARTWORKS} artworks, 100 per page, SQLite, over loopback (bytes the server sent, headers included)`);
for (const r of rows) console.log(`${r.label.padEnd(42)}${String(r.bytes).padStart(12)} B${String(r.ms).padStart(8)} ms`);
