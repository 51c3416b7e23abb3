import { isRefusal, type ApiError } from '../domain/errors.js';
import { transaction } from '../db/run.js';
import { savepoint, type Work } from '../db/work.js';
import type { Db } from '../db/types.js';

export type ItemOutcome<R> = { value: R } | { error: ApiError };

/**
 * Writes a batch's items in one transaction, each atomic on its own: an item a rule refuses (a 400)
 * leaves nothing behind and the others go on; any other error rolls the whole batch back, and the
 * client's retry writes it again. The batch commits once, when its answer is ready: 100 items cost one
 * commit, not 100.
 *
 * Validated items are almost never refused, and a savepoint per item journals the pages every item
 * touches again and again; so all items first run in one savepoint, and only when one is refused are
 * they undone and written again each in a savepoint of its own (a nested transaction). `writeMany`
 * may write the first attempt in fewer statements.
 */
export function writeEach<I, R>(
  db: Db, items: readonly I[], write: (item: I) => Work<R>,
  /** All items at once (a set-based write), with the results `write` gives item by item. */
  writeMany?: (items: readonly I[]) => Work<R[]>,
): Promise<ItemOutcome<R>[]> {
  return transaction(db, function* () {
    try {
      if (!writeMany) return yield* savepoint(writeAll(items, write));
      return (yield* savepoint(writeMany(items))).map((value) => ({ value }));
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    return yield* writeOneByOne(items, write);
  });
}

function* writeAll<I, R>(items: readonly I[], write: (item: I) => Work<R>): Work<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  for (const item of items) outcomes.push({ value: yield* write(item) });
  return outcomes;
}

function* writeOneByOne<I, R>(items: readonly I[], write: (item: I) => Work<R>): Work<ItemOutcome<R>[]> {
  const outcomes: ItemOutcome<R>[] = [];
  for (const item of items) {
    try {
      outcomes.push({ value: yield* savepoint(write(item)) });
    } catch (error) {
      if (!isRefusal(error)) throw error;
      outcomes.push({ error });
    }
  }
  return outcomes;
}
