#!/usr/bin/env node
// What the API key cache (src/http/plugins/key-cache.ts) costs with 10,000 cached keys: one background
// round (the 200 most recently cached keys confirmed in one SQLite statement), a key revoked in this
// process (key-changed) and an entity paused (entity-changed, its 10 keys), each dropped entry cached
// again after. Main-thread CPU per operation; several --dist (another checkout's dist/) are measured
// in turns in one process, so a loaded machine weighs on each alike.
//
//   node bench/key-cache.mjs [--keys 10000] [--rounds 2000] [--dist DIR ...]   (needs `npm run build`)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const self = fileURLToPath(import.meta.url);
const { values } = parseArgs({ options: {
  keys: { type: 'string', default: '10000' },
  rounds: { type: 'string', default: '2000' },
  dist: { type: 'string', multiple: true, default: [join(self, '..', '..', 'dist')] },
} });
const KEYS = Number(values.keys);
const ROUNDS = Number(values.rounds);
const dir = mkdtempSync(join(tmpdir(), 'bench-key-cache-'));

async function setUp(dist, index) {
  const load = (path) => import(pathToFileURL(join(dist, path)).href);
  const [{ connect }, { migrateToLatest }, { createEntity }, { createKey, withdrawnKeys }, { KeyCache }, { invalidations }] = await Promise.all([
    load('db/connect.js'), load('db/migrate.js'), load('store/entities.js'), load('store/keys.js'), load('http/plugins/key-cache.js'), load('store/notifications.js'),
  ]);
  const handle = connect(`sqlite:${join(dir, `${index}.db`)}`);
  await migrateToLatest(handle);
  const gallery = await createEntity(handle.db, { type: 'gallery', name: 'Bench Gallery' });
  const { row } = await createKey(handle.db, { entityId: gallery.id, tier: 'subscriber', scopes: ['read'], expiresAt: null });
  const cache = new KeyCache(3_600_000, KEYS + 1);
  // Every entry names the one real key (so that a round withdraws none), under its own hash and prefix; 10 keys an entity.
  const found = (i) => ({ key: { ...row, prefix: `bk_${i}` }, entity: { ...gallery, id: 1_000_000 + Math.floor(i / 10) } });
  for (let i = 0; i < KEYS; i++) cache.set(`hash-${i}`, found(i), Date.now());
  // The round's signature changed with the indexes: (db) before, (withdrawn ids) after.
  const indexed = 'byKeyId' in cache;
  const round = () => (indexed ? cache.recheck((ids) => withdrawnKeys(handle.db, ids)) : cache.recheck(handle.db));
  let n = 0;
  return {
    dist, round, handle,
    dropKey() {
      const i = n++ % KEYS;
      invalidations.emit('key-changed', `bk_${i}`);
      cache.set(`hash-${i}`, found(i), Date.now());
    },
    dropEntity() {
      const e = n++ % (KEYS / 10);
      invalidations.emit('entity-changed', 1_000_000 + e);
      for (let i = e * 10; i < e * 10 + 10; i++) cache.set(`hash-${i}`, found(i), Date.now());
    },
    close() { cache.close(); return handle.close(); },
  };
}

/** Main-thread CPU microseconds per call of `work`, over `times` calls. */
async function cpu(work, times) {
  const start = process.cpuUsage();
  for (let i = 0; i < times; i++) await work();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / times;
}

const subjects = [];
for (const [index, dist] of values.dist.entries()) subjects.push(await setUp(dist, index));
const results = new Map(subjects.map((s) => [s.dist, { round: [], dropKey: [], dropEntity: [] }]));
for (let turn = 0; turn < 5; turn++) {
  for (const s of subjects) {
    const r = results.get(s.dist);
    r.round.push(await cpu(s.round, ROUNDS / 5));
    r.dropKey.push(await cpu(s.dropKey, ROUNDS / 5));
    r.dropEntity.push(await cpu(s.dropEntity, ROUNDS / 5));
  }
}
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
console.log(`${KEYS} cached keys, ${ROUNDS} of each, main-thread CPU µs per operation (median of 5 turns)`);
for (const [dist, r] of results) {
  console.log(`${dist}: round ${median(r.round).toFixed(1)}  key-changed ${median(r.dropKey).toFixed(1)}  entity-changed ${median(r.dropEntity).toFixed(1)}`);
}
for (const s of subjects) await s.close();
rmSync(dir, { recursive: true, force: true });
