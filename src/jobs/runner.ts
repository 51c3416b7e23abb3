import { randomUUID } from 'node:crypto';
import { afterCommit } from '../db/run.js';
import type { Db } from '../db/types.js';
import type { Work } from '../db/work.js';
import { endAndTake, renewJob, restoreTurns, takeNextJob, type TakeOptions, type TakeResult, type Taken, type TakenJob } from '../store/jobs.js';
import { JobLease, JobLost } from './lease.js';

/** A job as its handler sees it (src/jobs/README.md). */
export interface Job<P> {
  id: number;
  key: string;
  entityId: number;
  group: string | null;
  payload: P;
  /** Failures before this run (set by the handler's retries). */
  attempts: number;
  /** Times it was taken, this one included (a process that died with it took it too). */
  claims: number;
}

/**
 * How a run ended. `done`: the job is deleted (succeeded, or failed for good); `retry`: it is due
 * again at `at` (ms) with its attempts one more; `again`: a recurring job's next round, due at `at`
 * with its attempts at 0. `record`, if any, writes the kind's outcome in the same transaction, only if
 * the run still held its claim; `log`, in it too, whether or not (what happened outside either way: a
 * webhook attempt reached its receiver). `failed` (one line): the outcome is a failure, counted by the gauges
 * (docs/operations.md, Jobs); a job the runner gives up always is.
 */
export type JobResult = ({ end: 'done' } | { end: 'retry' | 'again'; at: number }) & { record?: () => Work<void>; log?: () => Work<void>; failed?: string };

/** What a handler's run is given: `signal` aborts when the lease is lost or the run's time is up. */
export interface JobContext {
  signal: AbortSignal;
  /** Throws once the run was given up (call it before each step that writes). */
  check(): void;
}

/** Why the runner itself ended a job: its time ran out, or it was taken `maxClaims` times without ending. */
export type GiveUpReason = 'took too long' | 'abandoned';

export interface JobKind<P> {
  /** Stored in `jobs.kind`; unique. */
  name: string;
  /** Runs at once per process (IMAGE_CONCURRENCY, FEED_CONCURRENCY, …); 0: this process runs none. */
  concurrency: number;
  /** At most this many jobs of one group in flight across all processes (webhooks: 4 per endpoint). */
  groupCap?: number;
  /** A run's time limit: then `signal` aborts and the job ends as `giveUp(job, 'took too long')`. */
  timeoutMs?: number;
  /** A job taken this many times without ending (its process died each time) ends as `giveUp(job, 'abandoned')`. Default 5. */
  maxClaims?: number;
  /** How often one idle slot looks for jobs queued elsewhere (default: the runner's); a sweep due hourly looks rarely. */
  pollMs?: number;
  run(job: Job<P>, context: JobContext): Promise<JobResult>;
  /** The final outcome of a job the runner ends itself: every job ends. */
  giveUp(job: Job<P>, reason: GiveUpReason): JobResult;
}

export interface RunnerLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

export interface JobRunnerOptions {
  db: Db;
  log: RunnerLog;
  /** How long a claim holds without renewal; a process that died loses its jobs after this. */
  leaseMs?: number;
  /**
   * How often one idle slot of a kind looks for jobs that no nudge announces: queued by other
   * processes, due later (a retry), or left by a process that died (`nudge` wakes a slot at once).
   */
  pollMs?: number;
  /** The clock (tests of retry schedules move it). */
  now?: () => number;
  /** How long a kind counts as saturated after a take saw it so (`nudge`); default 100 ms. */
  saturatedMs?: number;
}

/** The take a job's end made (`end`): the job it took, or none (the slot idles), and until when its claim holds. */
interface Next {
  taken: Taken | undefined;
  heldUntil: number;
}

/** The run went past its kind's time limit. */
export class JobTimedOut extends Error {}

const CLAIMANT = `pid${process.pid}`;

/**
 * How long a kind counts as saturated after a take saw it so (`nudge`): the longest a job queued
 * meanwhile waits for its take when places are free after all (freed by another process whose own
 * slots found nothing left); a take at most this often per kind and process while it is saturated.
 */
const SATURATED_MS = 100;

/**
 * Runs the registered kinds' jobs from the durable queue (src/store/jobs.ts): per kind, `concurrency`
 * slots each take a job (round-robin between entities), run it under a renewed lease, and end it.
 * Several processes share the queue; a job is run by one of them at a time.
 */
export class JobRunner {
  private readonly leaseMs: number;
  private readonly pollMs: number;
  readonly now: () => number;
  private readonly kinds = new Map<string, JobKind<unknown>>();
  private closed = false;
  private started = false;
  private wake = new Map<string, Array<() => void>>();
  /** Kinds nudged while no slot of theirs was idle. */
  private readonly missed = new Set<string>();
  /** Kinds whose last take saw jobs due and none able to start, until when (Date.now ms). */
  private readonly saturated = new Map<string, number>();
  /** Kinds nudged while saturated: one nudge when that ends. */
  private readonly deferred = new Map<string, NodeJS.Timeout>();
  private loops: Promise<void>[] = [];
  /** Per kind, the poll that wakes one idle slot every `pollMs`. */
  private readonly polls: NodeJS.Timeout[] = [];
  /** Jobs ended by this runner, per kind (tests and the bench). */
  readonly ended = new Map<string, number>();
  /** Takes of a slot's own, per kind, counted once ended (what they saw noted), not those in a job's end (tests). */
  readonly takes = new Map<string, number>();
  private readonly saturatedMs: number;
  /**
   * Per kind, the entities whose turn this process's ends dropped (PostgreSQL): `fresh` since the kind's
   * last poll, `aged` before it. Each poll has the aged ones checked (`restoreTurns`): a write that
   * queued a job of such an entity while the turn was being dropped saw the turn and made none
   * (store/jobs.ts, "turns restored"); a poll later it has committed, and its job gets the turn.
   */
  private readonly droppedTurns = new Map<string, { fresh: Set<number>; aged: Set<number> }>();

  private readonly stopListening: () => void;

  constructor(private readonly options: JobRunnerOptions) {
    this.leaseMs = options.leaseMs ?? 60_000;
    this.pollMs = options.pollMs ?? 1000;
    this.now = options.now ?? Date.now;
    this.saturatedMs = options.saturatedMs ?? SATURATED_MS;
    // A transaction that queued jobs has committed (src/db/run.ts): a slot of their kind looks now.
    this.stopListening = afterCommit(options.db, (kind) => { if (this.kinds.has(kind)) this.nudge(kind); });
  }

  /** The kinds registered, in order (the gauges of /metrics and `jobs` list them). */
  get kindNames(): string[] {
    return [...this.kinds.keys()];
  }

  register(kind: JobKind<unknown>): this {
    if (this.kinds.has(kind.name)) throw new Error(`job kind ${kind.name} registered twice`);
    this.kinds.set(kind.name, kind);
    this.wake.set(kind.name, []);
    if (this.started) this.startKind(kind);
    return this;
  }

  start(): this {
    if (this.started) return this;
    this.started = true;
    for (const kind of this.kinds.values()) this.startKind(kind);
    return this;
  }

  /**
   * Jobs may be due (this process queued them): one idle slot of the kind looks now, and each slot that
   * takes a job wakes one more (`loop`), so a batch of jobs brings in as many slots as it has jobs,
   * while a write that queued one job costs one take, not one per idle slot: under 100 writes a
   * second, waking every idle slot made a herd of takes that found the endpoint's 4 already in flight
   * (docs/performance.md, Webhooks). Without a kind, every idle slot of every kind (close).
   */
  nudge(kind?: string): void {
    if (kind === undefined) {
      for (const waiting of this.wake.values()) for (const resolve of waiting.splice(0)) resolve();
      return;
    }
    // The last take saw jobs due and none able to start (an endpoint's 4 in flight): a take now would
    // most likely find the same. One look when that is `saturatedMs` old, for all the nudges meanwhile
    // (docs/performance.md, Webhooks: under a backlog of one endpoint, each write's nudge cost a take
    // that found it full); a place freed here is taken by the slot that freed it (`end`).
    const until = this.saturated.get(kind);
    if (until !== undefined) {
      const wait = until - Date.now();
      if (wait > 0) {
        if (!this.deferred.has(kind)) this.deferred.set(kind, setTimeout(() => { this.deferred.delete(kind); this.saturated.delete(kind); this.nudge(kind); }, wait));
        return;
      }
      this.saturated.delete(kind);
    }
    const idle = this.wake.get(kind)?.shift();
    if (idle) idle();
    // Every slot was taking: the first to find nothing looks again instead of idling (its take may have
    // started before this job was queued).
    else this.missed.add(kind);
  }

  /** Stops taking jobs and waits (at most `graceMs`) for those under way; the others' leases run out. */
  async close(graceMs = 5000): Promise<void> {
    this.closed = true;
    this.stopListening();
    for (const timer of this.deferred.values()) clearTimeout(timer);
    for (const poll of this.polls) clearInterval(poll);
    this.nudge();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(this.loops), new Promise((resolve) => { timer = setTimeout(resolve, graceMs); })]);
    clearTimeout(timer);
  }

  private startKind(kind: JobKind<unknown>): void {
    if (kind.concurrency === 0) return;
    for (let slot = 0; slot < kind.concurrency; slot++) this.loops.push(this.loop(kind));
    // One look per poll for the kind, not one per idle slot: a slot that finds a job wakes the next
    // (`loop`), so a backlog found by the poll still reaches every slot, and 8 idle slots of two
    // processes cost 2 takes a second instead of 16 (docs/performance.md, Webhooks).
    const waiting = this.wake.get(kind.name)!;
    this.polls.push(setInterval(() => {
      waiting.shift()?.();
      this.checkDroppedTurns(kind.name);
    }, kind.pollMs ?? this.pollMs));
  }

  /** An end of this process dropped the entity's turn: checked at the kind's poll after next (`droppedTurns`). */
  private droppedTurn(kind: string, entityId: number): void {
    let drops = this.droppedTurns.get(kind);
    if (!drops) this.droppedTurns.set(kind, (drops = { fresh: new Set(), aged: new Set() }));
    drops.fresh.add(entityId);
  }

  /**
   * The turns dropped before the kind's last poll: each such entity that has a job and no turn gets its
   * turn, in one statement (its commit nudges the kind). What this misses, `sweep_job_turns` repairs.
   */
  private checkDroppedTurns(kind: string): void {
    const drops = this.droppedTurns.get(kind);
    if (!drops) return;
    const due = drops.aged;
    drops.aged = drops.fresh;
    drops.fresh = new Set();
    if (drops.aged.size === 0) this.droppedTurns.delete(kind);
    if (due.size === 0) return;
    restoreTurns(this.options.db, kind, [...due]).then((restored) => {
      if (restored > 0) this.options.log.info({ kind, restored }, 'job turns restored after a write raced the end of its entity\'s last job');
    }, (error: unknown) => this.options.log.warn({ err: error, kind }, 'job turns not checked; sweep_job_turns repairs them'));
  }

  private async loop(kind: JobKind<unknown>): Promise<void> {
    // The take made by the last job's end, in the same transaction (`end`): its job, or none found.
    let next: Next | undefined;
    // A job taken by an end just as close() came is run too (close waits for it), not left to its lease.
    while (!this.closed || next?.taken) {
      let taken = next?.taken;
      let heldUntil = next?.heldUntil ?? 0;
      const looked = next !== undefined;
      next = undefined;
      if (!taken && !looked) {
        const take = this.takeOptions(kind);
        heldUntil = take.heldUntil;
        try {
          taken = this.saw(kind.name, await takeNextJob(this.options.db, take.options));
        } catch (error) {
          this.options.log.warn({ err: error, kind: kind.name }, 'job queue unavailable; trying again');
        } finally {
          this.takes.set(kind.name, (this.takes.get(kind.name) ?? 0) + 1);
        }
      }
      if (taken) {
        // There may be more: the next idle slot looks too (nudge), unless the take saw none.
        if (taken.more) this.nudge(kind.name);
        next = await this.run(kind, taken, heldUntil);
      } else {
        await this.idle(kind.name);
      }
    }
  }

  /** A take's options, and until when its claim holds. */
  private takeOptions(kind: JobKind<unknown>): { options: TakeOptions; heldUntil: number } {
    const heldUntil = this.now() + this.leaseMs;
    return {
      heldUntil,
      options: { kind: kind.name, now: this.iso(this.now()), until: this.iso(heldUntil), claim: `${CLAIMANT}:${randomUUID()}`, groupCap: kind.groupCap },
    };
  }

  /** Waits for a nudge or the kind's poll (`startKind`) to wake this slot. */
  private idle(kind: string): Promise<void> {
    // close() or a nudge may have come while this slot was taking, and found nobody idle: stop, or look
    // again, now rather than one poll later.
    if (this.closed || this.missed.delete(kind)) return Promise.resolve();
    return new Promise((resolve) => { this.wake.get(kind)!.push(resolve); });
  }

  /**
   * One run under a renewed lease, ended with its outcome, or left for its lease to pass (the
   * database or a store failed us, not the job: it is taken again, and `maxClaims` bounds how often).
   * A run whose lease is lost is given up at its next step: its outcome is not recorded. What it
   * gives back is the next job, taken in the transaction that ended this one (`end`).
   */
  private async run(kind: JobKind<unknown>, taken: TakenJob, heldUntil: number): Promise<Next | undefined> {
    const { db, log } = this.options;
    const job: Job<unknown> = {
      id: taken.id, key: taken.key, entityId: taken.entityId, group: taken.group,
      payload: taken.payload === null ? null : JSON.parse(taken.payload), attempts: taken.attempts, claims: taken.claims,
    };
    const about = { kind: kind.name, key: taken.key };
    if (taken.claims > (kind.maxClaims ?? 5)) return this.end(kind, taken, { failed: 'abandoned', ...kind.giveUp(job, 'abandoned') });
    const lease = new JobLease({
      renew: (until) => renewJob(db, taken, this.iso(until)),
      leaseMs: this.leaseMs, now: this.now,
      onLost: (reason, error) => log.warn({ err: error, ...about }, `job lost (${reason}); its result is dropped`),
      onRenewalFailed: (error) => log.warn({ err: error, ...about }, 'job lease not renewed; trying again'),
    }, heldUntil);
    const timeout = new AbortController();
    const timer = kind.timeoutMs === undefined ? undefined : setTimeout(() => timeout.abort(new JobTimedOut('took too long')), kind.timeoutMs);
    const signal = AbortSignal.any([lease.signal, timeout.signal]);
    const context: JobContext = { signal, check: () => signal.throwIfAborted() };
    // The time limit ends the job at once; the slot stays taken until the work itself has stopped.
    const timedOut = new Promise<'timed out'>((resolve) => timeout.signal.addEventListener('abort', () => resolve('timed out'), { once: true }));
    const work = kind.run(job, context);
    try {
      const first = await Promise.race([work, timedOut]);
      if (first === 'timed out') {
        // No next job yet: this slot is busy until the work has stopped, and a job it took would wait unleased.
        if (!lease.signal.aborted) await this.end(kind, taken, { failed: 'took too long', ...kind.giveUp(job, 'took too long') }, false);
        await work.catch(() => undefined);
        return undefined;
      }
      lease.check();
      return await this.end(kind, taken, first);
    } catch (error) {
      if (error instanceof JobLost || lease.signal.aborted) return undefined;
      if (timeout.signal.aborted) return await this.end(kind, taken, { failed: 'took too long', ...kind.giveUp(job, 'took too long') });
      log.warn({ err: error, ...about }, 'job interrupted; it is taken again when its lease ends');
      return undefined;
    } finally {
      clearTimeout(timer);
      lease.stop();
    }
  }

  /**
   * Saves a run's end and, unless closing (or `takeNext` is false), takes this slot's next job in the
   * same transaction (store/jobs.ts, endAndTake): one transaction per job ended and started, not two.
   */
  private async end(kind: JobKind<unknown>, taken: TakenJob, result: JobResult, takeNext = true): Promise<Next | undefined> {
    const failed = result.failed === undefined ? undefined : { error: result.failed, at: this.iso(this.now()) };
    const end = result.end === 'done' ? { done: true as const, failed }
      : { retryAt: this.iso(result.at), attempts: result.end === 'retry' ? taken.attempts + 1 : 0, failed };
    const take = takeNext && !this.closed ? this.takeOptions(kind) : undefined;
    try {
      const { saved, next, droppedTurn } = await endAndTake(this.options.db, taken, end, { record: result.record, log: result.log, next: take?.options });
      if (droppedTurn) this.droppedTurn(kind.name, taken.entityId);
      if (!saved) {
        this.options.log.warn({ kind: kind.name, key: taken.key }, 'job lost (its claim changed before the outcome was saved); its result is dropped');
      } else {
        this.ended.set(kind.name, (this.ended.get(kind.name) ?? 0) + 1);
      }
      // A place this end freed and no take to fill it: the kind is no longer known saturated.
      const following = this.saw(kind.name, next ?? { taken: undefined, saturated: false });
      return take ? { taken: following, heldUntil: take.heldUntil } : undefined;
    } catch (error) {
      this.options.log.warn({ err: error, kind: kind.name, key: taken.key }, 'job outcome not saved; it is taken again when its lease ends');
      return undefined;
    }
  }

  /** Notes whether a take saw the kind saturated (see `nudge`); its job, if any. */
  private saw(kind: string, result: TakeResult): Taken | undefined {
    if (result.saturated) this.saturated.set(kind, Date.now() + this.saturatedMs);
    else this.saturated.delete(kind);
    return result.taken;
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }
}
