import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { DIALECT, migratedDatabase, type FreshDatabase } from '../helpers.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { spawnServe, type ServeProcess } from '../support/serve.js';

/**
 * Feed runs and undos in real server processes on one database (docs/api.md, Feeds; Runs): each due feed run
 * once, a killed run taken over, a killed undo taken over with every record before or after it.
 */

// Server processes start and apply slowly on the shared machines tests run on.
vi.setConfig({ testTimeout: 240_000 });

let files: FileServer;
let database: FreshDatabase;
let handle: DatabaseHandle;
const servers: ServeProcess[] = [];
const ENV = { FETCH_ALLOW_PRIVATE: 'true', JOB_LEASE_S: '3' };

beforeAll(async () => {
  files = await fileServer();
  // A copy of the run's migrated template: the helpers below need the tables before a server starts.
  database = await migratedDatabase();
  // The test's own handle: a connection opened while the machine is loaded (CI runs test files in parallel) may take longer than the service's 750 ms.
  handle = connect(database.url, { connectTimeoutMs: 10_000 });
});

afterAll(async () => {
  for (const server of servers) server.child.kill('SIGKILL');
  await handle?.close();
  await database?.drop();
  await files?.close();
});

async function gallery(name: string) {
  const entity = await createEntity(handle.db, { type: 'gallery', name, city: 'Berlin', country: 'DE' });
  const { key } = await createKey(handle.db, { entityId: entity.id, tier: 'partner', scopes: TIER_SCOPES.partner, expiresAt: null });
  return { id: entity.id, key };
}

const call = async (base: string, key: string, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${base}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: await response.json() as any };
};

async function until<T>(what: string, check: () => Promise<T | undefined | false>, ms = 180_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const runsOf = async (feedId: number) =>
  (await sql<{ id: number; status: string }>`select id, status from feed_runs where feed_id = ${feedId} order by id`.execute(handle.db)).rows;

test.runIf(DIALECT === 'postgres')('two server processes on PostgreSQL run each due feed exactly once', async () => {
  const a = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '2' });
  const b = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '2' });
  servers.push(a, b);
  const [baseA] = await Promise.all([a.url, b.url]);
  const feeds: number[] = [];
  for (let g = 0; g < 3; g++) {
    const { key } = await gallery(`Two Processes ${g}`);
    for (let f = 0; f < 3; f++) {
      const path = `/two-${g}-${f}.csv`;
      files.set(path, csv('title,external_id', `Work ${g}-${f},E-${f}`));
      const created = await call(baseA, key, 'POST', '/v1/feeds', { url: files.url(path), kind: 'artworks' });
      expect(created.status).toBe(201);
      feeds.push(created.body.id);
    }
  }
  await until('every feed applied', async () => {
    for (const id of feeds) if ((await runsOf(id)).at(-1)?.status !== 'applied') return false;
    return true;
  });
  // A moment for a second run that should not happen.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  for (const id of feeds) expect(await runsOf(id)).toHaveLength(1);
  // Each file is read twice: once when its feed is created (its mapping stored: docs/api.md, Feeds), once by the one run.
  for (let g = 0; g < 3; g++) for (let f = 0; f < 3; f++) expect(files.requests.filter((r) => r.path === `/two-${g}-${f}.csv`)).toHaveLength(2);
  await Promise.all([a.stop(), b.stop()]);
});

test('kill -9 during a run leaves every row whole, and another process takes the run over', async () => {
  const ROWS = 3000;
  const line = (i: number) => `K-${i},Work number ${i},Artist ${i % 50},${1900 + (i % 100)}`;
  files.set('/big.csv', csv('external_id,title,artist_name,creation_year', ...Array.from({ length: ROWS }, (_, i) => line(i))));
  const { id: entityId, key } = await gallery('Killed Run');
  const a = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '1' });
  servers.push(a);
  const created = await call(await a.url, key, 'POST', '/v1/feeds', { url: files.url('/big.csv'), kind: 'artworks' });
  expect(created.status).toBe(201);
  const count = async () => Number((await sql<{ n: number }>`select count(*) as n from artworks where entity_id = ${entityId}`.execute(handle.db)).rows[0]!.n);
  await until('part of the file written', async () => { const n = await count(); return n > 0 && n < ROWS; });
  a.child.kill('SIGKILL');
  await a.exited;
  const partial = await count();
  expect(partial).toBeLessThan(ROWS);
  // Each row written is the file's row, whole.
  const rows = (await sql<{ external_id: string; title: string; artist_name: string; creation_year: number }>`select external_id, title, artist_name, creation_year from artworks where entity_id = ${entityId}`.execute(handle.db)).rows;
  for (const row of rows) {
    const i = Number(row.external_id.slice(2));
    expect(`${row.external_id},${row.title},${row.artist_name},${row.creation_year}`).toBe(line(i));
  }
  const [run] = await runsOf(created.body.id);
  expect(run!.status).toBe('running');

  const b = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '1' });
  servers.push(b);
  await b.url;
  await until('the run taken over and applied', async () => (await runsOf(created.body.id))[0]?.status === 'applied');
  expect(await runsOf(created.body.id)).toHaveLength(1);
  expect(await count()).toBe(ROWS);
  const entries = Number((await sql<{ n: number }>`select count(*) as n from changelog where owner_id = ${entityId} and entity_type = 'artwork'`.execute(handle.db)).rows[0]!.n);
  expect(entries).toBe(ROWS);
  await b.stop();
});

test('kill -9 during an undo leaves every record before or after it, and another process takes the undo over', async () => {
  const ROWS = 3000;
  files.set('/undo.csv', csv('external_id,title,creation_year', ...Array.from({ length: ROWS }, (_, i) => `U-${i},Work ${i},${1900 + (i % 100)}`)));
  const { id: entityId, key } = await gallery('Killed Undo');
  const a = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '1' });
  servers.push(a);
  const base = await a.url;
  const feed = await call(base, key, 'POST', '/v1/feeds', { url: files.url('/undo.csv'), kind: 'artworks' });
  expect(feed.status).toBe(201);
  const run = await until('the feed run applied', async () => {
    const [last] = (await call(base, key, 'GET', `/v1/feeds/${feed.body.id}/runs?limit=1`)).body.runs;
    return last?.status === 'applied' && last;
  });
  const live = async () => Number((await sql<{ n: number }>`select count(*) as n from artworks where entity_id = ${entityId}`.execute(handle.db)).rows[0]!.n);
  const trashed = async () => Number((await sql<{ n: number }>`select count(*) as n from trash where owner_id = ${entityId}`.execute(handle.db)).rows[0]!.n);
  expect(await live()).toBe(ROWS);

  const started = await call(base, key, 'POST', `/v1/runs/${run.id}/undo`, {});
  expect(started.status).toBe(202);
  await until('part of the run undone', async () => { const n = await live(); return n > 0 && n < ROWS; });
  a.child.kill('SIGKILL');
  await a.exited;
  // Each record is either live (before the undo) or in the trash (after it), never both, never neither.
  const [before, after] = [await live(), await trashed()];
  expect(before).toBeGreaterThan(0);
  expect(before + after).toBe(ROWS);
  const both = await sql<{ n: number }>`select count(*) as n from artworks a join trash t on t.record_id = a.id and t.kind = 'artworks' where a.entity_id = ${entityId}`.execute(handle.db);
  expect(Number(both.rows[0]!.n)).toBe(0);
  const [undoRun] = (await sql<{ status: string }>`select status from feed_runs where id = ${started.body.id}`.execute(handle.db)).rows;
  expect(undoRun!.status).toBe('running');

  const b = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '0' });
  servers.push(b);
  const baseB = await b.url;
  const done = await until('the undo taken over and applied', async () => {
    const answer = (await call(baseB, key, 'GET', `/v1/runs/${started.body.id}`)).body;
    return answer.status === 'applied' && answer;
  });
  expect(done).toMatchObject({ kind: 'undo', counts: { deleted: ROWS, rows: ROWS }, problems: [] });
  expect(await live()).toBe(0);
  expect(await trashed()).toBe(ROWS);
  // Each record was undone once: one delete entry each, under the undo's run.
  const entries = await sql<{ n: number }>`select count(*) as n from changelog where run_id = ${started.body.id} and action = 'delete'`.execute(handle.db);
  expect(Number(entries.rows[0]!.n)).toBe(ROWS);
  await b.stop();
});
