import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { artworkFingerprint } from '../../src/domain/fingerprint.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { DIALECT, freshDatabase, type FreshDatabase } from '../helpers.js';
import { BIN, spawnServe } from '../support/serve.js';

const ROWS = 5000;

let database: FreshDatabase;
let handle: DatabaseHandle;
let dir: string;
let file: string;
let key: string;
let entityId: number;
const children: ChildProcess[] = [];

const row = (i: number) => ({ title: `Crash Study ${i}`, artist_name: `Crash Artist ${i % 40}`, creation_year: 1900 + (i % 120) });

beforeAll(async () => {
  database = await freshDatabase();
  handle = connect(database.url);
  await migrateToLatest(handle);
  const entity = await createEntity(handle.db, { type: 'gallery', name: 'Crash Gallery' });
  entityId = entity.id;
  key = (await createKey(handle.db, { entityId, tier: 'partner', scopes: TIER_SCOPES.partner, expiresAt: null })).key;
  dir = mkdtempSync(join(tmpdir(), 'art-catalog-crash-'));
  file = join(dir, 'artworks.csv');
  writeFileSync(file, ['title,artist_name,creation_year', ...Array.from({ length: ROWS }, (_, i) => {
    const r = row(i);
    return `${r.title},${r.artist_name},${r.creation_year}`;
  })].join('\n'));
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await handle?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

async function serve() {
  const server = spawnServe({ DATABASE_URL: database.url, RATE_LIMIT_PARTNER: '1000000' });
  children.push(server.child);
  return { child: server.child, port: Number(new URL(await server.url).port) };
}

function push(port: number) {
  const child = spawn(BIN, ['push', file, '--kind', 'artworks', '--base-url', `http://127.0.0.1:${port}`, '--key', key, '--json'], { env: process.env });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  child.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

const stored = () => handle.db.selectFrom('artworks').select(['id', 'source_fingerprint']).where('entity_id', '=', entityId).execute();

test('kill -9 during a push loses no acknowledged artwork, duplicates none, keeps the changelog one-to-one, and a re-run completes the rest', async () => {
  const first = await serve();
  const run = push(first.port);
  // Wait until a good part is acknowledged, then pull the plug on the server (and on the client).
  for (;;) {
    const acknowledged = Number(/progress (\d+)\/\d+[^\n]*\n(?![\s\S]*progress)/.exec(run.output().stderr)?.[1] ?? 0);
    if (acknowledged >= 1500) break;
    if (run.child.exitCode !== null) throw new Error(`push ended before the crash: ${run.output().stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  first.child.kill('SIGKILL');
  run.child.kill('SIGKILL');
  await run.exited;
  const lines = run.output().stderr.trim().split('\n').filter((l) => l.startsWith('progress'));
  const acknowledged = Number(/created (\d+)/.exec(lines.at(-1)!)?.[1]);
  expect(acknowledged).toBeGreaterThanOrEqual(1500);
  expect(acknowledged).toBeLessThan(ROWS);

  // Every row the server acknowledged (rows go in file order, 100 a batch) is stored, once.
  const afterCrash = await stored();
  const fingerprints = new Set(afterCrash.map((a) => a.source_fingerprint));
  expect(fingerprints.size).toBe(afterCrash.length);
  for (let i = 0; i < acknowledged; i++) expect(fingerprints.has(artworkFingerprint(row(i)))).toBe(true);
  expect(afterCrash.length).toBeGreaterThanOrEqual(acknowledged);

  // The changelog holds exactly one create per stored artwork and nothing for rows that were not stored.
  const creates = await handle.db.selectFrom('changelog').select('record_id')
    .where('owner_id', '=', entityId).where('entity_type', '=', 'artwork').where('action', '=', 'create').execute();
  expect(creates.map((c) => c.record_id).sort((a, b) => a - b)).toEqual(afterCrash.map((a) => a.id).sort((a, b) => a - b));
  // PostgreSQL keeps an entity's counts in slots, one per writing connection (migration 006).
  const slots = await handle.db.selectFrom('entity_stats').select('artworks').where('entity_id', '=', entityId).execute();
  expect(slots.reduce((sum, slot) => sum + slot.artworks, 0)).toBe(afterCrash.length);

  if (DIALECT === 'sqlite') {
    const check = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(handle.db);
    expect(check.rows).toEqual([{ integrity_check: 'ok' }]);
  }

  // Restart and push the same file again: the rest is created, what was stored is left unchanged.
  const second = await serve();
  const rerun = push(second.port);
  expect(await rerun.exited).toBe(0);
  const summary = JSON.parse(rerun.output().stdout);
  expect(summary).toMatchObject({ total: ROWS, created: ROWS - afterCrash.length, unchanged: afterCrash.length, updated: 0, failed: 0 });
  const final = await stored();
  expect(final).toHaveLength(ROWS);
  expect(new Set(final.map((a) => a.source_fingerprint)).size).toBe(ROWS);
  const allCreates = await handle.db.selectFrom('changelog').select((eb) => eb.fn.countAll<number>().as('n'))
    .where('owner_id', '=', entityId).where('entity_type', '=', 'artwork').where('action', '=', 'create').executeTakeFirstOrThrow();
  expect(Number(allCreates.n)).toBe(ROWS);
  second.child.kill('SIGTERM');
}, 120_000);
