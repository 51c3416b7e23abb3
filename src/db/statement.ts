import { ValueNode, type Compilable, type Expression, type OperationNode } from 'kysely';
import type { Db, Trx } from './types.js';

/**
 * How a statement's cost grows (src/db/README.md):
 * - `point`: bounded whatever the data (a key lookup, an index range with a small LIMIT, a write of one
 *   row). Only point statements may run in a transaction, and on SQLite they run synchronously on the
 *   event loop.
 * - `scan`: may grow with a catalog (OFFSET deep in an index, counting a window, sorting an entity's
 *   events). Only reads may hold them; on SQLite they run on a reader thread, off the event loop.
 */
export type Cost = 'point' | 'scan';

/**
 * A statement parameter inside a builder: it stands where a value goes and is bound per run. It is a
 * Kysely expression, not a value, so arithmetic on it or an array where one value goes fails to compile.
 */
export type Param<T> = Expression<T>;

/** The builder's view of a statement's parameters: one placeholder per named value. */
export type Params<P> = { readonly [K in keyof P]-?: Param<P[K]> };

class Placeholder implements Expression<unknown> {
  constructor(readonly name: string) {}
  get expressionType(): unknown {
    return undefined;
  }
  toOperationNode(): OperationNode {
    // Compiled as an ordinary parameter whose value is this placeholder; `bind` swaps in the real value.
    return ValueNode.create(this);
  }
}

/** The dialect's SQL of a statement, and per SQL parameter either the name of a value or an inlined constant. */
interface Compiled {
  sql: string;
  slots: Array<{ name: string } | { value: unknown }>;
}

export interface Statement<P, R, C extends Cost = 'point'> {
  readonly cost: C;
  /** Only for typing: the rows a statement returns. */
  readonly rows?: R;
  /** A scan that runs on the event loop after all for these parameters (their cost is small). */
  readonly inlineWhen?: ((params: P) => boolean) | undefined;
  /** PostgreSQL plans it for each run's values instead of once per connection (see `StatementOptions`). */
  readonly planPerRun?: boolean | undefined;
  /** What a transaction that ran it tells the database's listeners once it has committed (`afterCommit`, src/db/run.ts). */
  readonly signal?: ((params: P, rows: readonly unknown[]) => Signals) | undefined;
  /** The dialect's SQL and its parameter values, in order. */
  bind(db: Db | Trx, params: P): { sql: string; parameters: unknown[] };
}

export interface StatementOptions<P, C extends Cost> {
  cost?: C;
  inlineWhen?: (params: P) => boolean;
  /**
   * For a statement whose best plan depends on its values (a text search: a pattern that matches
   * nothing is found fastest through a trigram index, one that matches most rows by walking the
   * rows in order). PostgreSQL then parses and plans it on every run, with the values (about 0.1 ms);
   * a named statement would settle on one generic plan for all values after its fifth run.
   */
  planPerRun?: boolean;
  /**
   * A word for the database's listeners once a transaction that ran this statement has committed
   * (`afterCommit`, src/db/run.ts): the job queue's inserts say their kind, so this process's idle
   * slots of that kind look at once, and never before the jobs are visible. A statement that queues
   * jobs only sometimes (a write's record, src/store/changelog.ts) says so from its rows.
   */
  signal?: (params: P, rows: readonly unknown[]) => Signals;
}

/** The words a statement's run says once its transaction commits: none, one, or several (from its rows). */
export type Signals = string | readonly string[] | undefined;

const placeholders = new Proxy({}, { get: (_target, name) => new Placeholder(String(name)) });

/**
 * A statement: `build` receives the database and the parameters' placeholders (`where('id', '=',
 * p.id)`) and is compiled once per dialect, then only bound and run. Building and compiling a Kysely
 * query costs more than running a point query on SQLite; a statement pays it once.
 */
export function statement<P extends object, R, C extends Cost = 'point'>(
  build: (db: Db, p: Params<P>) => Compilable<R>,
  options: StatementOptions<P, C> = {},
): Statement<P, R, C> {
  // Keyed by the dialect adapter, which a Kysely instance shares with its transactions.
  const byDialect = new WeakMap<object, Compiled>();
  const compiled = (db: Db | Trx): Compiled => {
    const adapter = db.getExecutor().adapter;
    let found = byDialect.get(adapter);
    if (!found) {
      const query = build(db, placeholders as Params<P>).compile();
      found = {
        sql: query.sql,
        slots: query.parameters.map((value) => (value instanceof Placeholder ? { name: value.name } : { value })),
      };
      byDialect.set(adapter, found);
    }
    return found;
  };
  return {
    cost: options.cost ?? ('point' as C),
    inlineWhen: options.inlineWhen,
    planPerRun: options.planPerRun,
    signal: options.signal,
    bind(db, params) {
      const { sql, slots } = compiled(db);
      const values = params as Record<string, unknown>;
      return { sql, parameters: slots.map((slot) => ('name' in slot ? values[slot.name] : slot.value)) };
    },
  };
}

/**
 * One statement per page size, the size written into the SQL (`sql.lit(limit)`): SQLite re-plans a
 * statement with `LIMIT ?` on every run, which costs more than the query. Sizes are whole numbers from
 * 1 to `maxSize`, so the statements are few; their prepared forms live in a bounded cache.
 */
export function statementPerPageSize<P extends object, R, C extends Cost = 'point'>(
  maxSize: number,
  build: (db: Db, p: Params<P>, limit: number) => Compilable<R>,
  options: StatementOptions<P, C> = {},
): (limit: number) => Statement<P, R, C> {
  const bySize = new Map<number, Statement<P, R, C>>();
  return (limit) => {
    if (!Number.isInteger(limit) || limit < 1 || limit > maxSize) throw new RangeError(`page size ${limit} is not 1 to ${maxSize}`);
    let found = bySize.get(limit);
    if (!found) bySize.set(limit, (found = statement<P, R, C>((db, p) => build(db, p, limit), options)));
    return found;
  };
}

/** A statement without parameters whose SQL is the same on both dialects. */
export function fixed(sql: string): Statement<object, never> {
  return { cost: 'point', bind: () => ({ sql, parameters: [] }) };
}
