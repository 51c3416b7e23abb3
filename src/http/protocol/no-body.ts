import type { FastifyRequest } from 'fastify';
import { ApiError, invalidFields } from '../../domain/errors.js';

/** Whether the route reads a body: it declares one in its schema (DELETE routes declare none). */
export const takesBody = (request: FastifyRequest): boolean => request.routeOptions.schema?.body !== undefined;

/** Whether the request's framing says it has no body at all (Content-Length 0 or absent, not chunked). */
const framedEmpty = (request: FastifyRequest): boolean => {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] === undefined && (length === undefined || length === '0');
};

/**
 * A JSON body sent to a route that takes none — many generated clients send `Content-Type:
 * application/json` on every request. Nothing, or `{}`, is accepted; any field in it is unknown and
 * named in a 400, as unknown fields are everywhere (docs/api.md, Requests and validation); anything else is a 400 too.
 */
export function bodyWhereNoneIsTaken(request: FastifyRequest, text: string): ApiError | null {
  if (text.trim() === '') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return new ApiError('bad_request', 'The body is not valid JSON.');
  }
  const what = `${request.method} ${request.routeOptions.url ?? request.url}`;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return new ApiError('bad_request', `${what} takes no body; send none (or {}).`);
  }
  const fields = Object.keys(parsed);
  if (fields.length === 0) return null;
  return invalidFields(fields.map((field) => ({ field, message: `unknown field: ${what} takes no body` })));
}

/**
 * A body of a media type the API does not read: 415, except an empty one on a route that takes none,
 * which is no body at all. Decided from the headers, so a refused body is never read here.
 */
export const otherMediaType = (request: FastifyRequest): ApiError | null =>
  !takesBody(request) && framedEmpty(request) ? null : new ApiError('unsupported_media_type');
