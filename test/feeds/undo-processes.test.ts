import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { migratedDatabase, type FreshDatabase } from '../helpers.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { spawnServe, type ServeProcess } from '../support/serve.js';

/** An undo in real server processes (docs/api.md, Runs: undo a run): killed with -9 half-way, every record is before or after it, and another process takes it over. */

// Server processes start and apply slowly on the shared machines tests run on.
vi.setConfig({ testTimeout: 240_000 });

let files: FileServer;
let database: FreshDatabase;
let handle: DatabaseHandle;
const servers: ServeProcess[] = [];
const ENV = { FETCH_ALLOW_PRIVATE: 'true', JOB_LEASE_S: '3' };

beforeAll(async () => {
  files = await fileServer();
  database = await migratedDatabase();
  handle = connect(database.url);
});

afterAll(async () => {
  for (const server of servers) server.child.kill('SIGKILL');
  await handle?.close();
  await database?.drop();
  await files?.close();
});

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
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('kill -9 during an undo leaves every record before or after it, and another process takes the undo over', async () => {
  const ROWS = 3000;
  files.set('/undo.csv', csv('external_id,title,creation_year', ...Array.from({ length: ROWS }, (_, i) => `U-${i},Work ${i},${1900 + (i % 100)}`)));
  const entity = await createEntity(handle.db, { type: 'gallery', name: 'Killed Undo', city: 'Berlin', country: 'DE' });
  const { key } = await createKey(handle.db, { entityId: entity.id, tier: 'partner', scopes: TIER_SCOPES.partner, expiresAt: null });
  const a = spawnServe({ DATABASE_URL: database.url, ...ENV, FEED_CONCURRENCY: '1' });
  servers.push(a);
  const base = await a.url;
  const feed = await call(base, key, 'POST', '/v1/feeds', { url: files.url('/undo.csv'), kind: 'artworks' });
  expect(feed.status).toBe(201);
  const run = await until('the feed run applied', async () => {
    const [last] = (await call(base, key, 'GET', `/v1/feeds/${feed.body.id}/runs?limit=1`)).body.runs;
    return last?.status === 'applied' && last;
  });
  const live = async () => Number((await sql<{ n: number }>`select count(*) as n from artworks where entity_id = ${entity.id}`.execute(handle.db)).rows[0]!.n);
  const trashed = async () => Number((await sql<{ n: number }>`select count(*) as n from trash where owner_id = ${entity.id}`.execute(handle.db)).rows[0]!.n);
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
  const both = await sql<{ n: number }>`select count(*) as n from artworks a join trash t on t.record_id = a.id and t.kind = 'artworks' where a.entity_id = ${entity.id}`.execute(handle.db);
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
