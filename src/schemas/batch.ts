import Type, { type Static } from 'typebox';
import { Id, Ref, Timestamp } from './common.js';

export const BATCH_MAX = 100;

/** `{"items": [...]}`: each item is checked and written on its own, so one bad item fails alone. */
export const batchRequest = (single: string, example: unknown) => Type.Object(
  {
    items: Type.Array(
      Type.Unknown({ description: `Each item is a body of ${single}, validated one by one.` }),
      { minItems: 1, maxItems: BATCH_MAX },
    ),
  },
  { additionalProperties: false, examples: [{ items: [example] }] },
);

export const BatchItemResult = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the item in the request.' }),
  status: Type.Integer({ description: '201 when written, 400 when the item was invalid, 409 when it matched several artworks (ambiguous).' }),
  id: Type.Optional(Id),
  title: Type.Optional(Type.String()),
  slug: Type.Optional(Type.String()),
  source_fingerprint: Type.Optional(Type.String()),
  created: Type.Optional(Type.Boolean()),
  changed: Type.Optional(Type.Boolean({ description: 'false when a re-post changed nothing but last_synced_at.' })),
  last_synced_at: Type.Optional(Timestamp),
  error: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  candidates: Type.Optional(Type.Array(Type.Integer())),
}, { $id: 'BatchItemResult', description: 'The outcome of one item: the fields of a single POST\'s answer (201), or an error (400, 409).' });
export type BatchItemResultType = Static<typeof BatchItemResult>;

export const BatchResponse = Type.Object(
  { results: Type.Array(Ref(BatchItemResult), { description: 'In input order.' }) },
  { $id: 'BatchResult', description: 'One result per item, in input order; each item was written (or refused) on its own.' },
);
