import { afterAll, beforeAll, expect, test } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { transaction } from '../../src/db/run.js';
import { enqueue } from '../../src/jobs/index.js';
import { freshDatabase, type FreshDatabase } from '../helpers.js';
import { cliOn } from '../support/cli.js';

/** `bin/art-catalog jobs` (docs/operations.md, Jobs): the queue's gauges as a table, as JSON, and for one entity. */

let database: FreshDatabase;
let handle: DatabaseHandle;
beforeAll(async () => {
  database = await freshDatabase();
  handle = connect(database.url);
  await migrateToLatest(handle);
  const now = Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  await transaction(handle.db, function* () {
    yield* enqueue('image', { key: 'https://a.example/1.jpg', entityId: 5, dueAt: iso(now - 90_000), at: iso(now) });
    yield* enqueue('image', { key: 'https://a.example/2.jpg', entityId: 6, dueAt: iso(now), at: iso(now) });
    yield* enqueue('webhook', { key: 'msg_1', entityId: 6, group: '1', dueAt: iso(now + 60_000), at: iso(now) });
  });
});
afterAll(async () => {
  await handle.close();
  await database.drop();
});

const jobs = (...args: string[]) => cliOn(database.url, ['jobs', ...args]);

test('jobs prints one row per kind: queued, running, failed in the last hour, oldest due in seconds', async () => {
  const { code, stdout, stderr } = await jobs();
  expect([code, stderr]).toEqual([0, '']);
  const rows = stdout.trim().split('\n').map((line) => line.trim().split(/\s{2,}/));
  expect(rows[0]).toEqual(['kind', 'queued', 'running', 'failed (1 h)', 'oldest due (s)']);
  const image = rows.find((row) => row[0] === 'image')!;
  expect(image.slice(1, 4)).toEqual(['2', '0', '0']);
  expect(Number(image[4])).toBeGreaterThanOrEqual(90);
  expect(rows.find((row) => row[0] === 'webhook')).toEqual(['webhook', '1', '0', '0', '0']);
  expect(rows.map((row) => row[0])).toEqual(expect.arrayContaining(['feed_run', 'sweep_idempotency_keys', 'sweep_sessions', 'sweep_feed_runs', 'sweep_webhook_messages', 'sweep_image_files']));
});

test('jobs --entity ID --json: the same numbers for one gallery, as JSON', async () => {
  const { code, stdout } = await jobs('--entity', '6', '--json');
  expect(code).toBe(0);
  const answer = JSON.parse(stdout);
  expect(answer.entity_id).toBe(6);
  expect(answer.kinds.find((k: { kind: string }) => k.kind === 'image')).toEqual({ kind: 'image', queued: 1, running: 0, failed_last_hour: 0, oldest_due_seconds: expect.any(Number) });
  expect(answer.kinds.find((k: { kind: string }) => k.kind === 'webhook')).toEqual({ kind: 'webhook', queued: 1, running: 0, failed_last_hour: 0, oldest_due_seconds: 0 });
});

test('jobs --entity with something not an id is refused with a clear message', async () => {
  const { code, stderr } = await jobs('--entity', 'nord');
  expect(code).not.toBe(0);
  expect(stderr).toMatch(/--entity/);
});
