import { ApiError, invalidFields, type FieldProblem } from '../domain/errors.js';
import type { BatchItemResultType } from '../schemas/batch.js';

type Written = Omit<BatchItemResultType, 'index' | 'status'>;

/**
 * Runs each item like a single POST, in order and each in its own transaction. An invalid item
 * becomes a 400 entry; anything else that fails (a database error) fails the whole request, which
 * a client retries with the same Idempotency-Key — the items already written are upserts.
 */
export async function runBatch<T>(
  items: unknown[],
  validate: (item: unknown) => FieldProblem[],
  write: (item: T) => Promise<Written>,
): Promise<BatchItemResultType[]> {
  const results: BatchItemResultType[] = [];
  for (const [index, item] of items.entries()) {
    try {
      const problems = validate(item);
      if (problems.length > 0) throw invalidFields(problems);
      results.push({ index, status: 201, ...(await write(item as T)) });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 400) throw error;
      results.push({ index, status: 400, ...error.toBody() });
    }
  }
  return results;
}
