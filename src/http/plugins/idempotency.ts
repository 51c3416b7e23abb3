import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../domain/errors.js';
import type { IdempotencyRequest } from '../../coordination/idempotency.js';
import type { Claim } from '../../store/idempotency.js';
import { appendRouteHook, prependRouteHook } from '../../http-common/route-hooks.js';
import { requireSingleHeader } from '../protocol/single-header.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The idempotency claim this request holds, completed or released when the answer is sent. */
    idempotency: { request: IdempotencyRequest; claim: Extract<Claim, { outcome: 'claimed' }> } | null;
  }
}

const HEADER = 'idempotency-key';
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;
const WRITE_METHODS = new Set(['POST', 'PUT', 'DELETE']);
/** Longer than the request timeout: a claim older than this belongs to a process that died. */
export const LEASE_MS = 60_000;

/** What makes two requests "the same": method, path with query, and the body's bytes (by their hash). */
export const requestHash = (method: string, url: string, bodyHash: string | null): string =>
  createHash('sha256').update(`${method} ${url}\n${bodyHash ?? ''}`).digest('hex');

/** The hash the JSON parser records for a body text (request.bodyHash). */
export const bodyTextHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * Idempotency-Key on POST, PUT and DELETE (docs/api.md, Retries and idempotency): the first final answer is stored and replayed
 * for the same key and body; a different body gets 422; a request still running gets 409. Runs after
 * authentication and body parsing, before validation, so a replay needs no second validation or write.
 */
async function idempotencyPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('idempotency', null);

  const claimKey = async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers[HEADER];
    if (header === undefined || !request.auth) return;
    requireSingleHeader(request, 'Idempotency-Key');
    if (typeof header !== 'string' || !VALID_KEY.test(header)) {
      throw new ApiError('bad_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters.', {
        details: [{ field: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
      });
    }
    const idempotent = { apiKeyId: request.auth.key.id, key: header, requestHash: requestHash(request.method, request.url, request.bodyHash) };
    const claim = await app.idempotency.claim(idempotent);
    switch (claim.outcome) {
      case 'claimed':
        request.idempotency = { request: idempotent, claim };
        return;
      case 'mismatch':
        throw new ApiError('idempotency_key_reused');
      case 'in_flight':
        throw new ApiError('idempotency_conflict');
      case 'replay':
        return reply.code(claim.status).header('idempotent-replayed', 'true')
          .type('application/json; charset=utf-8').send(claim.body);
    }
  };

  const settleKey = async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const held = request.idempotency;
    if (held === null) return payload;
    request.idempotency = null;
    const final = reply.statusCode < 500 && reply.statusCode !== 429;
    if (final && typeof payload === 'string') await app.idempotency.complete(held.request, held.claim, reply.statusCode, payload);
    else await app.idempotency.release(held.request, held.claim);
    return payload;
  };

  // Only authenticated writes take part: reads pay for no idempotency hook at all.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.scope === undefined || !methods.some((method) => WRITE_METHODS.has(method))) return;
    appendRouteHook(route, 'preValidation', claimKey);
    // Before the compressor's onSend: the answer is stored as the JSON it is, and replayed in any coding.
    prependRouteHook(route, 'onSend', settleKey);
  });

}

export default fp(idempotencyPlugin, { name: 'idempotency', dependencies: ['auth'] });
