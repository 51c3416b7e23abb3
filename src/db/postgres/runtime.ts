import type { Pool, PoolClient, QueryConfig } from 'pg';
import { isRetryableConflict, translateUnavailable } from '../errors.js';
import { drive, rolledBack, type Execute, type Runtime, type TransactionOptions } from '../run.js';
import { Slots } from '../slots.js';
import type { Cost } from '../statement.js';
import type { Db } from '../types.js';
import type { Step, Work } from '../work.js';

/** Runs of one transaction when PostgreSQL aborts it to break a deadlock or a serialization conflict. */
const TRANSACTION_ATTEMPTS = 3;

/**
 * Statements get a name, so each connection parses and plans a statement's SQL once and then only
 * binds and runs it (pg keeps a connection's named statements). Shapes are few; past the bound, SQL
 * built from data would only fill every connection's memory, so it runs unnamed. A statement planned
 * per run (`planPerRun`) runs unnamed: PostgreSQL plans an unnamed statement with its values.
 */
const NAMED_STATEMENTS_MAX = 2_000;
const names = new Map<string, string>();

function queryOf(db: Db, step: Step): QueryConfig {
  const { sql, parameters } = step.statement.bind(db, step.params);
  if (step.statement.planPerRun) return { text: sql, values: parameters };
  let name = names.get(sql);
  if (name === undefined && names.size < NAMED_STATEMENTS_MAX) names.set(sql, (name = `s${names.size}`));
  return name === undefined ? { text: sql, values: parameters } : { name, text: sql, values: parameters };
}

const executeOn = (db: Db, runner: Pool | PoolClient): Execute => (step: Step) =>
  runner.query(queryOf(db, step)).then((result) => result.rows as unknown[]);

/**
 * Works on a PostgreSQL pool, straight on the driver (Kysely builds the statements, once; running
 * one through it would only add layers): every statement is a round trip; a read takes a connection
 * per statement and no transaction; a transaction holds one connection from BEGIN to COMMIT.
 */
export class PostgresRuntime implements Runtime {
  private readonly bulk: Slots;

  /** `bulkReads`: how many large reads (readBulk) run at once; the others wait for one of them to end. */
  constructor(private readonly db: Db, private readonly pool: Pool, bulkReads: number) {
    this.bulk = new Slots(bulkReads);
  }

  async read<T>(work: () => Work<T, Cost>): Promise<T> {
    try {
      return await drive(work(), executeOn(this.db, this.pool), this.db);
    } catch (error) {
      throw translateUnavailable(error);
    }
  }

  readBulk<T>(work: () => Work<T, Cost>): Promise<T> {
    return this.bulk.run(() => this.read(work));
  }

  async single<T>(work: () => Work<T>): Promise<T> {
    const execute = executeOn(this.db, this.pool);
    return this.attempts(() => {
      let statements = 0;
      return Promise.resolve(drive(work(), (step) => {
        if (++statements > 1) throw new Error('a single-statement work yielded a second statement');
        return execute(step);
      }, this.db));
    });
  }

  transaction<T>(work: () => Work<T>, options?: TransactionOptions): Promise<T> {
    return this.attempts(() => this.once(work, options?.durable === false ? BEGIN_NOT_DURABLE : 'BEGIN'));
  }

  private async attempts<T>(run: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await run();
      } catch (error) {
        rolledBack(this.db);
        // A deadlock victim has written nothing; its work (a generator factory) runs again from the start.
        if (attempt < TRANSACTION_ATTEMPTS && isRetryableConflict(error)) continue;
        throw translateUnavailable(error);
      }
    }
  }

  private async once<T>(work: () => Work<T>, begin: string): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query(begin);
      try {
        const result = await drive(work(), executeOn(this.db, client), this.db);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: Error) => { broken = rollbackError; });
        throw error;
      }
    } catch (error) {
      // A connection that failed mid-transaction (dropped, timed out) is not given back to the pool.
      broken ??= isConnectionError(error) ? (error as Error) : undefined;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

/**
 * A transaction that commits without waiting for the disk (TransactionOptions.durable): both
 * statements in one simple query, one round trip (a `set local` of its own was one more round trip
 * of every job queue take: docs/performance.md, Webhooks).
 */
const BEGIN_NOT_DURABLE = 'BEGIN; SET LOCAL synchronous_commit = off';

/** Errors of the connection itself rather than of a statement (those carry a SQLSTATE). */
const isConnectionError = (error: unknown): boolean =>
  !(typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' && /^[0-9A-Z]{5}$/.test((error as { code: string }).code));
