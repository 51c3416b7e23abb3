import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { transaction } from '../../src/db/run.js';
import { enqueue, JobRunner, type Job, type JobContext, type JobKind, type JobResult } from '../../src/jobs/index.js';
import { takeJob } from '../../src/store/jobs.js';
import { startApp, type TestApp } from '../helpers.js';
import { until } from '../support/until.js';

/** The durable job queue (src/jobs/README.md): fair, leased, bounded per group, and every job ends. */

vi.setConfig({ testTimeout: 60_000 });

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t?.close(); });

const quiet = { info: () => undefined, warn: () => undefined };
let kinds = 0;
const now = () => new Date().toISOString();

/** A kind whose runs wait until the test lets them go, recording the order they started in. */
function heldKind(options: Partial<JobKind<{ n: number }>> = {}) {
  const started: string[] = [];
  const running = new Map<string, () => void>();
  const given: Array<{ key: string; reason: string }> = [];
  const inFlight = new Map<string | null, number>();
  const mostInFlight = new Map<string | null, number>();
  const kind: JobKind<{ n: number }> = {
    name: `test-${++kinds}`, concurrency: 2,
    run: (job: Job<{ n: number }>, context: JobContext) => new Promise<JobResult>((resolve, reject) => {
      started.push(job.key);
      const now = (inFlight.get(job.group) ?? 0) + 1;
      inFlight.set(job.group, now);
      mostInFlight.set(job.group, Math.max(mostInFlight.get(job.group) ?? 0, now));
      const stop = () => { inFlight.set(job.group, inFlight.get(job.group)! - 1); running.delete(job.key); };
      running.set(job.key, () => { stop(); resolve({ end: 'done' }); });
      context.signal.addEventListener('abort', () => { stop(); reject(context.signal.reason as Error); }, { once: true });
    }),
    giveUp: (job, reason) => { given.push({ key: job.key, reason }); return { end: 'done' }; },
    ...options,
  };
  return { kind, started, running, given, mostInFlight: (group: string | null) => mostInFlight.get(group) ?? 0 };
}

async function queue(kind: { name: string }, jobs: Array<{ key: string; entityId: number; group?: string }>): Promise<void> {
  const at = now();
  await transaction(t.handle.db, function* () {
    for (const job of jobs) yield* enqueue(kind, { ...job, payload: { n: 1 }, dueAt: at, at });
  });
}

const left = async (kind: string) => (await t.handle.db.selectFrom('jobs').select('key').where('kind', '=', kind).execute()).length;

test('jobs are taken round-robin between entities: 50 jobs of one entity delay another entity\'s job by at most one job per worker', async () => {
  const { kind, started, running } = heldKind();
  await queue(kind, Array.from({ length: 50 }, (_, i) => ({ key: `a${i}`, entityId: 1 })));
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start();
  try {
    expect(await until(() => started.length === 2)).toBe(true);
    await queue(kind, [{ key: 'b0', entityId: 2 }]);
    // The first slot to free itself takes the other entity's job, before the first entity's third.
    running.get(started[0]!)!();
    expect(await until(() => started.length === 3)).toBe(true);
    expect(started).toEqual(['a0', 'a1', 'b0']);
    for (const finish of [...running.values()]) finish();
    expect(await until(() => started.length === 5)).toBe(true);
    expect(started.slice(3)).toEqual(['a2', 'a3']);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});

test('a job queued in a transaction that rolls back does not exist; one that commits is run once and deleted', async () => {
  const ran: string[] = [];
  const kind: JobKind<{ n: number }> = {
    name: `test-${++kinds}`, concurrency: 1,
    run: async (job) => { ran.push(job.key); return { end: 'done' }; },
    giveUp: () => ({ end: 'done' }),
  };
  const at = now();
  await expect(transaction(t.handle.db, function* () {
    yield* enqueue(kind, { key: 'rolled-back', entityId: 1, payload: { n: 1 }, dueAt: at, at });
    throw new Error('the write is refused');
  })).rejects.toThrow('the write is refused');
  await queue(kind, [{ key: 'committed', entityId: 1 }]);
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start();
  try {
    expect(await until(async () => ran.length === 1 && await left(kind.name) === 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ran).toEqual(['committed']);
  } finally {
    await runner.close(0);
  }
});

test('two runners on one database never run one job at once, and run each exactly once', async () => {
  const runs = new Map<string, number>();
  let inFlight = new Set<string>();
  let overlap = false;
  const kind: JobKind<{ n: number }> = {
    name: `test-${++kinds}`, concurrency: 2,
    run: async (job) => {
      if (inFlight.has(job.key)) overlap = true;
      inFlight.add(job.key);
      runs.set(job.key, (runs.get(job.key) ?? 0) + 1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight.delete(job.key);
      return { end: 'done' };
    },
    giveUp: () => ({ end: 'done' }),
  };
  await queue(kind, Array.from({ length: 60 }, (_, i) => ({ key: `j${i}`, entityId: i % 3 })));
  const runners = [1, 2].map(() => new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start());
  try {
    expect(await until(async () => runs.size === 60 && await left(kind.name) === 0)).toBe(true);
    expect(overlap).toBe(false);
    expect([...runs.values()].every((n) => n === 1)).toBe(true);
    expect(runners.every((runner) => (runner.ended.get(kind.name) ?? 0) > 0)).toBe(true);
  } finally {
    inFlight = new Set();
    await Promise.all(runners.map((runner) => runner.close(0)));
  }
});

test('a group runs at most its cap at once, across runners, while other groups go on', async () => {
  const { kind, started, running, mostInFlight } = heldKind({ concurrency: 4, groupCap: 2 });
  await queue(kind, [
    ...Array.from({ length: 6 }, (_, i) => ({ key: `g${i}`, entityId: 1, group: 'endpoint-1' })),
    { key: 'other', entityId: 1, group: 'endpoint-2' },
  ]);
  const runners = [1, 2].map(() => new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start());
  try {
    expect(await until(() => started.length === 3)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(started.filter((key) => key.startsWith('g'))).toHaveLength(2);
    expect(started).toContain('other');
    while (started.length < 7) {
      for (const finish of [...running.values()]) finish();
      expect(await until(() => running.size > 0 || started.length === 7)).toBe(true);
    }
    for (const finish of [...running.values()]) finish();
    expect(await until(async () => await left(kind.name) === 0)).toBe(true);
    expect(mostInFlight('endpoint-1')).toBe(2);
  } finally {
    for (const finish of [...running.values()]) finish();
    await Promise.all(runners.map((runner) => runner.close(0)));
  }
});

test('a run past its time limit ends the job at once as given up ("took too long"), and the slot goes on', async () => {
  const { kind, started, given, running } = heldKind({ concurrency: 1, timeoutMs: 300 });
  await queue(kind, [{ key: 'slow', entityId: 1 }, { key: 'next', entityId: 1 }]);
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start();
  try {
    expect(await until(() => started.length === 2, 5_000)).toBe(true);
    expect(given).toEqual([{ key: 'slow', reason: 'took too long' }]);
    running.get('next')!();
    expect(await until(async () => await left(kind.name) === 0)).toBe(true);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});

test('a job whose process died is taken over once its lease has passed; one taken too often ends as abandoned', async () => {
  const { kind, started, given, running } = heldKind({ concurrency: 1, maxClaims: 3 });
  await queue(kind, [{ key: 'orphan', entityId: 1 }, { key: 'cursed', entityId: 2 }]);
  // A process took both and died: its leases pass in 300 ms. "cursed" was taken twice more the same way.
  const soon = new Date(Date.now() + 300).toISOString();
  for (let i = 0; i < 2; i++) await takeJob(t.handle.db, { kind: kind.name, now: now(), until: soon, claim: `dead-${i}` });
  await t.handle.db.updateTable('jobs').set({ claims: 3 }).where('kind', '=', kind.name).where('key', '=', 'cursed').execute();
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start();
  try {
    expect(await until(() => started.includes('orphan'), 5_000)).toBe(true);
    running.get('orphan')!();
    expect(await until(async () => await left(kind.name) === 0, 5_000)).toBe(true);
    expect(given).toEqual([{ key: 'cursed', reason: 'abandoned' }]);
    expect(started).toEqual(['orphan']);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});

test('a retry is due again when its handler says, with its attempts counted, and its record saved with it', async () => {
  const attempts: number[] = [];
  const recorded: number[] = [];
  const kind: JobKind<{ n: number }> = {
    name: `test-${++kinds}`, concurrency: 1,
    run: async (job) => {
      attempts.push(job.attempts);
      // eslint-disable-next-line require-yield
      const record = function* () { recorded.push(job.attempts); };
      return job.attempts < 2 ? { end: 'retry', at: Date.now() + 100, record } : { end: 'done', record };
    },
    giveUp: () => ({ end: 'done' }),
  };
  await queue(kind, [{ key: 'flaky', entityId: 1 }]);
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 20 }).register(kind).start();
  try {
    expect(await until(async () => await left(kind.name) === 0)).toBe(true);
    expect(attempts).toEqual([0, 1, 2]);
    expect(recorded).toEqual([0, 1, 2]);
  } finally {
    await runner.close(0);
  }
});

test('close() while a slot is still taking its first job ends the runner at once, not one poll later', async () => {
  const { kind } = heldKind();
  // A poll of a minute and a grace of a minute: a slot that went idle after close() would hold close() that long.
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 60_000 }).register(kind).start();
  // Synchronously after start(): both slots are in their first take, so close()'s wake-up finds nobody idle.
  const closing = runner.close(60_000);
  expect(await Promise.race([closing.then(() => 'closed'), new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting'))])).toBe('closed');
});

test('a take leaves a full group\'s jobs out however long its queue, and takes another group\'s job of the same entity', async () => {
  const { kind } = heldKind({ groupCap: 2 });
  await queue(kind, [{ key: 'f-live-1', entityId: 7, group: 'full' }, { key: 'f-live-2', entityId: 7, group: 'full' }]);
  const until = new Date(Date.now() + 60_000).toISOString();
  // Taken at a time after they were queued (due): a time read before queue() is a millisecond early on a busy machine.
  for (const key of ['f-live-1', 'f-live-2']) expect(await takeJob(t.handle.db, { kind: kind.name, now: now(), until, claim: `c-${key}`, groupCap: 2 })).toMatchObject({ key });
  await queue(kind, Array.from({ length: 2000 }, (_, i) => ({ key: `f-${i}`, entityId: 7, group: 'full' })));
  // The group has its 2 in flight: nothing of it is taken, however many of its jobs wait.
  expect(await takeJob(t.handle.db, { kind: kind.name, now: now(), until, claim: 'c-none', groupCap: 2 })).toBeUndefined();
  await queue(kind, [{ key: 'o-1', entityId: 7, group: 'other' }]);
  expect(await takeJob(t.handle.db, { kind: kind.name, now: now(), until, claim: 'c-other', groupCap: 2 })).toMatchObject({ key: 'o-1', group: 'other' });
});

test('one nudge wakes one idle slot, and a slot that takes a job wakes the next, so a burst of jobs still runs on every slot', async () => {
  const { kind, started, running } = heldKind({ concurrency: 4 });
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 60_000 }).register(kind).start();
  try {
    // Every slot has looked once and gone idle (a poll of a minute: only a nudge wakes one).
    await new Promise((resolve) => setTimeout(resolve, 300));
    await queue(kind, Array.from({ length: 4 }, (_, i) => ({ key: `burst-${i}`, entityId: 1 })));
    runner.nudge(kind.name);
    expect(await until(() => started.length === 4, 10_000)).toBe(true);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});

test('a slot that ends a job takes its next in the same transaction: a backlog of one group runs on with one take of the slot\'s own, not one per job', async () => {
  const { kind, started, running } = heldKind({ concurrency: 1, groupCap: 1 });
  await queue(kind, Array.from({ length: 5 }, (_, i) => ({ key: `b${i}`, entityId: 1, group: 'endpoint' })));
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 60_000 }).register(kind).start();
  try {
    for (let i = 1; i <= 5; i++) {
      expect(await until(() => started.length === i && running.size === 1)).toBe(true);
      for (const finish of [...running.values()]) finish();
    }
    expect(await until(async () => await left(kind.name) === 0)).toBe(true);
    expect(started).toEqual(['b0', 'b1', 'b2', 'b3', 'b4']);
    // The slot's first take; every later job came with the end of the one before (the last end found none).
    expect(runner.takes.get(kind.name)).toBe(1);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});

/** A runner's takes of a kind once none has ended for 300 ms (takes are counted as they end). */
async function settledTakes(runner: JobRunner, kind: string): Promise<number> {
  for (;;) {
    const seen = runner.takes.get(kind) ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 300));
    if ((runner.takes.get(kind) ?? 0) === seen) return seen;
  }
}

test('while a group has its cap in flight, the writes that queue more of its jobs do not each cost a take; its jobs still all run, within the cap', async () => {
  const { kind, started, running, mostInFlight } = heldKind({ concurrency: 3, groupCap: 1 });
  await queue(kind, [{ key: 'first', entityId: 1, group: 'endpoint' }]);
  // Saturated for a minute: only the place freed by a job's end lets the next one start.
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 60_000, saturatedMs: 60_000 }).register(kind).start();
  try {
    // Each of the 3 slots has made its first take (one took the job), and any look again a nudge meanwhile asked for.
    expect(await until(() => started.length === 1 && (runner.takes.get(kind.name) ?? 0) >= 3)).toBe(true);
    // A write queues a job of the full group: the take it may wake finds the group full.
    await queue(kind, [{ key: 'w0', entityId: 1, group: 'endpoint' }]);
    const takes = await settledTakes(runner, kind.name);
    // Nine more writes, each nudging this process's idle slots once it has committed: no take.
    for (let i = 1; i < 10; i++) await queue(kind, [{ key: `w${i}`, entityId: 1, group: 'endpoint' }]);
    expect(await settledTakes(runner, kind.name)).toBe(takes);
    expect(started).toEqual(['first']);
    while (started.length < 11) {
      for (const finish of [...running.values()]) finish();
      expect(await until(() => running.size > 0 || started.length === 11)).toBe(true);
    }
    for (const finish of [...running.values()]) finish();
    expect(await until(async () => await left(kind.name) === 0)).toBe(true);
    expect(mostInFlight('endpoint')).toBe(1);
    // Each job after the first came with the end of the one before.
    expect(runner.takes.get(kind.name)).toBe(takes);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});

test('idle slots look for jobs no nudge announces once per poll of their kind, not each on a poll of its own; jobs found by a poll still reach every slot', async () => {
  const { kind, started, running } = heldKind({ concurrency: 4 });
  const runner = new JobRunner({ db: t.handle.db, log: quiet, pollMs: 200 }).register(kind).start();
  try {
    // Every slot has looked once and gone idle.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const before = runner.takes.get(kind.name) ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    // Ten polls in two seconds: about ten takes (four slots polling each on its own made about forty).
    expect((runner.takes.get(kind.name) ?? 0) - before).toBeLessThanOrEqual(14);
    // Four jobs due in half a second: the nudge of their commit finds none due; a poll finds them,
    // and each slot that takes one wakes the next.
    const at = now();
    const due = new Date(Date.now() + 500).toISOString();
    await transaction(t.handle.db, function* () {
      for (let i = 0; i < 4; i++) yield* enqueue(kind, { key: `later-${i}`, entityId: i, payload: { n: 1 }, dueAt: due, at });
    });
    expect(await until(() => started.length === 4, 10_000)).toBe(true);
  } finally {
    for (const finish of [...running.values()]) finish();
    await runner.close(0);
  }
});
