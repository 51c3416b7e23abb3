import { CompiledQuery, type Compilable } from 'kysely';
import type SQLite from 'better-sqlite3';
import type { Db, Trx } from './types.js';

/**
 * Hot queries as statements: built with Kysely once per database (so the SQL stays typed and
 * dialect-correct) and then only executed. Building and compiling a Kysely query costs more than
 * running a point query on SQLite; a statement pays it once.
 *
 * Store code that writes is a *work*: a generator that yields statements and receives their rows
 * (`const row = yield* first(st, params)`). On SQLite a work runs synchronously from its first
 * statement to its last — no other request can interleave, and there is no promise per statement —
 * in a savepoint of a transaction it shares with the works started in the same event-loop turn
 * (a group commit). On PostgreSQL it runs statement by statement in a transaction of its own.
 */

class Placeholder {
  constructor(readonly name: string) {}
}

interface Compiled {
  sql: string;
  /** Per SQL parameter: the name of the value to bind, or a constant the builder inlined. */
  slots: Array<{ name: string } | { value: unknown }>;
}

export interface Statement<P, R> {
  /** Only for typing: the rows a statement returns. */
  readonly rows?: R;
  /** The dialect's SQL and its parameter values, in order. */
  bind(db: Db | Trx, params: P): { sql: string; parameters: unknown[] };
}

/** `{ column: p.column, … }`: the values of an insert or update statement, one parameter per column. */
export function columns<P, K extends keyof P>(p: P, names: readonly K[]): Pick<P, K> {
  return Object.fromEntries(names.map((name) => [name, p[name]])) as Pick<P, K>;
}

/**
 * A statement with named parameters: `build` receives the database and stand-ins for the
 * parameters, used wherever a value goes (`where('id', '=', p.id)`).
 */
export function statement<P extends object, R>(build: (db: Db, p: P) => Compilable<R>): Statement<P, R> {
  // Keyed by the dialect adapter, which a Kysely instance shares with its transactions.
  const byDatabase = new WeakMap<object, Compiled>();
  const placeholders = new Proxy({}, { get: (_target, name) => new Placeholder(String(name)) }) as P;
  const compiled = (db: Db | Trx): Compiled => {
    const adapter = db.getExecutor().adapter;
    let found = byDatabase.get(adapter);
    if (!found) {
      const query = build(db as Db, placeholders).compile();
      found = {
        sql: query.sql,
        slots: query.parameters.map((value) => (value instanceof Placeholder ? { name: value.name } : { value })),
      };
      byDatabase.set(adapter, found);
    }
    return found;
  };
  return {
    bind(db, params) {
      const { sql, slots } = compiled(db);
      const values = params as Record<string, unknown>;
      return { sql, parameters: slots.map((slot) => ('name' in slot ? values[slot.name] : slot.value)) };
    },
  };
}

/**
 * One statement per page size, the size written into the SQL (`sql.lit(limit)`): SQLite re-plans a
 * statement with `LIMIT ?` on every run, which costs more than the query. Sizes are whole numbers
 * from 1 to `maxSize` (the API's limit), so the statements are few.
 */
export function statementPerPageSize<P extends object, R>(maxSize: number, build: (db: Db, p: P, limit: number) => Compilable<R>) {
  const bySize = new Map<number, Statement<P, R>>();
  return (limit: number): Statement<P, R> => {
    if (!Number.isInteger(limit) || limit < 1 || limit > maxSize) throw new RangeError(`page size ${limit} is not 1 to ${maxSize}`);
    let found = bySize.get(limit);
    if (!found) bySize.set(limit, (found = statement<P, R>((db, p) => build(db, p, limit))));
    return found;
  };
}

/** A statement without parameters whose SQL is the same on both dialects. */
function fixed(sql: string): Statement<object, never> {
  return { bind: () => ({ sql, parameters: [] }) };
}

const SAVEPOINT_SQL = 'SAVEPOINT item';
const RELEASE_SQL = 'RELEASE SAVEPOINT item';
const ROLLBACK_TO_SQL = 'ROLLBACK TO SAVEPOINT item';
const SAVEPOINT = fixed(SAVEPOINT_SQL);
const RELEASE = fixed(RELEASE_SQL);
const ROLLBACK_TO = fixed(ROLLBACK_TO_SQL);

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

interface Step {
  statement: Statement<unknown, unknown>;
  params: unknown;
}

/** Store logic over statements; run it with `transaction` or `read`. */
export type Work<T> = Generator<Step, T, unknown[]>;

/** The rows of a statement. */
export function* all<P, R>(statement: Statement<P, R>, params: P): Work<R[]> {
  return (yield { statement: statement as Statement<unknown, unknown>, params }) as R[];
}

/** The first row of a statement, if any. */
export function* first<P, R>(statement: Statement<P, R>, params: P): Work<R | undefined> {
  return (yield* all(statement, params))[0];
}

// ---------- running ----------

interface SqliteAccess {
  sqlite: SQLite.Database;
  prepared: Map<string, Prepared>;
  /** Works waiting for the next group commit. */
  group: Array<{ work: () => Work<unknown>; resolve: (value: unknown) => void; reject: (error: unknown) => void }>;
}

interface Prepared {
  statement: SQLite.Statement;
  /** Builds a row object from better-sqlite3's raw array; null for statements that return no rows. */
  toRow: ((values: unknown[]) => unknown) | null;
}

const sqliteOf = new WeakMap<Db, SqliteAccess>();

/** Lets works on `db` run straight on its better-sqlite3 connection (called by `connect`). */
export function attachSqlite(db: Db, sqlite: SQLite.Database): void {
  sqliteOf.set(db, { sqlite, prepared: new Map(), group: [] });
}

/**
 * better-sqlite3 builds row objects through V8's slow generic property path, which costs more than
 * the query for a wide row. Raw arrays plus an object literal per statement shape (column names are
 * our schema's, quoted by JSON.stringify) give V8 one fast hidden class per statement.
 */
function prepare(access: SqliteAccess, sql: string): Prepared {
  let found = access.prepared.get(sql);
  if (!found) {
    const statement = access.sqlite.prepare(sql);
    let toRow: Prepared['toRow'] = null;
    if (statement.reader) {
      statement.raw(true);
      const fields = statement.columns().map((column, i) => `${JSON.stringify(column.name)}: values[${i}]`);
      toRow = new Function('values', `return { ${fields.join(', ')} };`) as Prepared['toRow'];
    }
    found = { statement, toRow };
    access.prepared.set(sql, found);
  }
  return found;
}

/**
 * Runs a work as one transaction: it commits entirely or not at all, and the promise settles after
 * the commit. On PostgreSQL that is a transaction of its own. On SQLite, works started in the same
 * turn of the event loop commit together (a group commit): each runs in a savepoint of one
 * transaction, so each is still atomic and fails alone, while the group pays for one commit. A commit
 * is the dearest part of a small write: its pages go to the WAL file.
 */
export function transaction<T>(db: Db, work: () => Work<T>): Promise<T> {
  const access = sqliteOf.get(db);
  if (!access) return kyselyTransaction(db, work);
  return new Promise<T>((resolve, reject) => {
    access.group.push({ work, resolve: resolve as (value: unknown) => void, reject });
    if (access.group.length === 1) setImmediate(commitGroup, db, access);
  });
}

function commitGroup(db: Db, access: SqliteAccess): void {
  const group = access.group;
  access.group = [];
  // A Kysely transaction is open on the connection (a write between its awaits): wait for it through
  // Kysely, one transaction per work, never joining it.
  if (access.sqlite.inTransaction) {
    for (const { work, resolve, reject } of group) kyselyTransaction(db, work).then(resolve, reject);
    return;
  }
  // A group of one needs no savepoint: its failure is the transaction's (a batch's items would
  // otherwise journal every page twice).
  const nested = group.length > 1;
  const run = (sql: string) => prepare(access, sql).statement.run();
  const outcomes: Array<{ value: unknown } | { error: unknown }> = [];
  try {
    run('BEGIN IMMEDIATE');
    for (const { work } of group) {
      if (nested) run(SAVEPOINT_SQL);
      try {
        outcomes.push({ value: runSqlite(db, access, work()) });
      } catch (error) {
        if (!nested) throw error;
        run(ROLLBACK_TO_SQL);
        rolledBack(db);
        outcomes.push({ error });
      }
      if (nested) run(RELEASE_SQL);
    }
    run('COMMIT');
  } catch (error) {
    // BEGIN or COMMIT failed, or the only work did: nothing of the group is kept.
    if (access.sqlite.inTransaction) run('ROLLBACK');
    rolledBack(db);
    for (const { reject } of group) reject(error);
    return;
  }
  group.forEach(({ resolve, reject }, i) => {
    const outcome = outcomes[i]!;
    if ('value' in outcome) resolve(outcome.value);
    else reject(outcome.error);
  });
}

function kyselyTransaction<T>(db: Db, work: () => Work<T>): Promise<T> {
  return db.transaction().execute((trx) => runIn(trx, work())).catch((error: unknown) => {
    rolledBack(db);
    throw error;
  });
}

const rollbackListeners = new Set<(db: Db | Trx) => void>();

/**
 * Calls `listener` whenever writes made in a transaction on a database may have been undone (a
 * rollback, whole or to a savepoint): a cache of ids read inside a transaction must forget them, as
 * another work of the same transaction may have written those rows.
 */
export function onRollback(listener: (db: Db | Trx) => void): void {
  rollbackListeners.add(listener);
}

function rolledBack(db: Db | Trx): void {
  for (const listener of rollbackListeners) listener(db);
}

/** Runs a read-only work outside any transaction (each statement sees committed data). */
export function read<T>(db: Db, work: Work<T>): Promise<T> {
  const access = sqliteOf.get(db);
  if (access && !access.sqlite.inTransaction) {
    try {
      return Promise.resolve(runSqlite(db, access, work));
    } catch (error) {
      return Promise.reject(error);
    }
  }
  return runIn(db, work);
}

/** Runs a work statement by statement on a Kysely instance or inside an open Kysely transaction. */
export async function runIn<T>(db: Db | Trx, work: Work<T>): Promise<T> {
  const failure = new StatementFailure();
  let step = work.next();
  while (!step.done) {
    let rows: unknown[];
    try {
      const { sql, parameters } = step.value.statement.bind(db, step.value.params);
      rows = (await db.executeQuery(CompiledQuery.raw(sql, parameters))).rows;
      failure.succeeded(db, step.value.statement);
    } catch (error) {
      step = work.throw(failure.failed(error));
      continue;
    }
    step = work.next(rows);
  }
  return failure.check(step.value);
}

/**
 * A work may catch a statement's error only to roll back to a savepoint: PostgreSQL aborts the whole
 * transaction on any failed statement, and a work that carried on would "commit" nothing. The same
 * rule on SQLite keeps works behaving alike on both.
 */
class StatementFailure {
  private error: unknown = undefined;
  failed(error: unknown): unknown {
    this.error ??= error;
    return error;
  }
  succeeded(db: Db | Trx, statement: Statement<never, unknown>): void {
    if (statement !== ROLLBACK_TO) return;
    this.error = undefined;
    rolledBack(db);
  }
  check<T>(result: T): T {
    if (this.error !== undefined) throw this.error;
    return result;
  }
}

function runSqlite<T>(db: Db, access: SqliteAccess, work: Work<T>): T {
  const failure = new StatementFailure();
  let step = work.next();
  while (!step.done) {
    let rows: unknown[];
    try {
      const { sql, parameters } = step.value.statement.bind(db, step.value.params);
      const { statement, toRow } = prepare(access, sql);
      rows = toRow ? (statement.all(parameters) as unknown[][]).map(toRow) : (statement.run(parameters), []);
      failure.succeeded(db, step.value.statement);
    } catch (error) {
      step = work.throw(failure.failed(error));
      continue;
    }
    step = work.next(rows);
  }
  return failure.check(step.value);
}
