import type { Db } from '../db/types.js';
import type { GiveUpReason, Job, JobContext, JobKind, JobResult } from '../jobs/runner.js';
import { IMAGE_JOB, imageOriginal, recordOriginal, saveImageOutcome, type OriginalInfo } from '../store/images.js';
import { deriveImage, ImageRejected } from './derive.js';
import { FetchFailed, fetchImage, type FetchedImage, type FetchOptions } from './fetch.js';
import { lowerImageThreadsPriority } from './priority.js';
import type { ImageStore } from './store/index.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** docs/api.md, Images: a failed image is tried again after 1 min, 10 min, 1 h, 6 h, then daily for 7 days. */
export const RETRY_DELAYS_MS: readonly number[] = [MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, ...Array<number>(7).fill(DAY)];

/** docs/api.md, Images: one image's work (fetch, decode, encode, store) is limited to 60 s. */
export const IMAGE_TIMEOUT_MS = 60_000;

/** When the job that has now failed `attempts` times runs again; null when it stays failed. */
export function nextAttempt(attempts: number, now: number): number | null {
  const delay = RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? null : now + delay;
}

export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface ImageJobOptions {
  db: Db;
  store: ImageStore;
  /** Images processed at a time by this process (IMAGE_CONCURRENCY). */
  concurrency: number;
  fetch: FetchOptions;
  log: WorkerLog;
  /** The clock (tests of the retry schedule move it); the runner's. */
  now?: () => number;
  /** One image's time limit (default IMAGE_TIMEOUT_MS). */
  timeoutMs?: number;
}

interface Outcome { hash: string | null; error: string | null }

/**
 * The image job kind (src/jobs/README.md), kind `image`, one job per URL: turns each URL into stored
 * derivatives (docs/api.md, Images): fetch, hash, derive (sharp, on libuv's threads: the event loop only
 * waits; derive.ts sets sharp to one thread per image and no cache, so IMAGE_CONCURRENCY images use that
 * many cores), store, record. Every image ends with a state: ready, or failed with one line (its job due
 * again on the schedule above, then ended).
 */
export function imageJob(options: ImageJobOptions): JobKind<null> {
  const worker = new ImageRun(options);
  return {
    name: IMAGE_JOB, concurrency: options.concurrency, timeoutMs: options.timeoutMs ?? IMAGE_TIMEOUT_MS,
    run: (job, context) => worker.run(job, context),
    giveUp: (job, reason) => worker.giveUp(job, reason),
  };
}

class ImageRun {
  private readonly now: () => number;

  constructor(private readonly options: ImageJobOptions) {
    this.now = options.now ?? Date.now;
  }

  async run(job: Job<null>, context: JobContext): Promise<JobResult> {
    const outcome = await this.process(job.key, context);
    if (outcome.error !== null) this.options.log.info({ url: job.key, error: outcome.error, attempts: job.attempts + 1 }, 'image failed');
    return this.result(job, outcome);
  }

  /** A failure (its one line) is the image's `failed` now, and its job due again on the schedule, or ended. */
  private result(job: Job<null>, outcome: Outcome): JobResult {
    const at = new Date(this.now()).toISOString();
    if (outcome.error === null) {
      return { end: 'done', record: () => saveImageOutcome({ url: job.key, at, attempts: 0, status: 'ready', error: null, hash: outcome.hash }) };
    }
    const attempts = job.attempts + 1;
    const due = nextAttempt(attempts, this.now());
    const record = () => saveImageOutcome({ url: job.key, at, attempts, status: 'failed', error: outcome.error, hash: null });
    return due === null ? { end: 'done', record, failed: outcome.error } : { end: 'retry', at: due, record };
  }

  /**
   * Past its time limit, an image failed ("took too long") and is retried on the schedule; a job
   * whose process died with it every time it was taken (a file that crashes the decoder) is failed for good.
   */
  giveUp(job: Job<null>, reason: GiveUpReason): JobResult {
    this.options.log.warn({ url: job.key, reason }, 'image given up');
    if (reason === 'took too long') return this.result(job, { hash: null, error: 'took too long' });
    const at = new Date(this.now()).toISOString();
    return { end: 'done', record: () => saveImageOutcome({ url: job.key, at, attempts: job.attempts + 1, status: 'failed', error: 'could not be processed', hash: null }) };
  }

  private async process(url: string, context: JobContext): Promise<Outcome> {
    const started = Date.now();
    let fetched: FetchedImage;
    try {
      fetched = await fetchImage(url, this.options.fetch, context.signal);
    } catch (error) {
      if (error instanceof FetchFailed) return { hash: null, error: error.message };
      throw error;
    }
    const { bytes, hash } = fetched;
    // Identical bytes (another URL, or this one fetched again) are processed and stored once.
    const known = await imageOriginal(this.options.db, hash);
    if (known && await this.stored(known)) {
      context.check();
      // Used again: its time is refreshed, so a sweep does not take it for an unused original.
      await recordOriginal(this.options.db, known, this.iso());
      return { hash, error: null };
    }
    let derived;
    try {
      context.check();
      // The threads that will decode and encode it yield their cores to the event loop (priority.ts).
      lowerImageThreadsPriority();
      // Every decode and encode stops at what is left of the image's time limit (sharp's `.timeout`).
      derived = await deriveImage(bytes, hash, { timeoutMs: Math.max(1, started + (this.options.timeoutMs ?? IMAGE_TIMEOUT_MS) - Date.now()) });
    } catch (error) {
      if (error instanceof ImageRejected) return { hash: null, error: error.message };
      throw error;
    }
    const original: OriginalInfo = {
      hash: derived.hash, width: derived.width, height: derived.height,
      derivatives: derived.derivatives.map(({ name, width, height, format }) => ({ name, width, height, format })),
    };
    context.check();
    await recordOriginal(this.options.db, original, this.iso());
    for (const derivative of derived.derivatives) {
      context.check();
      if (!await this.options.store.has(derivative.name)) await this.options.store.put(derivative.name, derivative.bytes, derivative.contentType);
    }
    return { hash: derived.hash, error: null };
  }

  private async stored(original: OriginalInfo): Promise<boolean> {
    for (const { name } of original.derivatives) if (!await this.options.store.has(name)) return false;
    return original.derivatives.length > 0;
  }

  private iso(): string {
    return new Date(this.now()).toISOString();
  }
}
