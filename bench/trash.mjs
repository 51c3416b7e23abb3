// A list read beside a large trash (issue #45): the same artworks list read by cursor, and a record read,
// before and after 100,000 deleted artworks lie in the entity's trash; the ratio is what we quote
// (docs/performance.md, Trash). The trash is a table of its own: the lists never read it.
//   node bench/trash.mjs [--artworks N] [--trash N] [--rounds N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { ROOT, benchTenant, seedArtworks, startService, stop } from './lib.mjs';

const { values } = parseArgs({ options: { artworks: { type: 'string', default: '2000' }, trash: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } } });
const ARTWORKS = Number(values.artworks);
const TRASH = Number(values.trash);
const ROUNDS = Number(values.rounds);

const dir = mkdtempSync(join(tmpdir(), 'art-catalog-trash-'));
const databaseUrl = `sqlite:${join(dir, 'trash.db')}`;
const env = { DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', RATE_LIMIT_PARTNER: '1000000000', PORT: '0', ANSWER_CACHE_MB: '0' };
const { entity, key } = benchTenant(env, 'Trash Gallery');
const service = startService(env);
const url = await service.url;
const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
process.stderr.write(`seeding ${ARTWORKS} artworks…\n`);
await seedArtworks(url, auth, ARTWORKS, 'trash');

/** Reads the whole catalog by cursor, 100 a page, then 200 single records: the milliseconds of each pass. */
async function pass() {
  let started = performance.now();
  for (let after = 0; ;) {
    const page = await (await fetch(`${url}/v1/artworks?after=${after}&limit=100`, { headers: auth })).json();
    if (!page.has_more) break;
    after = page.next_after;
  }
  const list = performance.now() - started;
  started = performance.now();
  for (let id = 1; id <= 200; id += 1) await (await fetch(`${url}/v1/artworks/${id}`, { headers: auth })).arrayBuffer();
  return { list, get: performance.now() - started };
}
const best = async () => {
  await pass();
  const runs = [];
  for (let i = 0; i < ROUNDS; i += 1) runs.push(await pass());
  return { list: Math.min(...runs.map((r) => r.list)), get: Math.min(...runs.map((r) => r.get)) };
};

const without = await best();
process.stderr.write(`filling the trash with ${TRASH} records…\n`);
execFileSync(process.execPath, ['--input-type=module', '-e', `
  import { connect } from './dist/db/connect.js';
  const { db, close } = connect(${JSON.stringify(databaseUrl)});
  const at = Date.parse('2026-11-01T00:00:00Z');
  for (let done = 0; done < ${TRASH}; done += 1000) {
    const rows = Array.from({ length: Math.min(1000, ${TRASH} - done) }, (_, i) => ({
      owner_id: ${entity.id}, kind: 'artworks', record_id: 10_000_000 + done + i, title: 'Deleted ' + (done + i), artist_name: 'Someone',
      image_url: null, record: '{}', deleted_at: new Date(at + (done + i) * 1000).toISOString(), deleted_by: 'feed:1',
    }));
    await db.insertInto('trash').values(rows).execute();
  }
  await close();
`], { cwd: ROOT, stdio: 'inherit' });
const beside = await best();
await stop(service.child);
rmSync(dir, { recursive: true, force: true });

const ratio = (a, b) => (a / b).toFixed(2);
console.log(JSON.stringify({
  artworks: ARTWORKS, trash: TRASH,
  list_ms: { without: Math.round(without.list), beside: Math.round(beside.list), throughput_ratio: ratio(without.list, beside.list) },
  get_200_ms: { without: Math.round(without.get), beside: Math.round(beside.get), throughput_ratio: ratio(without.get, beside.get) },
}, null, 1));
