import Type, { type Static, type TArray, type TBoolean, type TObject, type TObjectOptions, type TProperties, type TSchema, type TUnsafe } from 'typebox';

/**
 * Building blocks of the contract. Custom `format`s (uri, date, date-time, iso4217, iso3166-alpha2)
 * are implemented once in schemas/validator.ts; they appear as-is in the OpenAPI document.
 */

/** `T | null` as a JSON type list, which keeps validation errors and serialization simple. */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const { type, enum: values } = schema as { type?: string; enum?: unknown[] };
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) });
}

/**
 * A reference to a named model: a shared schema of Fastify (serialization) and a component of the
 * OpenAPI document, so generated clients name it. The models are listed in schemas/components.ts.
 */
export function Ref<T extends TSchema>(model: T): TUnsafe<Static<T>> {
  const id = (model as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('Ref needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: id });
}

export const StringEnum = <const V extends readonly string[]>(values: V, options: object = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

export const Id = Type.Integer({ minimum: 1, description: 'Identifier assigned by the service.' });
export const Timestamp = Type.String({ format: 'date-time', description: 'UTC ISO 8601 with milliseconds.' });
export const Text = Type.String({ maxLength: 1000 });
export const LongText = Type.String({ maxLength: 20000 });
export const HttpUrl = Type.String({
  format: 'uri', maxLength: 2048, description: 'Absolute http or https URL.', examples: ['https://example.org/'],
});
export const IsoDate = Type.String({ format: 'date', description: 'Calendar date, YYYY-MM-DD.' });
export const CountryCode = Type.String({
  format: 'iso3166-alpha2', description: 'ISO 3166-1 alpha-2 code, any case; stored upper-case.',
});
export const CurrencyCode = Type.String({
  format: 'iso4217', description: 'ISO 4217 code, any case; stored upper-case.',
});

/** Fields GET returns that a client may send back: accepted and ignored (docs/api.md, Requests and validation). */
export const ReadOnlyEcho = (description = 'Read only: accepted and ignored.') => Type.Optional(Type.Unknown({ description }));

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Machine-readable code, e.g. bad_request.' }),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    retry_after: Type.Optional(Type.Integer({ minimum: 1, description: 'Seconds to wait before retrying (429, 503).' })),
    existing_id: Type.Optional(Type.Integer({ description: 'The record that already has the fingerprint (409 duplicate).' })),
    candidates: Type.Optional(Type.Array(Type.Integer(), { description: 'The records that all match (409 ambiguous): send external_id to choose.' })),
    undone_by: Type.Optional(Type.Integer({ description: 'The undo run that took the run back already (409 conflict of an undo).' })),
  },
  { $id: 'Error', description: 'Every error answer has this shape: a code from the error catalog, a message for people, and the members some codes add.' },
);
export type ErrorBodyType = Static<typeof ErrorBody>;
/** One invalid field of a 400: `details` of the error body. */
export type FieldProblem = NonNullable<ErrorBodyType['details']>[number];

/**
 * Record ids are 32-bit integers on both dialects: the one statement of their form and bound. A path id
 * matches ID_PATTERN; one above ID_MAX names no record (domain/ids.ts `parseId`).
 */
export const ID_MAX = 2_147_483_647;
export const ID_PATTERN = '^[1-9][0-9]{0,9}$';
/** A record id in a path: its form checked by the schema, its bound by the route (a 404). */
export const PathId = () => Type.String({ pattern: ID_PATTERN, description: 'A positive integer.' });

export const IdParams = Type.Object({
  id: PathId(),
});

export const QueryBoolean = StringEnum(['true', 'false', '1', '0'], { default: 'false' });
export const parseQueryBoolean = (value: string | undefined): boolean => value === 'true' || value === '1';

/**
 * `page` has no schema default: `after` together with `page` is a 400 (docs/api.md, Pagination and polling), so the handler
 * must see whether the client sent it. A missing page is page 1.
 */
export function pageQuery(defaultLimit: number, maxLimit: number) {
  return {
    // Ajv takes Infinity for an integer; the largest finite double keeps every real integer page valid.
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_VALUE, description: 'Page number, from 1 (default 1). Not with `after`.' })),
    limit: Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit, description: `Results per page, 1 to ${maxLimit} (default ${defaultLimit}).` }),
  };
}

/** The cursor of docs/api.md, Pagination and polling: records with a greater id, in id order, at the same cost at any depth. */
export const cursorQuery = {
  after: Type.Optional(Type.Integer({
    minimum: 0, maximum: Number.MAX_SAFE_INTEGER,
    description: 'A record id: only records with a greater id, in id order. Start with 0 (or omit it), then pass the previous answer\'s `next_after`. Not with `page`.',
  })),
};

/**
 * A record's write bodies: POST needs the title, PUT takes any field sent (the title too, which it
 * cannot clear); both refuse unknown fields. `fields` lists the rest, the read-only ones included.
 */
export function WriteBodies<T extends TSchema, F extends TProperties>(title: T, fields: F, examples: { post: unknown; put: unknown }) {
  return {
    post: Type.Object({ title, ...fields }, { additionalProperties: false, examples: [examples.post] }),
    put: Type.Object({ title: Type.Optional(title), ...fields }, { additionalProperties: false, examples: [examples.put] }),
  };
}

/**
 * A page of a list read newest first by a cursor (runs, webhook messages, the trash): its items under
 * `member`, whether older ones follow, and the `next_after` to pass as `after` for them.
 */
export function NewestFirstPage<K extends string, T extends TSchema, N extends TSchema>(member: K, item: T, nextAfter: N, options: TObjectOptions):
  TObject<{ [P in K]: TArray<TUnsafe<Static<T>>> } & { has_more: TBoolean; next_after: TUnsafe<Static<N> | null> }> {
  return Type.Object({ [member]: Type.Array(Ref(item)), has_more: Type.Boolean(), next_after: Nullable(nextAfter) } as
    { [P in K]: TArray<TUnsafe<Static<T>>> } & { has_more: TBoolean; next_after: TUnsafe<Static<N> | null> }, options);
}

export const Page = {
  total: Type.Integer({ minimum: 0, description: 'How many records the list has in all (with its filters).' }),
  page: Type.Optional(Type.Integer({ minimum: 1, description: 'The page number; absent when the request used `after`.' })),
  limit: Type.Integer({ minimum: 1 }),
  has_more: Type.Boolean({ description: 'Whether records follow this page (then a `Link: <…>; rel="next"` header names the next one).' }),
  next_after: Nullable(Type.Integer({ minimum: 1, description: 'The id of the last record of this page (null when it is empty): pass it as `after`.' })),
};
