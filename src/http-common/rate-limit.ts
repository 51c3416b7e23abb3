import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../domain/errors.js';
import type { RateLimitState } from '../coordination/rate-limiter.js';
import { limitedClient } from './client-address.js';

/**
 * Keyless routes are limited per client address (docs/public-pages.md, Limits per client address): `limit` requests per window, counted
 * by the app's rate limiter (Redis when configured, so every process shares the count). The address is
 * the socket's, or X-Forwarded-For's when TRUST_PROXY says the proxy in front may be believed and it names
 * an IP address; an IPv6 client counts as its /64 (client-address.ts). `counter` names the count: pages and
 * images are counted apart, so that the images of one page view do not use up the pages a visitor may see.
 */
export function addressRateLimit(app: FastifyInstance, limit: number, windowMs: number, counter: 'ip' | 'img' = 'ip'): void {
  const refuse = (reply: FastifyReply, state: RateLimitState) => {
    if (state.allowed) return;
    reply.header('retry-after', state.retryAfter);
    throw new ApiError('rate_limited', `Rate limit of ${limit} requests per ${windowMs / 1000} s from one address exceeded; retry in ${state.retryAfter} s.`, { retry_after: state.retryAfter });
  };
  app.addHook('onRequest', async (request, reply) => {
    // "ip:" and "img:" cannot collide with API key prefixes (ak_live_…), which share the limiter.
    const counted = app.rateLimiter.hit(`${counter}:${limitedClient(request)}`, limit, windowMs);
    refuse(reply, counted instanceof Promise ? await counted : counted);
  });
}
