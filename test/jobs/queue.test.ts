import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest, migrator } from '../../src/db/migrate.js';
import { transaction } from '../../src/db/run.js';
import { enqueue, JobRunner, sweepKind, type JobKind } from '../../src/jobs/index.js';
import { endAndTake, endJob, queueGauges, takeJob } from '../../src/store/jobs.js';
import { DIALECT, freshDatabase, startApp, type TestApp } from '../helpers.js';
import { roundTrips } from '../support/round-trips.js';
import { until } from '../support/until.js';

/** The one queue seen from outside (docs/operations.md, Jobs): gauges, sweeps as jobs, the nudge after commit, one schedule. */

vi.setConfig({ testTimeout: 60_000 });

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t?.close(); });

const quiet = { info: () => undefined, warn: () => undefined };
const iso = (ms: number) => new Date(ms).toISOString();

/** The value of a gauge for a kind in /metrics' text, or undefined when the series is absent. */
async function gauge(name: string, kind: string): Promise<number | undefined> {
  const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(`${name}{kind="${kind}"} `));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
}

test('/metrics has, per kind, the jobs queued, running, failed in the last hour, and the age of the oldest due job', async () => {
  const now = Date.now();
  await transaction(t.handle.db, function* () {
    yield* enqueue('image', { key: 'https://a.example/1.jpg', entityId: 901, dueAt: iso(now - 120_000), at: iso(now) });
    yield* enqueue('image', { key: 'https://a.example/2.jpg', entityId: 901, dueAt: iso(now - 10_000), at: iso(now) });
    yield* enqueue('image', { key: 'https://a.example/3.jpg', entityId: 902, dueAt: iso(now + 3_600_000), at: iso(now) });
    yield* enqueue('image', { key: 'https://a.example/4.jpg', entityId: 902, dueAt: iso(now - 5_000), at: iso(now) });
  });
  // One taken (running), one ended with a failed outcome, as the runner does.
  const taken = (await takeJob(t.handle.db, { kind: 'image', now: iso(now), until: iso(now + 60_000), claim: 'test:1' }))!;
  expect(taken.key).toBe('https://a.example/1.jpg');
  const failing = (await takeJob(t.handle.db, { kind: 'image', now: iso(now), until: iso(now + 60_000), claim: 'test:2' }))!;
  expect(await endJob(t.handle.db, failing, { done: true, failed: { error: 'HTTP 404', at: iso(now) } })).toBe(true);
  expect(await gauge('art_catalog_jobs_queued', 'image')).toBe(2);
  expect(await gauge('art_catalog_jobs_running', 'image')).toBe(1);
  expect(await gauge('art_catalog_jobs_failed_last_hour', 'image')).toBe(1);
  // Round-robin took entity 901's job due 2 min ago and 902's due 5 s ago: the oldest due now waited 10 s.
  const oldest = await gauge('art_catalog_jobs_oldest_due_seconds', 'image');
  expect(oldest).toBeGreaterThanOrEqual(5);
  expect(oldest).toBeLessThan(30);
  for (const kind of ['feed_run', 'webhook', 'sweep_idempotency_keys', 'sweep_sessions', 'sweep_feed_runs', 'sweep_webhook_messages', 'sweep_image_files']) {
    expect(await gauge('art_catalog_jobs_queued', kind), kind).toBeDefined();
  }
  // One entity's numbers (what `jobs --entity` prints).
  const [image] = await queueGauges(t.handle.db, ['image'], Date.now(), 902);
  expect(image).toMatchObject({ queued: 1, running: 0, failedLastHour: 1 });
});

test('every sweep is one recurring job of the queue, however many processes start', async () => {
  const second = await startApp({}, t.config.databaseUrl);
  try {
    for (const kind of ['sweep_idempotency_keys', 'sweep_sessions', 'sweep_feed_runs', 'sweep_webhook_messages', 'sweep_image_files']) {
      const jobs = await t.handle.db.selectFrom('jobs').select(['key', 'due_at']).where('kind', '=', kind).execute();
      expect(jobs, kind).toHaveLength(1);
      // Its first round an interval after the first start.
      expect(Date.parse(jobs[0]!.due_at) - Date.now(), kind).toBeGreaterThan(3_000_000);
    }
  } finally {
    await second.app.close();
    await second.handle.close();
  }
});

test('a sweep that fails is counted as a failed job, and is due again at its next round', async () => {
  const kind = sweepKind('test_broken', 3_600_000, async () => { throw new Error('disk full'); }, quiet);
  await transaction(t.handle.db, () => enqueue(kind, { key: 'recurring', entityId: 0, dueAt: iso(Date.now() - 1000), at: iso(Date.now()) }));
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start();
  try {
    expect(await until(() => (runner.ended.get(kind.name) ?? 0) === 1)).toBe(true);
  } finally {
    await runner.close(0);
  }
  const [gauges] = await queueGauges(t.handle.db, [kind.name], Date.now());
  expect(gauges).toMatchObject({ queued: 1, running: 0, failedLastHour: 1, oldestDueSeconds: 0 });
  const job = await t.handle.db.selectFrom('jobs').select(['due_at', 'attempts']).where('kind', '=', kind.name).executeTakeFirstOrThrow();
  expect(Date.parse(job.due_at) - Date.now()).toBeGreaterThan(3_500_000);
  expect(Number(job.attempts)).toBe(0);
});

test('a job queued by a write that commits is started at once by an idle slot of this process, not at its next poll', async () => {
  const started: string[] = [];
  const kind: JobKind<null> = {
    name: 'test_nudged', concurrency: 1,
    run: async (job) => { started.push(job.key); return { end: 'done' }; },
    giveUp: () => ({ end: 'done' }),
  };
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 60_000 }).register(kind).start();
  try {
    // The slot has looked once and is idle for a minute.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await transaction(t.handle.db, () => enqueue(kind, { key: 'now', entityId: 1, dueAt: iso(Date.now()), at: iso(Date.now()) }));
    expect(await until(() => started.length === 1, 5_000)).toBe(true);
  } finally {
    await runner.close(0);
  }
});

test('migration 020 keeps every job, names the feed runs\' kind feed_run, and drops the copies of the schedule', async () => {
  const fresh = await freshDatabase();
  const handle = connect(fresh.url);
  try {
    expect((await migrator(handle).migrateTo('016_sealed_webhook_secrets')).error).toBeUndefined();
    const at = '2030-01-01T00:00:00.000Z';
    await sql`insert into jobs (kind, key, entity_id, attempts, claims, due_at, created_at) values ('feed-run', 'feed:7', 3, 0, 0, ${at}, ${at})`.execute(handle.db);
    await sql`insert into job_turns (kind, entity_id, turn) values ('feed-run', 3, '')`.execute(handle.db);
    await migrateToLatest(handle);
    expect(await handle.db.selectFrom('jobs').select(['kind', 'key', 'due_at']).execute()).toEqual([{ kind: 'feed_run', key: 'feed:7', due_at: at }]);
    expect(await handle.db.selectFrom('job_turns').select(['kind', 'entity_id']).execute()).toEqual([{ kind: 'feed_run', entity_id: 3 }]);
    await expect(sql`select next_run_at from feeds`.execute(handle.db)).rejects.toThrow();
    await expect(sql`select next_attempt_at from webhook_messages`.execute(handle.db)).rejects.toThrow();
    await expect(sql`select due_at from images`.execute(handle.db)).rejects.toThrow();
  } finally {
    await handle.close();
    await fresh.drop();
  }
});

test.skipIf(DIALECT !== 'postgres')('takes of one entity do not wait for each other: one is taken while another taker of the entity holds its turn', async () => {
  const kind = 'test_parallel_takes';
  const now = Date.now();
  await transaction(t.handle.db, function* () {
    for (const [key, group] of [['m1', 'a'], ['m2', 'b']] as const) yield* enqueue(kind, { key, entityId: 77, group, dueAt: iso(now - 1000), at: iso(now) });
  });
  // Another process in the middle of a take of this entity: its turn's row is locked until it commits.
  const other = new pg.Client({ connectionString: t.config.databaseUrl });
  await other.connect();
  try {
    await other.query('begin');
    await other.query('select * from job_turns where kind = $1 and entity_id = 77 for update', [kind]);
    const started = Date.now();
    const taking = takeJob(t.handle.db, { kind, now: iso(Date.now()), until: iso(Date.now() + 60_000), claim: 'test:parallel', groupCap: 4 });
    const first = await Promise.race([taking, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 3_000))]);
    await other.query('rollback');
    expect(first).not.toBe('waited');
    expect(first).toMatchObject({ key: 'm1', entityId: 77 });
    expect(Date.now() - started).toBeLessThan(3_000);
    await taking;
  } finally {
    await other.end();
  }
});

test.skipIf(DIALECT !== 'postgres')('takes of one group run at once up to its cap: a take goes on while another taker is mid-take in that group, and the cap still holds', async () => {
  const kind = 'test_group_slots';
  const now = Date.now();
  await transaction(t.handle.db, function* () {
    for (let i = 0; i < 6; i++) yield* enqueue(kind, { key: `g${i}`, entityId: 78, group: 'e1', dueAt: iso(now - 1000 + i), at: iso(now) });
  });
  // Another taker in the middle of its take in this group (it holds the group's first slot).
  const other = new pg.Client({ connectionString: t.config.databaseUrl });
  await other.connect();
  try {
    await other.query('begin');
    await other.query(`select pg_advisory_xact_lock(hashtext($1 || '/' || 'e1' || '#' || '0'))`, [kind]);
    const take = () => takeJob(t.handle.db, { kind, now: iso(Date.now()), until: iso(Date.now() + 60_000), claim: `test:${Math.random()}`, groupCap: 2 });
    const first = await take();
    expect(first).toMatchObject({ key: 'g0', group: 'e1' });
    // Slot 0 is the other taker's, slot 1 is now this one's: the cap of 2 counts the other taker's place.
    expect(await take()).toBeUndefined();
    await other.query('rollback');
    expect(await take()).toMatchObject({ key: 'g1' });
    expect(await take()).toBeUndefined();
  } finally {
    await other.end();
  }
});

test('a run\'s log is saved with its end even when its claim was lost meanwhile (a webhook attempt happened either way); its record is not', async () => {
  const kind = 'test_log';
  const at = iso(Date.now());
  await transaction(t.handle.db, () => enqueue(kind, { key: 'job', entityId: 79, dueAt: at, at }));
  const taken = (await takeJob(t.handle.db, { kind, now: iso(Date.now()), until: iso(Date.now() + 60_000), claim: 'test:log' }))!;
  // Sent again while it ran (a Retry): its claim is cleared.
  await transaction(t.handle.db, () => enqueue(kind, { key: 'job', entityId: 79, dueAt: at, at, existing: 'reschedule' }));
  const { saved } = await endAndTake(t.handle.db, taken, { done: true }, {
    record: () => enqueue(kind, { key: 'recorded', entityId: 79, dueAt: at, at }),
    log: () => enqueue(kind, { key: 'logged', entityId: 79, dueAt: at, at }),
  });
  expect(saved).toBe(false);
  const keys = (await t.handle.db.selectFrom('jobs').select('key').where('kind', '=', kind).orderBy('key').execute()).map((row) => row.key);
  expect(keys).toEqual(['job', 'logged']);
});

test.skipIf(DIALECT !== 'postgres')('a job\'s end that takes its group\'s next job is 6 round trips, BEGIN and COMMIT included; the entity\'s turn moves with each take and goes with its last job', async () => {
  const kind = 'test_end_round_trips';
  const now = Date.now();
  await transaction(t.handle.db, function* () {
    for (let i = 0; i < 2; i++) yield* enqueue(kind, { key: `r${i}`, entityId: 80, group: 'e1', dueAt: iso(now - 1000 + i), at: iso(now) });
  });
  const turn = async () => (await t.handle.db.selectFrom('job_turns').select('turn').where('kind', '=', kind).where('entity_id', '=', 80).executeTakeFirst())?.turn;
  const take = (claim: string, at: number) => ({ kind, now: iso(at), until: iso(at + 60_000), claim, groupCap: 4 });
  const first = (await takeJob(t.handle.db, take('test:rt1', now)))!;
  expect(first.key).toBe('r0');
  const firstServed = await turn();
  expect(firstServed).not.toBe('');
  const { result: next, sent } = await roundTrips(t.config.databaseUrl, (db) => endAndTake(db, first, { done: true }, { next: take('test:rt2', now + 1) }));
  expect(next.saved).toBe(true);
  expect(next.next?.taken?.key).toBe('r1');
  // BEGIN (not waiting for the disk), the delete, the entity and its jobs able to start, a free slot, the take, COMMIT.
  expect(sent).toHaveLength(6);
  expect(await turn()).not.toBe(firstServed);
  // Its last job done, the entity's turn is forgotten (its next job goes first again).
  expect((await endAndTake(t.handle.db, next.next!.taken!, { done: true }, {})).saved).toBe(true);
  expect(await turn()).toBeUndefined();
});

test.skipIf(DIALECT !== 'postgres')('a take that finds nothing able to start is one read and opens no transaction, whether nothing is due or the group is full', async () => {
  const kind = 'test_empty_take_round_trips';
  const now = Date.now();
  const take = (claim: string) => ({ kind, now: iso(now), until: iso(now + 60_000), claim, groupCap: 1 });
  const nothing = await roundTrips(t.config.databaseUrl, (db) => takeJob(db, take('test:e0')));
  expect(nothing.result).toBeUndefined();
  expect(nothing.sent).toHaveLength(1);
  await transaction(t.handle.db, function* () {
    for (let i = 0; i < 2; i++) yield* enqueue(kind, { key: `f${i}`, entityId: 81, group: 'e1', dueAt: iso(now - 1000 + i), at: iso(now) });
  });
  // The entities with a job due and the first one's jobs able to start (one statement), then BEGIN, a free slot, the take, COMMIT.
  const one = await roundTrips(t.config.databaseUrl, (db) => takeJob(db, take('test:e1')));
  expect(one.result?.key).toBe('f0');
  expect(one.sent).toHaveLength(5);
  // Its group of cap 1 full: the entity (a job due), none of its jobs able to start; no BEGIN, no COMMIT.
  const full = await roundTrips(t.config.databaseUrl, (db) => takeJob(db, take('test:e2')));
  expect(full.result).toBeUndefined();
  expect(full.sent).toHaveLength(1);
  expect(full.sent.some((text) => /^\s*(BEGIN|COMMIT)/i.test(text))).toBe(false);
});
