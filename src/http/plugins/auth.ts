import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../domain/errors.js';
import { KEY_FORMAT, hasScope, hashKey, keyPrefix, type RequiredScope, type Scope } from '../../domain/keys.js';
import type { ApiKeyRow, EntityRow } from '../../db/types.js';
import type { Actor } from '../../store/changelog.js';
import { findKeyByHash, keyScopes, touchKey } from '../../store/keys.js';
import { KeyCache } from '../key-cache.js';
import type { RateLimitState } from '../../coordination/rate-limiter.js';

export interface AuthContext {
  key: ApiKeyRow;
  scopes: Scope[];
  entity: EntityRow;
  actor: Actor;
  rateLimit: RateLimitState;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a route needs; `null` means any valid key. Routes without it are public. */
    scope?: RequiredScope | null;
  }
  interface FastifyRequest {
    auth: AuthContext;
  }
}

// One message for every key problem, so a 401 never tells whether a key exists.
const UNAUTHORIZED = 'Missing, malformed, expired or revoked API key. Send Authorization: Bearer ak_live_…';
const TOUCH_INTERVAL_MS = 60_000;
/** How long another process's revocation or pause may take to reach this one. */
export const KEY_CACHE_TTL_MS = 5_000;

/**
 * The checks of decisions §2, in their order: authentication (401), paused account (403), rate limit
 * (429), scope (403). Runs on onRequest, before the body is read, so refused requests cost little.
 */
async function authPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('auth', null as unknown as AuthContext);
  const cache = new KeyCache(KEY_CACHE_TTL_MS);
  app.addHook('onClose', async () => cache.close());

  app.addHook('onRequest', async (request, reply) => {
    const scope = request.routeOptions.config.scope;
    if (scope === undefined) return;
    const found = await authenticate(app, cache, request);
    if (found.entity.paused_at) throw new ApiError('forbidden', 'The account is paused.');
    const rateLimit = await app.rateLimiter.hit(
      found.key.prefix, app.config.rateLimits[found.key.tier], app.config.rateLimitWindowS * 1000,
    );
    setRateLimitHeaders(reply, rateLimit);
    if (!rateLimit.allowed) {
      reply.header('retry-after', rateLimit.retryAfter);
      throw new ApiError('rate_limited', `Rate limit of ${rateLimit.limit} requests per ${app.config.rateLimitWindowS} s exceeded; retry in ${rateLimit.retryAfter} s.`, { retry_after: rateLimit.retryAfter });
    }
    const scopes = keyScopes(found.key);
    if (scope !== null && !hasScope(scopes, scope)) {
      throw new ApiError('forbidden', `This key lacks the scope ${scope}.`);
    }
    request.auth = {
      ...found, scopes, rateLimit,
      actor: { entityId: found.entity.id, entitySlug: found.entity.slug, source: `api:${found.key.prefix}` },
    };
  });
}

async function authenticate(app: FastifyInstance, cache: KeyCache, request: FastifyRequest) {
  const match = /^Bearer +(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  const key = match?.[1];
  if (!key || !KEY_FORMAT.test(key)) throw new ApiError('unauthorized', UNAUTHORIZED);
  const hash = hashKey(key);
  const now = Date.now();
  let entry = cache.get(hash, now);
  if (!entry) {
    const fresh = await findKeyByHash(app.db, hash);
    entry = fresh && cache.set(hash, fresh, now);
  }
  const found = entry?.found;
  if (!entry || !found || found.key.revoked_at || (found.key.expires_at && Date.parse(found.key.expires_at) <= now)) {
    request.log.info({ prefix: keyPrefix(key) }, 'rejected API key');
    throw new ApiError('unauthorized', UNAUTHORIZED);
  }
  // last_used_at is for operators: written at most once a minute per key, not on every request.
  if (now - entry.touched > TOUCH_INTERVAL_MS) {
    entry.touched = now;
    await touchKey(app.db, found.key.id, new Date(now).toISOString());
  }
  return found;
}

function setRateLimitHeaders(reply: FastifyReply, state: RateLimitState): void {
  reply.header('x-ratelimit-limit', state.limit);
  reply.header('x-ratelimit-remaining', state.remaining);
  reply.header('x-ratelimit-reset', state.reset);
}

export default fp(authPlugin, { name: 'auth' });
