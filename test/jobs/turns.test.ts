import pg from 'pg';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { transaction } from '../../src/db/run.js';
import { enqueue, JobRunner, sweepKind, type JobKind } from '../../src/jobs/index.js';
import { sweepJobTurns, takeJob } from '../../src/store/jobs.js';
import { client, DIALECT, startApp, tenant, type TestApp } from '../helpers.js';
import { until } from '../support/until.js';
import { startReceiver } from '../support/webhook-receiver.js';

/**
 * An entity's turn (job_turns) and the writes that queue its jobs (docs/performance.md, Webhooks,
 * "Writes never wait for takes"): a write does not wait for a take's open transaction on the turn, and
 * a job left without a turn (a write racing the end of its entity's last job) is still taken.
 */

vi.setConfig({ testTimeout: 60_000 });

let t: TestApp;
beforeAll(async () => { t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' }); });
afterAll(async () => { await t?.close(); });

const quiet = { info: () => undefined, warn: () => undefined };
const iso = (ms: number) => new Date(ms).toISOString();
const turnOf = (kind: string, entityId: number) =>
  t.handle.db.selectFrom('job_turns').select('turn').where('kind', '=', kind).where('entity_id', '=', entityId).executeTakeFirst();
const dropTurnOf = (kind: string, entityId: number) =>
  t.handle.db.deleteFrom('job_turns').where('kind', '=', kind).where('entity_id', '=', entityId).execute();

/** A kind whose runs end at once, noting the keys they ran. */
function recordingKind(name: string, ran: string[]): JobKind<null> {
  return { name, concurrency: 1, run: async (job) => { ran.push(job.key); return { end: 'done' }; }, giveUp: () => ({ end: 'done' }) };
}

/** Resolves to 'waited' if `work` has not settled within `ms`. */
const within = <T>(work: Promise<T>, ms: number): Promise<T | 'waited'> =>
  Promise.race([work, new Promise<'waited'>((resolve) => { setTimeout(() => resolve('waited'), ms).unref(); })]);

test.skipIf(DIALECT !== 'postgres')('a write queuing a webhook message does not wait for a take\'s open transaction that updated the entity\'s turn', async () => {
  const receiver = await startReceiver();
  const g = await tenant(t);
  const api = client(t, g.key);
  const hook = (await api.post('/v1/webhooks', { url: `${receiver.url}/in`, events: ['artwork.created', 'webhook.test'] })).body;
  // The first message makes the entity's turn (deliveries are off in this app: nothing takes it).
  expect((await api.post('/v1/artworks', { title: 'First', artist_name: 'Ana Lima' })).status).toBe(201);
  expect(await turnOf('webhook', g.entityId)).toBeDefined();
  // A take of another process has served the entity (`served`) and not yet committed.
  const take = new pg.Client({ connectionString: t.config.databaseUrl });
  await take.connect();
  try {
    await take.query('begin');
    const updated = await take.query(`update job_turns set turn = $1 where kind = 'webhook' and entity_id = $2`, [iso(Date.now()), g.entityId]);
    expect(updated.rowCount).toBe(1);
    // The write's one statement (its message, job and the turn's insert) answers meanwhile: 5 s is no timing, it waited until the commit.
    const posted = await within(api.post('/v1/artworks', { title: 'Second', artist_name: 'Ana Lima' }), 5_000);
    expect(posted === 'waited' ? 'waited' : posted.status).toBe(201);
    // A write that queues its job as a step of its transaction (`enqueue`): the endpoint's test message.
    const tested = await within(api.post(`/v1/webhooks/${hook.id}/test`, {}), 5_000);
    expect(tested === 'waited' ? 'waited' : tested.status).toBe(202);
  } finally {
    await take.query('rollback').catch(() => undefined);
    await take.end();
    await receiver.close();
  }
  const jobs = await t.handle.db.selectFrom('jobs').select('key').where('kind', '=', 'webhook').where('entity_id', '=', g.entityId).execute();
  expect(jobs).toHaveLength(3);
});

test('a job whose entity\'s turn went missing is taken once sweep_job_turns has run; an entity with a turn is left as it was', async () => {
  const kind = 'test_turnless';
  const now = Date.now();
  await transaction(t.handle.db, function* () {
    yield* enqueue(kind, { key: 'lost', entityId: 7001, dueAt: iso(now - 1000), at: iso(now) });
    yield* enqueue(kind, { key: 'kept', entityId: 7002, dueAt: iso(now + 3_600_000), at: iso(now) });
  });
  const kept = await turnOf(kind, 7002);
  // What a write racing the end of the entity's last job leaves: its job and no turn.
  await dropTurnOf(kind, 7001);
  const take = (claim: string) => takeJob(t.handle.db, { kind, now: iso(Date.now()), until: iso(Date.now() + 60_000), claim });
  expect(await take('test:before')).toBeUndefined();

  // The sweep as the app runs it: its recurring job, due now.
  const ran: string[] = [];
  const sweep = sweepKind('test_job_turns', 3_600_000, () => sweepJobTurns(t.handle.db), quiet);
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(recordingKind(kind, ran)).register(sweep).start();
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(ran).toEqual([]);
    await transaction(t.handle.db, () => enqueue(sweep, { key: 'recurring', entityId: 0, dueAt: iso(Date.now() - 1000), at: iso(Date.now()) }));
    expect(await until(() => ran.length === 1)).toBe(true);
    expect(ran).toEqual(['lost']);
  } finally {
    await runner.close();
  }
  expect(await turnOf(kind, 7002)).toEqual(kept);
  // Nothing missing now: a sweep restores none.
  expect((await sweepJobTurns(t.handle.db)).restored).toBe(0);
});

test.skipIf(DIALECT !== 'postgres')('a job queued without a turn as the end of its entity\'s last job dropped the turn is taken a poll later, without the sweep', async () => {
  const kind = 'test_raced';
  const entityId = 7101;
  const ran: string[] = [];
  // Its poll (when the dropped turn is checked) well after this test inserts the raced job.
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 1000 }).register(recordingKind(kind, ran)).start();
  try {
    await transaction(t.handle.db, () => enqueue(kind, { key: 'first', entityId, dueAt: iso(Date.now() - 1000), at: iso(Date.now()) }));
    expect(await until(() => ran.length === 1)).toBe(true);
    expect(await until(async () => (await turnOf(kind, entityId)) === undefined)).toBe(true);
    // A write that saw the turn before that end committed: its job, and no turn of its own.
    const at = iso(Date.now());
    await t.handle.db.insertInto('jobs').values({
      kind, key: 'second', entity_id: entityId, grp: null, payload: null, attempts: 0, claims: 0, due_at: at, claim: null, created_at: at,
    }).execute();
    expect(await until(() => ran.length === 2, 10_000)).toBe(true);
    expect(ran).toEqual(['first', 'second']);
  } finally {
    await runner.close();
  }
});
