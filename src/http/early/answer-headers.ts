import type { FastifyReply } from 'fastify';
import type { RateLimitState } from '../../coordination/rate-limiter.js';
import { rateLimitHeaderFields } from '../plugins/auth.js';
import { keptAnswerHeaders, notModifiedHeaders } from '../plugins/conditional.js';
import { API_ANSWER_HEADERS } from '../plugins/security-headers.js';
import { COMPRESS_MIN_BYTES } from '../../http-common/compression.js';

/**
 * The headers of a keyed GET's 304, in the order Fastify's hooks set them: request id (request-id.ts),
 * nosniff (security-headers.ts), the key's rate-limit state (auth.ts), the tag (conditional.ts). The
 * early 304 writes these; a (key, URL) is remembered only after a 304 of Fastify's carried exactly
 * these names, in this order — so a header some hook adds one day stops the early 304s instead of
 * being left out of them.
 */
export function notModifiedAnswerHeaders(id: string, rateLimit: RateLimitState, tag: string) {
  return { 'x-request-id': id, ...API_ANSWER_HEADERS, ...rateLimitHeaderFields(rateLimit), ...notModifiedHeaders(tag) };
}

/**
 * The headers of a kept answer sent as it is (a 200 the answer cache holds, to a client that takes no
 * coding of it), in the order Fastify's path sets them: request id, nosniff, the rate-limit state
 * after this request's unit, then conditional.ts's type, Link, tag, caching and Vary; Content-Length last,
 * as Fastify adds it. Remembered, like the 304's, only after an answer of Fastify's carried exactly these.
 */
export function keptEarlyHeaders(id: string, rateLimit: RateLimitState, tag: string, link: string | undefined, bytes: number) {
  return { 'x-request-id': id, ...API_ANSWER_HEADERS, ...rateLimitHeaderFields(rateLimit), ...keptAnswerHeaders(tag, link, bytes), 'content-length': bytes };
}

const NO_LIMIT: RateLimitState = { limit: 0, remaining: 0, reset: 0, allowed: true, retryAfter: 1 };
const namesOf = (headers: object): string => Object.keys(headers).join('\n');
const NOT_MODIFIED_NAMES = namesOf(notModifiedAnswerHeaders('', NO_LIMIT, ''));
/** The kept answer's names with a Link or without, and with a Vary (1 KiB or more) or without. */
const keptNames = (linked: boolean, varied: boolean) => namesOf(keptEarlyHeaders('', NO_LIMIT, '', linked ? '' : undefined, varied ? COMPRESS_MIN_BYTES : 0));
const KEPT_NAMES = new Map([false, true].flatMap((linked) => [false, true].map((varied) => [`${linked} ${varied}`, keptNames(linked, varied)])));

/** Whether Fastify's 304 carried the early 304's header names, in their order. */
export const carriesNotModifiedHeaders = (reply: FastifyReply): boolean => namesOf(reply.getHeaders()) === NOT_MODIFIED_NAMES;

/** Whether Fastify's 200 carried the early kept answer's header names (with a Link and a Vary or without), in their order. */
export const carriesKeptHeaders = (reply: FastifyReply): boolean =>
  namesOf(reply.getHeaders()) === KEPT_NAMES.get(`${reply.hasHeader('link')} ${reply.hasHeader('vary')}`);
