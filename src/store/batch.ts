import { isRefusal, type ApiError } from '../domain/errors.js';
import { isUniqueViolation } from '../db/errors.js';
import { single, transaction } from '../db/run.js';
import { savepoint, type Work } from '../db/work.js';
import type { Db } from '../db/types.js';
import { isPostgres } from './sql.js';

export type ItemOutcome<R> = { value: R } | { error: ApiError };

/**
 * Items per transaction. On SQLite a transaction runs on the event loop: a batch of 100 held it 25-30 ms
 * at 100,000 artworks on a quiet machine, 80 on a loaded one (the stall scenario's worst answers); 20
 * keep a transaction near 5 ms, and the loop turns between two. PostgreSQL's statements do not hold the
 * loop, and each transaction costs round trips: a batch is one.
 */
export const itemsPerTransaction = (db: Db): number => (isPostgres(db) ? 100 : 20);

/** A batch's items written together: the results `write` gives item by item. */
export interface SetBased<I, R> {
  /** All items at once in a transaction (a set-based write). */
  many: (items: readonly I[]) => Work<R[]>;
  /**
   * PostgreSQL: all items in one statement, a transaction of its own (no BEGIN or COMMIT round trips);
   * undefined when it wrote nothing. A unique violation (a concurrent write of the same record) is
   * taken as nothing written.
   */
  alone?: (items: readonly I[]) => Work<R[] | undefined>;
}

/**
 * Writes a batch's items, each atomic on its own (docs/api.md, Batches: each is processed like a single POST),
 * `itemsPerTransaction` items per transaction: an item a rule refuses (a 400) leaves nothing behind and
 * the others go on; any other error rolls back the transaction it happened in and fails the batch —
 * the items of the transactions before stay written, as single POSTs would, and the client's retry finds
 * them unchanged. A transaction commits once for all its items, not once per item.
 *
 * Validated items are almost never refused, and a savepoint per item journals the pages every item
 * touches again and again; so a transaction's items are first written together, with no savepoint
 * (each would be two more round trips on PostgreSQL), and only when one is refused is that
 * transaction rolled back and its items written again in a new one, each in a savepoint of its own
 * (a nested transaction). `together` may write the first attempt in fewer statements.
 */
export async function writeEach<I, R>(
  db: Db, items: readonly I[], write: (item: I) => Work<R>, together?: SetBased<I, R>,
): Promise<ItemOutcome<R>[]> {
  const size = itemsPerTransaction(db);
  const outcomes: ItemOutcome<R>[] = [];
  for (let at = 0; at < items.length; at += size) outcomes.push(...await writeTogether(db, items.slice(at, at + size), write, together));
  return outcomes;
}

/** One transaction's items (see writeEach). */
async function writeTogether<I, R>(
  db: Db, items: readonly I[], write: (item: I) => Work<R>, together?: SetBased<I, R>,
): Promise<ItemOutcome<R>[]> {
  try {
    const alone = together?.alone && isPostgres(db) ? await writtenAlone(db, items, together.alone) : undefined;
    if (alone) return alone.map((value) => ({ value }));
    return await transaction(db, function* () {
      if (!together) return yield* writeAll(items, write);
      return (yield* together.many(items)).map((value) => ({ value }));
    });
  } catch (error) {
    if (!isRefusal(error)) throw error;
  }
  return transaction(db, () => writeOneByOne(items, write));
}

async function writtenAlone<I, R>(db: Db, items: readonly I[], alone: (items: readonly I[]) => Work<R[] | undefined>): Promise<R[] | undefined> {
  try {
    return await single(db, () => alone(items));
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
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
