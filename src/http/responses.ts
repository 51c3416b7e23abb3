import type { FastifyReply } from 'fastify';
import { ErrorBody } from '../schemas/common.js';
import { notFound } from '../domain/errors.js';

const DESCRIPTIONS: Record<number, string> = {
  400: 'bad_request: invalid body, query or field values; `details` names each field.',
  401: 'unauthorized: Authorization header missing, key malformed, expired or revoked.',
  403: 'forbidden: the key lacks the scope, or the account is paused.',
  404: 'not_found: no such record for this key\'s entity.',
  409: 'duplicate (with existing_id) or idempotency_conflict.',
  413: 'payload_too_large: body over 1 MiB.',
  415: 'unsupported_media_type: body not sent as application/json.',
  422: 'idempotency_key_reused: the Idempotency-Key was used with another body.',
  429: 'rate_limited: wait retry_after seconds (also in Retry-After).',
  500: 'internal_error.',
  503: 'service_unavailable: the database or Redis is briefly unavailable, or the server is stopping; retry after retry_after seconds (also in Retry-After).',
};

/** The documented error answers of a route, all of the one error shape. */
export function errors(...statuses: number[]) {
  return Object.fromEntries(statuses.map((s) => [s, { ...ErrorBody, description: DESCRIPTIONS[s] ?? 'An error answer.' }]));
}

/** Every route behind a key can answer these (503: the key, its counter or the data cannot be reached). */
export const AUTHED = [401, 403, 429, 500, 503];
/** Routes that read a JSON body can also answer these. */
export const WITH_BODY = [400, 413, 415];

const MAX_ID = 2_147_483_647;

/** A path id as a number; one outside the id range names no record. */
export function recordId(params: { id: string }): number {
  const id = Number(params.id);
  if (id > MAX_ID) throw notFound();
  return id;
}

/**
 * Sends JSON text as it is (Fastify serializes only non-string payloads): for answers the database
 * renders itself. The route's response schema still documents the shape.
 */
export function sendJsonText(reply: FastifyReply, text: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(text);
}
