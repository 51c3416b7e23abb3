import { ApiError } from '../domain/errors.js';
import { savepoint, transaction, type Work } from '../db/statements.js';
import type { Db } from '../db/types.js';

export type ItemOutcome<R> = { value: R } | { error: ApiError };

/**
 * Writes a batch's items in one transaction, each in a savepoint of its own (a nested transaction):
 * an item a rule refuses (a 400) rolls back alone and the others go on; any other error rolls the
 * whole batch back, and the client's retry writes it again. The batch commits once, when its answer
 * is ready: 100 items cost one commit, not 100.
 */
export function writeEach<I, R>(db: Db, items: readonly I[], write: (item: I) => Work<R>): Promise<ItemOutcome<R>[]> {
  return transaction(db, function* () {
    const outcomes: ItemOutcome<R>[] = [];
    for (const item of items) {
      try {
        outcomes.push({ value: yield* savepoint(write(item)) });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 400) throw error;
        outcomes.push({ error });
      }
    }
    return outcomes;
  });
}
