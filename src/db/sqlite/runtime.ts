import type SQLite from 'better-sqlite3';
import { databaseUnavailable, isBusy, translateUnavailable } from '../errors.js';
import { drive, rolledBack, type Execute, type Runtime } from '../run.js';
import type { Cost } from '../statement.js';
import type { Db } from '../types.js';
import { RELEASE_SQL, ROLLBACK_TO_SQL, SAVEPOINT_SQL, type Step, type Work } from '../work.js';
import { PreparedCache } from './prepared.js';
import type { SqliteReader } from './reader.js';

/** Prepared statements kept on the main connection (a few per query shape and page size). */
const PREPARED_MAX = 300;
/**
 * How long writes wait, in all, for a lock another process holds (a CLI command, a backup) before they
 * are answered with 503. They wait between tries, never on the event loop: the connection's own busy
 * timeout is zero.
 */
const BUSY_DEADLINE_MS = 600;
/**
 * A group stops taking works once it has held the event loop this long; the rest form the next group,
 * a turn later, so requests waiting for the loop (a health probe, a page) get it in between. Four
 * batches of 100 started together otherwise ran back to back in one synchronous stretch of ~80 ms.
 */
const GROUP_BUDGET_MS = 8;
/**
 * With a reader thread, the main connection never checkpoints (a checkpoint copies the WAL's pages into
 * the database and syncs it: tens of milliseconds on the event loop, measured as the worst stall of a
 * run of deletes or batches). After a commit the reader thread checkpoints instead, one at a time and
 * at most this often. Small and frequent beats large and rare: while the database file is synced, the
 * main thread's next WAL write may wait for the file system's journal (measured: every 5 s → stalls of
 * 300 ms, 500 ms → 70 ms, 100 ms → under 40 ms in a run of deletes).
 */
const CHECKPOINT_EVERY_MS = 25;
/**
 * Checkpoints alone start no thread while the WAL file holds less than this (a few hundred small commits):
 * a process that writes little (a CLI command, a short-lived server) would otherwise start one at its first
 * commit to copy a few pages, ~90 ms of CPU and ~75 ms of wall time (docs/architecture.md). Once the thread
 * runs (a scan started it, or the WAL grew this large) checkpoints follow commits as above; closing the
 * main connection checkpoints what is left.
 */
const FIRST_CHECKPOINT_WAL_BYTES = 1024 * 1024;
const BUSY_RETRY_FIRST_MS = 5;

interface Queued {
  work: () => Work<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  /** When the work first found the database locked by another process; null until then. */
  busySince: number | null;
}

/**
 * Runs works on one better-sqlite3 connection:
 * - point statements synchronously on the event loop (no promise per statement), scans on the reader
 *   thread;
 * - transactions as a group commit: works started in the same event-loop turn run one after the other,
 *   each in a savepoint of one transaction, so each is still atomic and fails alone while the group pays
 *   for one commit (the dearest part of a small write: its pages go to the WAL file). Each answer is
 *   sent only after the commit.
 */
export class SqliteRuntime implements Runtime {
  private readonly prepared: PreparedCache;
  private queue: Queued[] = [];
  private scheduled = false;
  private checkpointDue = 0;
  private checkpointing = false;

  constructor(private readonly db: Db, private readonly sqlite: SQLite.Database, private readonly reader: SqliteReader | null) {
    this.prepared = new PreparedCache(sqlite, PREPARED_MAX);
  }

  private readonly onMain: Execute = (step: Step) => {
    const { sql, parameters } = step.statement.bind(this.db, step.params);
    return this.prepared.run(sql, parameters);
  };

  private readonly offMain: Execute = (step: Step) => {
    const { statement, params } = step;
    if (!this.reader || statement.cost === 'point' || statement.inlineWhen?.(params)) return this.onMain(step);
    const { sql, parameters } = statement.bind(this.db, params);
    return this.reader.run(sql, parameters);
  };

  async read<T>(work: () => Work<T, Cost>): Promise<T> {
    try {
      return await drive(work(), this.offMain, this.db);
    } catch (error) {
      throw translateUnavailable(error);
    }
  }

  transaction<T>(work: () => Work<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject, busySince: null });
      this.schedule(0);
    });
  }

  private schedule(delayMs: number): void {
    if (this.scheduled) return;
    this.scheduled = true;
    const commit = () => {
      this.scheduled = false;
      this.commitQueued();
    };
    if (delayMs === 0) setImmediate(commit);
    else setTimeout(commit, delayMs);
  }

  private commitQueued(): void {
    const group = this.queue;
    this.queue = [];
    if (group.length === 0) return;
    try {
      this.prepared.run('BEGIN IMMEDIATE', []);
    } catch (error) {
      if (!isBusy(error)) {
        for (const { reject } of group) reject(error);
        return;
      }
      this.waitForLock(group);
      return;
    }
    this.commitGroup(group);
  }

  /**
   * Another process holds the write lock: the group tries again a little later (with the works queued
   * meanwhile), each retry after as long as it has waited so far; a work that has waited beyond the
   * deadline is answered 503.
   */
  private waitForLock(group: Queued[]): void {
    const now = Date.now();
    const waiting: Queued[] = [];
    for (const queued of group) {
      queued.busySince ??= now;
      if (now - queued.busySince >= BUSY_DEADLINE_MS) queued.reject(databaseUnavailable());
      else waiting.push(queued);
    }
    this.queue = [...waiting, ...this.queue];
    if (waiting.length === 0) return;
    const waited = now - waiting[0]!.busySince!;
    this.schedule(Math.max(BUSY_RETRY_FIRST_MS, Math.min(waited, BUSY_DEADLINE_MS - waited)));
  }

  private checkpointSoon(): void {
    const now = Date.now();
    if (!this.reader || this.checkpointing || now < this.checkpointDue) return;
    this.checkpointDue = now + CHECKPOINT_EVERY_MS;
    if (!this.reader.running && this.reader.walBytes() < FIRST_CHECKPOINT_WAL_BYTES) return;
    this.checkpointing = true;
    // Best effort: a checkpoint that fails (a lock, a closed thread) is tried again after a later commit.
    this.reader.checkpoint().catch(() => undefined).finally(() => { this.checkpointing = false; });
  }

  private commitGroup(queued: Queued[]): void {
    // A group of one needs no savepoint: its failure is the transaction's (a batch's items would
    // otherwise journal every page twice).
    const nested = queued.length > 1;
    const outcomes: Array<{ value: unknown } | { error: unknown }> = [];
    const started = performance.now();
    let group = queued;
    try {
      for (const [i, { work }] of queued.entries()) {
        if (i > 0 && performance.now() - started >= GROUP_BUDGET_MS) {
          group = queued.slice(0, i);
          this.queue = [...queued.slice(i), ...this.queue];
          this.schedule(0);
          break;
        }
        if (nested) this.prepared.run(SAVEPOINT_SQL, []);
        try {
          const value = drive(work(), this.onMain, this.db);
          if (value instanceof Promise) throw new Error('a transaction ran a statement off the event loop');
          outcomes.push({ value });
        } catch (error) {
          if (!nested) throw error;
          this.prepared.run(ROLLBACK_TO_SQL, []);
          rolledBack(this.db);
          outcomes.push({ error });
        }
        if (nested) this.prepared.run(RELEASE_SQL, []);
      }
      this.prepared.run('COMMIT', []);
      this.checkpointSoon();
    } catch (error) {
      // COMMIT failed, or the only work did: nothing of the group is kept.
      if (this.sqlite.inTransaction) this.prepared.run('ROLLBACK', []);
      rolledBack(this.db);
      for (const { reject } of group) reject(translateUnavailable(error));
      return;
    }
    group.forEach(({ resolve, reject }, i) => {
      const outcome = outcomes[i]!;
      if ('value' in outcome) resolve(outcome.value);
      else reject(outcome.error);
    });
  }
}
