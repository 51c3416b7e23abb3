import { fixed, type Cost, type Statement } from './statement.js';

/** One statement of a work with its parameter values; the runner answers it with the rows. */
export interface Step<C extends Cost = Cost> {
  statement: Statement<unknown, unknown, C>;
  params: unknown;
}

/**
 * Store logic over statements: a generator that yields statements and receives their rows
 * (`const row = yield* first(statement, params)`). `C` is the dearest statement it may hold: a
 * `Work<T>` holds point statements only (what a transaction accepts), a `Work<T, Cost>` may scan.
 * Run it with `transaction` or `read` (src/db/run.ts); a work that is created and never yielded does
 * nothing, and the lint rule `local/no-unyielded-work` says so.
 */
export type Work<T, C extends Cost = 'point'> = Generator<Step<C>, T, unknown[]>;

/** The rows of a statement. */
export function* all<P, R, C extends Cost>(statement: Statement<P, R, C>, params: P): Work<R[], C> {
  return (yield { statement: statement as Statement<unknown, unknown, C>, params }) as R[];
}

/** The first row of a statement, if any. */
export function* first<P, R, C extends Cost>(statement: Statement<P, R, C>, params: P): Work<R | undefined, C> {
  return (yield* all(statement, params))[0];
}

export const SAVEPOINT_SQL = 'SAVEPOINT item';
export const RELEASE_SQL = 'RELEASE SAVEPOINT item';
export const ROLLBACK_TO_SQL = 'ROLLBACK TO SAVEPOINT item';
const SAVEPOINT = fixed(SAVEPOINT_SQL);
const RELEASE = fixed(RELEASE_SQL);
/** The one statement after which a failed statement no longer fails the work (src/db/run.ts). */
export const ROLLBACK_TO = fixed(ROLLBACK_TO_SQL);

/**
 * Runs `work` as a nested transaction of the enclosing one: when it throws, its statements roll back
 * alone and the error goes on to the caller, which may carry on with the transaction.
 */
export function* savepoint<T>(work: Work<T>): Work<T> {
  yield* all(SAVEPOINT, {});
  let result: T;
  try {
    result = yield* work;
  } catch (error) {
    yield* all(ROLLBACK_TO, {});
    yield* all(RELEASE, {});
    throw error;
  }
  yield* all(RELEASE, {});
  return result;
}
