import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../domain/errors.js';
import type { RateLimitState } from '../coordination/rate-limiter.js';

/**
 * Keyless routes are limited per client address (decisions §9): `limit` requests per window, counted
 * by the app's rate limiter (Redis when configured, so every process shares the count). The address is
 * the socket's, or X-Forwarded-For's when TRUST_PROXY says the proxy in front may be believed (Fastify's
 * `trustProxy` decides `request.ip`).
 */
export function addressRateLimit(app: FastifyInstance, limit: number, windowMs: number): void {
  const refuse = (reply: FastifyReply, state: RateLimitState) => {
    if (state.allowed) return;
    reply.header('retry-after', state.retryAfter);
    throw new ApiError('rate_limited', `Rate limit of ${limit} requests per ${windowMs / 1000} s from one address exceeded; retry in ${state.retryAfter} s.`, { retry_after: state.retryAfter });
  };
  app.addHook('onRequest', async (request, reply) => {
    // "ip:" cannot collide with API key prefixes (ak_live_…), which share the limiter.
    const counted = app.rateLimiter.hit(`ip:${request.ip}`, limit, windowMs);
    refuse(reply, counted instanceof Promise ? await counted : counted);
  });
}
