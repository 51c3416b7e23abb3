import { randomUUID } from 'node:crypto';
import type { Db } from '../db/types.js';
import {
  claimImageJob, imageOriginal, recordOriginal, renewImageClaim, saveImageOutcome, type ClaimedJob, type OriginalInfo,
} from '../store/images.js';
import { deriveImage, ImageRejected } from './derive.js';
import { FetchFailed, fetchImage, type FetchedImage, type FetchOptions } from './fetch.js';
import { lowerImageThreadsPriority } from './priority.js';
import { JobLease, JobLost } from '../jobs/lease.js';
import type { ImageStore } from './store/index.js';
import { sweepImages } from './sweep.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** Decisions §10: a failed image is tried again after 1 min, 10 min, 1 h, 6 h, then daily for 7 days. */
export const RETRY_DELAYS_MS: readonly number[] = [MINUTE, 10 * MINUTE, HOUR, 6 * HOUR, ...Array<number>(7).fill(DAY)];

/** When the job that has now failed `attempts` times runs again; null when it stays failed. */
export function nextAttempt(attempts: number, now: number): number | null {
  const delay = RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? null : now + delay;
}

export interface WorkerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface ImageWorkerOptions {
  db: Db;
  store: ImageStore;
  /** Images processed at a time by this process (IMAGE_CONCURRENCY). */
  concurrency: number;
  fetch: FetchOptions;
  log: WorkerLog;
  /** How long a claim holds without renewal; a process that died loses its jobs after this. */
  leaseMs?: number;
  /** How often an idle worker looks for jobs queued by other processes (this one's writes wake it at once). */
  pollMs?: number;
  /** The clock (tests of the retry schedule move it). */
  now?: () => number;
  /** How often this process sweeps derivatives no record uses (default hourly; 0: never). */
  sweepMs?: number;
}

/**
 * Takes image jobs from the database queue and turns each URL into stored derivatives (decisions §10):
 * fetch, hash, derive (sharp, on libuv's threads: the event loop only waits; derive.ts sets sharp to one
 * thread per image and no cache, so IMAGE_CONCURRENCY images use that many cores), store, record. Several
 * processes share the queue; a claim is a lease renewed while the job runs.
 */
export class ImageWorker {
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  private closed = false;
  private wake: Array<() => void> = [];
  private loops: Promise<void>[] = [];
  private sweeper: NodeJS.Timeout | undefined;
  /** Jobs finished by this worker, for tests and the bench. */
  processed = 0;

  constructor(private readonly options: ImageWorkerOptions) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollMs = options.pollMs ?? 1000;
    this.now = options.now ?? Date.now;
  }

  start(): this {
    for (let slot = 0; slot < this.options.concurrency; slot++) this.loops.push(this.loop());
    const sweepMs = this.options.sweepMs ?? HOUR;
    if (sweepMs > 0) {
      this.sweeper = setInterval(() => {
        sweepImages(this.options.db, this.options.store, this.now()).then(
          (report) => this.options.log.info({ ...report }, 'image sweep'),
          (error: unknown) => this.options.log.warn({ err: error }, 'image sweep failed; it runs again later'),
        );
      }, sweepMs);
      this.sweeper.unref();
    }
    return this;
  }

  /** A job may be due: idle slots look now instead of at their next poll. */
  nudge(): void {
    for (const resolve of this.wake.splice(0)) resolve();
  }

  /** Stops taking jobs and waits (at most `graceMs`) for those under way; the others' leases run out. */
  async close(graceMs = 5000): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.nudge();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.loops), new Promise((resolve) => { timer = setTimeout(resolve, graceMs); })]);
    clearTimeout(timer);
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      let job: ClaimedJob | undefined;
      const heldUntil = this.now() + this.leaseMs;
      try {
        job = await claimImageJob(this.options.db, `${CLAIMANT}:${randomUUID()}`, this.iso(0), new Date(heldUntil).toISOString());
      } catch (error) {
        this.options.log.warn({ err: error }, 'image queue unavailable; trying again');
      }
      if (job) await this.run(job, heldUntil);
      else await this.idle();
    }
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.pollMs);
      const wake = this.wake;
      function done() {
        clearTimeout(timer);
        const index = wake.indexOf(done);
        if (index >= 0) wake.splice(index, 1);
        resolve();
      }
      this.wake.push(done);
    });
  }

  /**
   * One job under a renewed lease; whatever happens, its outcome is recorded, or it is left to expire.
   * A job whose lease is lost is given up at the next step: its files are not stored and its outcome
   * is not recorded (another process may be doing the same job by now).
   */
  private async run(job: ClaimedJob, heldUntil: number): Promise<void> {
    const { db, log } = this.options;
    const lease = new JobLease({
      renew: (until) => renewImageClaim(db, job, new Date(until).toISOString()),
      leaseMs: this.leaseMs, now: this.now,
      onLost: (reason, error) => log.warn({ err: error, url: job.url }, `image job lost (${reason}); its result is dropped`),
      onRenewalFailed: (error) => log.warn({ err: error, url: job.url }, 'image job lease not renewed; trying again'),
    }, heldUntil);
    try {
      const outcome = await this.process(job, lease);
      lease.check();
      const at = this.iso(0);
      const attempts = outcome.error === null ? 0 : job.attempts + 1;
      const due = outcome.error === null ? null : nextAttempt(attempts, this.now());
      const saved = await saveImageOutcome(db, {
        url: job.url, claim: job.claim, at, attempts, dueAt: due === null ? null : new Date(due).toISOString(),
        status: outcome.error === null ? 'ready' : 'failed', error: outcome.error, hash: outcome.hash,
      });
      if (!saved) {
        log.warn({ url: job.url }, 'image job lost (its claim changed before the outcome was saved); its result is dropped');
        return;
      }
      this.processed++;
      if (outcome.error !== null) log.info({ url: job.url, error: outcome.error, attempts }, 'image failed');
    } catch (error) {
      // Logged when the lease was lost; the job is someone else's now, or due again when its lease ends.
      if (error instanceof JobLost) return;
      // The database or the store failed us, not the image: the lease runs out and the job is taken again.
      log.warn({ err: error, url: job.url }, 'image job interrupted; it is retried when its lease ends');
    } finally {
      lease.stop();
    }
  }

  private async process(job: ClaimedJob, lease: JobLease): Promise<{ hash: string | null; error: string | null }> {
    let fetched: FetchedImage;
    try {
      fetched = await fetchImage(job.url, this.options.fetch, lease.signal);
    } catch (error) {
      if (error instanceof FetchFailed) return { hash: null, error: error.message };
      throw error;
    }
    const { bytes, hash } = fetched;
    // Identical bytes (another URL, or this one fetched again) are processed and stored once.
    const known = await imageOriginal(this.options.db, hash);
    if (known && await this.stored(known)) {
      lease.check();
      // Used again: its time is refreshed, so a sweep does not take it for an unused original.
      await recordOriginal(this.options.db, known, this.iso(0));
      return { hash, error: null };
    }
    let derived;
    try {
      // The threads that will decode and encode it yield their cores to the event loop (priority.ts).
      lowerImageThreadsPriority();
      derived = await deriveImage(bytes, hash);
    } catch (error) {
      if (error instanceof ImageRejected) return { hash: null, error: error.message };
      throw error;
    }
    const original: OriginalInfo = {
      hash: derived.hash, width: derived.width, height: derived.height,
      derivatives: derived.derivatives.map(({ name, width, height, format }) => ({ name, width, height, format })),
    };
    lease.check();
    await recordOriginal(this.options.db, original, this.iso(0));
    for (const derivative of derived.derivatives) {
      lease.check();
      if (!await this.options.store.has(derivative.name)) await this.options.store.put(derivative.name, derivative.bytes, derivative.contentType);
    }
    return { hash: derived.hash, error: null };
  }

  private async stored(original: OriginalInfo): Promise<boolean> {
    for (const { name } of original.derivatives) if (!await this.options.store.has(name)) return false;
    return original.derivatives.length > 0;
  }

  private iso(offsetMs: number): string {
    return new Date(this.now() + offsetMs).toISOString();
  }
}

const CLAIMANT = `pid${process.pid}`;
