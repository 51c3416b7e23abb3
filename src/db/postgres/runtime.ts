import { CompiledQuery } from 'kysely';
import { isRetryableConflict, translateUnavailable } from '../errors.js';
import { drive, rolledBack, type Execute, type Runtime } from '../run.js';
import type { Cost } from '../statement.js';
import type { Db, Trx } from '../types.js';
import type { Step, Work } from '../work.js';

/** Runs of one transaction when PostgreSQL aborts it to break a deadlock or a serialization conflict. */
const TRANSACTION_ATTEMPTS = 3;

const executeOn = (db: Db | Trx): Execute => (step: Step) => {
  const { sql, parameters } = step.statement.bind(db, step.params);
  return db.executeQuery(CompiledQuery.raw(sql, parameters)).then((result) => result.rows);
};

/** Works on a PostgreSQL pool: every statement is a round trip; a transaction holds one connection. */
export class PostgresRuntime implements Runtime {
  constructor(private readonly db: Db) {}

  async read<T>(work: () => Work<T, Cost>): Promise<T> {
    try {
      return await drive(work(), executeOn(this.db), this.db);
    } catch (error) {
      throw translateUnavailable(error);
    }
  }

  async transaction<T>(work: () => Work<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.db.transaction().execute((trx) => Promise.resolve(drive(work(), executeOn(trx), trx)));
      } catch (error) {
        rolledBack(this.db);
        // A deadlock victim has written nothing; its work (a generator factory) runs again from the start.
        if (attempt < TRANSACTION_ATTEMPTS && isRetryableConflict(error)) continue;
        throw translateUnavailable(error);
      }
    }
  }
}
