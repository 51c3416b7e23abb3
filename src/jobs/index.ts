import type { Work } from '../db/work.js';
import { cancelJob, enqueueJob } from '../store/jobs.js';
import type { JobKind } from './runner.js';

export { JobRunner, JobTimedOut, type GiveUpReason, type Job, type JobContext, type JobKind, type JobResult, type RunnerLog } from './runner.js';
export { JobLost } from './lease.js';

export interface Enqueue<P> {
  /** One job per (kind, key): a webhook message id, a feed id, an image URL. */
  key: string;
  /** Whose job it is: jobs are taken round-robin between entities. */
  entityId: number;
  /** Its group for the kind's `groupCap` (a webhook endpoint's id). */
  group?: string | null;
  payload?: P;
  /** ISO time it may run from (now, for at once). */
  dueAt: string;
  /** The same key already queued: `keep` it (default), or `reschedule` it with these fields (store/jobs.ts). */
  existing?: 'keep' | 'reschedule';
  /** ISO time of the write. */
  at: string;
}

/**
 * Queues a job as a step of the caller's transaction (`yield* enqueue(kind, {...})` inside
 * `transaction(db, function* () {...})`): it exists exactly when that write commits. Call the
 * runner's `nudge(kind.name)` after the commit so an idle slot of this process starts it at once.
 */
export function enqueue<P>(kind: Pick<JobKind<P>, 'name'>, job: Enqueue<P>): Work<void> {
  return enqueueJob({
    kind: kind.name, key: job.key, entityId: job.entityId, group: job.group ?? null,
    payload: job.payload === undefined ? null : JSON.stringify(job.payload), dueAt: job.dueAt, existing: job.existing ?? 'keep', at: job.at,
  });
}

/** Drops a queued job in the caller's transaction (its subject was deleted); a run under way ends unrecorded. */
export function cancel(kind: Pick<JobKind<unknown>, 'name'>, key: string): Work<void> {
  return cancelJob(kind.name, key);
}
