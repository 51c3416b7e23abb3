import type { Cost } from './statement.js';
import type { Db, Trx } from './types.js';
import { ROLLBACK_TO, type Step, type Work } from './work.js';

/**
 * Answers one step with its rows: synchronously (SQLite on the event loop) or as a promise (PostgreSQL,
 * SQLite's reader thread). Throws, or rejects, with the driver's error.
 */
export type Execute = (step: Step) => unknown[] | Promise<unknown[]>;

/**
 * Runs a work to its end: the one loop for every dialect. It stays synchronous while `execute` answers
 * synchronously and goes on asynchronously from the first step answered by a promise.
 */
export function drive<T>(work: Work<T, Cost>, execute: Execute, db: Db | Trx): T | Promise<T> {
  const failure = new StatementFailure();
  const advance = (input: { rows: unknown[] } | { error: unknown }): T | Promise<T> => {
    for (;;) {
      const next = 'error' in input ? work.throw(input.error) : work.next(input.rows);
      if (next.done) return failure.check(next.value);
      const step = next.value;
      let rows: unknown[] | Promise<unknown[]>;
      try {
        rows = execute(step);
      } catch (error) {
        input = { error: failure.failed(error) };
        continue;
      }
      if (rows instanceof Promise) {
        return rows.then(
          (answered) => advance({ rows: failure.succeeded(db, step, answered) }),
          (error: unknown) => advance({ error: failure.failed(error) }),
        );
      }
      input = { rows: failure.succeeded(db, step, rows) };
    }
  };
  return advance({ rows: [] });
}

/**
 * A work may catch a statement's error only to roll back to a savepoint: PostgreSQL aborts the whole
 * transaction on any failed statement, and a work that carried on would "commit" nothing. The same
 * rule on SQLite keeps works behaving alike on both.
 */
class StatementFailure {
  private first: { error: unknown } | null = null;
  failed(error: unknown): unknown {
    this.first ??= { error };
    return error;
  }
  succeeded(db: Db | Trx, step: Step, rows: unknown[]): unknown[] {
    if (step.statement === ROLLBACK_TO) {
      this.first = null;
      rolledBack(db);
    }
    return rows;
  }
  check<T>(result: T): T {
    if (this.first) throw this.first.error;
    return result;
  }
}

export interface TransactionOptions {
  /**
   * False: PostgreSQL commits without waiting for the disk (`synchronous_commit = off` for this
   * transaction only), said with its BEGIN, in the same round trip. For a transaction whose loss in a
   * crash costs nothing but its being done again (a job queue's take: src/store/jobs.ts). SQLite
   * commits as ever.
   */
  durable?: boolean;
}

/** How a database runs works; one per open database (src/db/connect.ts attaches it). */
export interface Runtime {
  /** The work as one transaction: it commits entirely or not at all, and the promise settles after the commit. */
  transaction<T>(work: () => Work<T>, options?: TransactionOptions): Promise<T>;
  /** A read-only work outside any transaction: each statement sees committed data. */
  read<T>(work: () => Work<T, Cost>): Promise<T>;
  /** A read whose rows are large (readBulk); runtimes without it run it as `read`. */
  readBulk?<T>(work: () => Work<T, Cost>): Promise<T>;
  /**
   * A work of at most one statement, which is a transaction of its own: PostgreSQL runs it without
   * BEGIN and COMMIT (two round trips fewer). Runtimes without it run the work as a transaction.
   */
  single?<T>(work: () => Work<T>): Promise<T>;
}

const runtimes = new WeakMap<Db, Runtime>();

export function attachRuntime(db: Db, runtime: Runtime): void {
  runtimes.set(db, runtime);
}

function runtimeOf(db: Db): Runtime {
  const runtime = runtimes.get(db);
  if (!runtime) throw new Error('this database was not opened with connect() (src/db/connect.ts)');
  return runtime;
}

/**
 * Runs a work as one transaction. On SQLite, works started in the same event-loop turn share one
 * commit (src/db/sqlite/group-commit.ts); on PostgreSQL each is a transaction of its own, run again
 * when PostgreSQL breaks a deadlock by aborting it.
 */
export const transaction = <T>(db: Db, work: () => Work<T>, options?: TransactionOptions): Promise<T> =>
  noted(db, work, (w) => runtimeOf(db).transaction(w, options));

/** Runs a work through `run`, telling the database's listeners its statements' signals once it has committed. */
function noted<T>(db: Db, work: () => Work<T>, run: (work: () => Work<T>) => Promise<T>): Promise<T> {
  const listening = committedListeners.get(db);
  if (!listening) return run(work);
  const signals = new Set<string>();
  return run(() => noting(work(), signals)).then((value) => {
    for (const signal of signals) for (const listener of listening) listener(signal);
    return value;
  });
}

const committedListeners = new WeakMap<Db, Set<(signal: string) => void>>();

/**
 * Calls `listener` with each statement's `signal` (src/db/statement.ts) once a transaction that ran
 * it has committed on this database (a rolled-back one says nothing); returns what stops it. The job
 * runner nudges its idle slots this way (src/jobs/runner.ts): after the commit, so a slot never looks
 * before the jobs are there, and per database, so two apps in one process do not wake each other.
 */
export function afterCommit(db: Db, listener: (signal: string) => void): () => void {
  let listening = committedListeners.get(db);
  if (!listening) committedListeners.set(db, (listening = new Set()));
  listening.add(listener);
  return () => listening.delete(listener);
}

/** Passes a work's steps through, noting the signals of those that carry one. */
function* noting<T>(work: Work<T>, signals: Set<string>): Work<T> {
  let input: { rows: unknown[] } | { error: unknown } = { rows: [] };
  for (;;) {
    const next: IteratorResult<Step<'point'>, T> = 'error' in input ? work.throw(input.error) : work.next(input.rows);
    if (next.done) return next.value;
    const { signal } = next.value.statement;
    try {
      input = { rows: yield next.value };
    } catch (error) {
      input = { error };
    }
    const said = signal && 'rows' in input ? signal(next.value.params, input.rows) : undefined;
    for (const word of typeof said === 'string' ? [said] : said ?? []) signals.add(word);
  }
}

/** Runs a work of at most one (writing) statement, atomic on its own (Runtime.single). */
export const single = <T>(db: Db, work: () => Work<T>): Promise<T> => {
  const runtime = runtimeOf(db);
  return noted(db, work, (w) => (runtime.single ? runtime.single(w) : runtime.transaction(w)));
};

/** Runs a read-only work; on SQLite its scans run on a reader thread, off the event loop. */
export const read = <T>(db: Db, work: () => Work<T, Cost>): Promise<T> => runtimeOf(db).read(work);

/**
 * Runs a read whose rows are large: a slice of an answer of up to a megabyte (changelog entries,
 * their stored text). On PostgreSQL only a few run at once per process (PG_BULK_READS): twenty
 * clients reading such answers would otherwise hold every pooled connection, and make a busy backend
 * of each, so small requests would wait for a connection and every process on the machine for a core.
 * On SQLite it is `read`: its large reads already take turns on one reader thread or on the event loop.
 */
export const readBulk = <T>(db: Db, work: () => Work<T, Cost>): Promise<T> => {
  const runtime = runtimeOf(db);
  return runtime.readBulk ? runtime.readBulk(work) : runtime.read(work);
};

const rollbackListeners = new Set<(db: Db | Trx) => void>();

/**
 * Calls `listener` whenever writes made in a transaction on a database may have been undone (a
 * rollback, whole or to a savepoint): a cache of ids read inside a transaction must forget them, as
 * another work of the same transaction may have written those rows.
 */
export function onRollback(listener: (db: Db | Trx) => void): void {
  rollbackListeners.add(listener);
}

export function rolledBack(db: Db | Trx): void {
  for (const listener of rollbackListeners) listener(db);
}
