import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Db } from '../db/types.js';
import { addressPolicy } from '../fetch/index.js';
import { feedRunJob } from '../feeds/job.js';
import { undoJobKind } from '../feeds/undo.js';
import type { ImageStore } from '../images/store/index.js';
import { sweepImages } from '../images/sweep.js';
import { imageJob } from '../images/worker.js';
import { sweepKind, type JobKind, type JobRunner, type Sweep } from '../jobs/index.js';
import { FEED_RUN_JOB, sweepFeedRuns } from '../store/feeds.js';
import { deleteExpiredIdempotencyKeys } from '../store/idempotency.js';
import { IMAGE_JOB } from '../store/images.js';
import { ensureRecurring, sweepJobFailures, sweepJobTurns } from '../store/jobs.js';
import { purgeTrash } from '../store/trash.js';
import { UNDO_JOB } from '../store/undo.js';
import { deleteExpiredSessions } from '../store/users.js';
import { WEBHOOK_JOB, sweepMessages } from '../store/webhooks.js';
import { webhookJobKind } from '../webhooks/job.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface Rooms { db: Db; config: Config; imageStore: ImageStore; feedFetch: FastifyInstance['feedFetch'] }

/**
 * Every recurring chore, as a job kind `sweep_<name>` of the one queue (docs/architecture.md,
 * Background jobs). A new sweep is one line here: a plain store function and how often it runs.
 */
const SWEEPS: ReadonlyArray<{ name: string; everyMs: number; sweep: (rooms: Rooms) => Sweep }> = [
  { name: 'idempotency_keys', everyMs: HOUR, sweep: ({ db }) => () => deleteExpiredIdempotencyKeys(db) },
  { name: 'sessions', everyMs: HOUR, sweep: ({ db }) => (now) => deleteExpiredSessions(db, now) },
  { name: 'feed_runs', everyMs: HOUR, sweep: ({ db, config }) => (now) => sweepFeedRuns(db, now, config.trashDays) },
  { name: 'webhook_messages', everyMs: HOUR, sweep: ({ db }) => (now) => sweepMessages(db, now) },
  { name: 'image_files', everyMs: HOUR, sweep: ({ db, imageStore }) => (now) => sweepImages(db, imageStore, now) },
  { name: 'job_failures', everyMs: HOUR, sweep: ({ db }) => (now) => sweepJobFailures(db, now) },
  { name: 'trash', everyMs: HOUR, sweep: ({ db, config }) => (now) => purgeTrash(db, now, config.trashDays) },
  // A job left without its entity's turn by a write racing the end of the entity's last job waits for
  // this at most (store/jobs.ts, "turns restored"; the runner's own check catches nearly all first).
  { name: 'job_turns', everyMs: MINUTE, sweep: ({ db }) => () => sweepJobTurns(db) },
];

/**
 * The names of every job kind, in the order the gauges list them (/metrics, `bin/art-catalog jobs`).
 */
export const JOB_KINDS: readonly string[] = [IMAGE_JOB, FEED_RUN_JOB, UNDO_JOB, WEBHOOK_JOB, ...SWEEPS.map(({ name }) => `sweep_${name}`)];

export interface JobTimings {
  /** Whether this process processes images (default true; tests leave it out). */
  images: boolean;
  /** A test's short time limit per image (the default is IMAGE_TIMEOUT_MS, docs/api.md, Images). */
  imageTimeoutMs?: number | undefined;
  /** A test's short time limit per undo (the default is UNDO_TIMEOUT_MS). */
  undoTimeoutMs?: number | undefined;
}

/**
 * The one place every job kind is registered on the app's runner: each room exports its kind (images/,
 * feeds/, webhooks/) and each sweep is a line of SWEEPS. The recurring jobs are queued when the runner
 * starts (`startRecurring`).
 */
export function registerJobKinds(jobs: JobRunner, rooms: Rooms, log: FastifyInstance['log'], timings: JobTimings): void {
  const { db, config } = rooms;
  const allowAddress = addressPolicy(config.fetchAllowPrivate);
  const kinds: Array<JobKind<never>> = [
    imageJob({
      db, store: rooms.imageStore, concurrency: timings.images ? config.imageConcurrency : 0, log, now: jobs.now,
      fetch: { maxBytes: config.imageMaxMb * 1024 * 1024, timeoutMs: config.imageFetchTimeoutS * 1000, allowAddress: addressPolicy(config.imageFetchAllowPrivate) },
      ...(timings.imageTimeoutMs ? { timeoutMs: timings.imageTimeoutMs } : {}),
    }),
    feedRunJob({ db, fetch: rooms.feedFetch }, config.feedConcurrency),
    undoJobKind(db, 1, timings.undoTimeoutMs),
    webhookJobKind({ db, concurrency: config.webhookConcurrency, publicBaseUrl: () => config.publicBaseUrl, allowAddress }),
    ...SWEEPS.map(({ name, everyMs, sweep }) => sweepKind(name, everyMs, sweep(rooms), log, jobs.now)),
  ];
  for (const kind of kinds) jobs.register(kind);
}

/** Queues each sweep's job unless another process did: its first round one interval from now. */
export async function startRecurring(db: Db, now: number): Promise<void> {
  for (const { name, everyMs } of SWEEPS) await ensureRecurring(db, [`sweep_${name}`], new Date(now + everyMs).toISOString(), new Date(now).toISOString());
}
