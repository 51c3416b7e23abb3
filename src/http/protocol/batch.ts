import { invalidFields, isRefusal, type FieldProblem } from '../../domain/errors.js';
import type { Work } from '../../db/work.js';
import type { Db } from '../../db/types.js';
import { BatchResponse, batchRequest, type BatchItemResultType } from '../../schemas/batch.js';
import { writeEach, type SetBased } from '../../store/batch.js';
import { AUTHED, IDEMPOTENT, WITH_BODY, answer, errors } from './responses.js';

/** `POST /v1/<kind>/batch`: its summary and schema, bodies of `POST /v1/<kind>` written one by one; `results` says what each answers. */
export const batchSummary = (kind: 'artworks' | 'events') => `Post up to 100 ${kind} in one request (one rate-limit unit)`;
export const batchSchema = (kind: 'artworks' | 'events', example: unknown, results: string) => ({
  description: `Each item is validated and written like a single POST /v1/${kind}, in its own transaction: one bad item fails alone, with its own status in \`results\`.`,
  body: batchRequest(`POST /v1/${kind}`, example),
  response: { 200: answer(BatchResponse, results), ...errors(...WITH_BODY, ...AUTHED, ...IDEMPOTENT) },
});

type Written = Omit<BatchItemResultType, 'index' | 'status'>;

/**
 * Each item is checked like the body of a single POST (schema, then the domain's rules) and the valid
 * ones are written like single POSTs, each atomic on its own (store/batch.ts). An invalid item becomes
 * a 400 entry (an ambiguous match a 409 one); the results keep the input order.
 */
export async function runBatch<T, I>(
  db: Db,
  items: unknown[],
  validate: (item: unknown) => FieldProblem[],
  prepare: (item: T) => I,
  write: (input: I) => Work<Written>,
  together?: SetBased<I, Written>,
): Promise<BatchItemResultType[]> {
  const results = new Array<BatchItemResultType>(items.length);
  const valid: Array<{ index: number; input: I }> = [];
  for (const [index, item] of items.entries()) {
    try {
      const problems = validate(item);
      if (problems.length > 0) throw invalidFields(problems);
      valid.push({ index, input: prepare(item as T) });
    } catch (error) {
      results[index] = refused(index, error);
    }
  }
  const inputs = (items: ReadonlyArray<{ input: I }>) => items.map(({ input }) => input);
  const outcomes = await writeEach(db, valid, ({ input }) => write(input), together && {
    many: (items) => together.many(inputs(items)),
    ...(together.alone && { alone: (items: ReadonlyArray<{ input: I }>) => together.alone!(inputs(items)) }),
  });
  outcomes.forEach((outcome, i) => {
    const { index } = valid[i]!;
    results[index] = 'value' in outcome ? { index, status: 201, ...outcome.value } : refused(index, outcome.error);
  });
  return results;
}

function refused(index: number, error: unknown): BatchItemResultType {
  if (!isRefusal(error)) throw error;
  return { index, status: error.status, ...error.toBody() };
}
