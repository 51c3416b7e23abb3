import type { FastifyContextConfig, FastifyReply, FastifySchema } from 'fastify';
import Type, { type Static, type TSchema, type TUnsafe } from 'typebox';
import { ErrorBody, Ref, type ErrorBodyType } from '../../schemas/common.js';
import { ERROR_CATALOG, notFound, type ErrorCode } from '../../domain/errors.js';
import { parseId } from '../../domain/ids.js';
import type { RequiredScope } from '../../domain/keys.js';

/** The response headers of the API, described once for the OpenAPI document. */
export const HEADERS = {
  'X-Request-Id': {
    type: 'string',
    description: 'The id of this request in the server\'s log: the request\'s own X-Request-Id when it is 1 to 128 characters of A-Z a-z 0-9 . _ : -, else a generated UUID.',
  },
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests the key may make per window (on every answer to a known key).' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window; 0 on a 429.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix epoch seconds when the window resets.' },
  'Retry-After': { type: 'integer', description: 'Whole seconds to wait before retrying.' },
  'Idempotent-Replayed': {
    type: 'string', enum: ['true'],
    description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key and body: nothing was written again.',
  },
  Link: {
    type: 'string',
    description: '`<…>; rel="next"`: the next page (the same request with `after` set to `next_after`, or with the next `page`), present when `has_more` is true.',
  },
  Allow: { type: 'string', description: 'The methods the path has, e.g. `GET, HEAD, POST`.' },
  ETag: {
    type: 'string',
    description: 'A strong tag of this answer: send it back as If-None-Match to get 304 (no body, no rate-limit unit) while the entity\'s data is unchanged.',
  },
  'Cache-Control': { type: 'string', enum: ['private, no-cache'], description: 'Keep the answer, but revalidate it (If-None-Match) before reusing it.' },
  'WWW-Authenticate': {
    type: 'string',
    description: 'The RFC 6750 challenge: on a 401 `Bearer realm="art-catalog"`, with `error="invalid_token"` when a key was sent but is not valid; on a 403 for a missing scope `error="insufficient_scope"` and `scope="…"`.',
  },
} as const;
export type HeaderName = keyof typeof HEADERS;

export const headerSchemas = (names: readonly HeaderName[]) => Object.fromEntries(names.map((name) => [name, HEADERS[name]]));

/** A success answer: a named model (a `$ref` in the document), what the answer means, and its own headers. */
export function answer<T extends TSchema>(model: T, description: string, ...headers: HeaderName[]): TUnsafe<Static<T>> {
  return Type.Unsafe<Static<T>>({ ...Ref(model), description, ...(headers.length ? { headers: headerSchemas(headers) } : {}) });
}

/**
 * The documented error answers of a route, from the catalog: one response per status, all of the
 * Error model, describing each code the route can answer with that status and the headers they carry.
 */
export function errors(...codes: ErrorCode[]): Record<number, TUnsafe<ErrorBodyType>> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries([...byStatus].map(([status, group]) => {
    const description = group.map((code) => `\`${code}\`: ${ERROR_CATALOG[code].description}`).join('\n\n');
    const headers = group.flatMap((code): readonly HeaderName[] => (ERROR_CATALOG[code] as { headers?: readonly HeaderName[] }).headers ?? []);
    return [status, answer(ErrorBody, description, ...headers)];
  }));
}

/** Every route behind a key can answer these (400: the Authorization header sent more than once). */
export const AUTHED: ErrorCode[] = ['bad_request', 'unauthorized', 'forbidden', 'rate_limited', 'internal_error', 'service_unavailable'];
/** Routes that read a JSON body can also answer these. */
export const WITH_BODY: ErrorCode[] = ['bad_request', 'payload_too_large', 'unsupported_media_type'];
/** Writes can answer these about their Idempotency-Key (an invalid one is a 400). */
export const IDEMPOTENT: ErrorCode[] = ['bad_request', 'idempotency_conflict', 'idempotency_key_reused'];

/**
 * The options of an API route, declared alike by every route of one OpenAPI tag: the scope its key
 * needs (`null`: any valid key, the handler checks the rest), the operation's id and summary (every
 * operation of the OpenAPI document has both), its schema (its input and every answer, errors
 * included: what validates the request and what the document shows) and any other config.
 */
export const routesTagged = (...tags: string[]) =>
  <S extends FastifySchema>(scope: RequiredScope | null, operationId: string, summary: string, schema: S, config: FastifyContextConfig = {}) =>
    ({ config: { scope, ...config }, schema: { operationId, tags, summary, ...schema } });

/** A path id as a number (its form checked by the route's schema); one outside the id range names no record. */
export function recordId(params: { id: string }): number {
  const id = parseId(params.id);
  if (id === undefined) throw notFound();
  return id;
}

/**
 * Sends JSON text as it is (Fastify serializes only non-string payloads): for answers the database
 * renders itself. The route's response schema still documents the shape.
 */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text);
}
