import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../domain/errors.js';
import { KEY_FORMAT, hasScope, hashKey, keyPrefix, type RequiredScope, type Scope } from '../../domain/keys.js';
import type { ApiKeyRow, EntityRow } from '../../db/types.js';
import type { Actor } from '../../store/changelog.js';
import { findKeyByHash, touchKey } from '../../store/keys.js';
import { KeyCache, type AuthenticatedKey } from './key-cache.js';
import { appendRouteHook } from '../../http-common/route-hooks.js';
import { requireSingleHeader } from '../protocol/single-header.js';
import type { RateLimitState } from '../../coordination/rate-limiter.js';

export interface AuthContext {
  key: ApiKeyRow;
  /** SHA-256 of the key as sent: the key cache's, and the early 304s' memo's, name for it. */
  keyHash: string;
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
    /**
     * A conditional GET (If-None-Match) whose rate-limit unit is not taken yet: a 304 takes none
     * (docs/api.md, Conditional requests), any other answer takes it once the tag is known (plugins/conditional.ts) or in
     * the error handler (`chargeDeferredUnit`).
     */
    uncounted: boolean;
  }
  interface FastifyInstance {
    /** The keys checked lately (the /v1 scope's), for the early 304s (fast-not-modified.ts). */
    keyCache: KeyCache;
  }
}

// One message for every key problem, so a 401 never tells whether a key exists.
const UNAUTHORIZED = 'Missing, malformed, expired or revoked API key. Send Authorization: Bearer ak_live_…';
const TOUCH_INTERVAL_MS = 60_000;
const REALM = 'Bearer realm="art-catalog"';

/**
 * A 401 with its RFC 6750 challenge: no error code when no bearer credentials were sent (§3.1),
 * `invalid_token` when a key was sent and is not valid.
 */
function unauthorized(reply: FastifyReply, sentToken: boolean): ApiError {
  reply.header('www-authenticate', sentToken ? `${REALM}, error="invalid_token"` : REALM);
  return new ApiError('unauthorized', UNAUTHORIZED);
}
/** How long a key is kept; another process's revocation or pause reaches this one within a second (key-cache.ts). */
export const KEY_CACHE_TTL_MS = 5_000;

/**
 * The checks of docs/api.md, Authentication, in their order: authentication (401), paused account (403), rate limit
 * (429), scope (403). Runs on onRequest, before the body is read, so refused requests cost little.
 * A key in the cache with an in-memory rate limiter is checked without a single promise: this hook
 * runs on every API request.
 */
async function authPlugin(app: FastifyInstance): Promise<void> {
  app.decorateRequest('auth', null as unknown as AuthContext);
  app.decorateRequest('uncounted', false);
  const cache = new KeyCache(KEY_CACHE_TTL_MS);
  cache.recheckOn(app.db);
  app.decorate('keyCache', cache);
  app.addHook('onClose', async () => cache.close());

  // Each route with a scope gets its own check with the scope bound; public routes run none.
  app.addHook('onRoute', (route) => {
    const scope = route.config?.scope;
    if (scope === undefined) return;
    appendRouteHook(route, 'onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      let pending: Promise<void> | void;
      try {
        pending = authorize(app, cache, request, reply, scope);
      } catch (error) {
        return done(error as Error);
      }
      if (pending) pending.then(() => done(), done);
      else done();
    });
  });
}

function authorize(app: FastifyInstance, cache: KeyCache, request: FastifyRequest, reply: FastifyReply, scope: RequiredScope | null): Promise<void> | void {
  requireSingleHeader(request, 'Authorization');
  const key = bearerToken(request.headers.authorization);
  if (!key || !KEY_FORMAT.test(key)) throw unauthorized(reply, key !== undefined);
  const hash = hashKey(key);
  const now = Date.now();
  const entry = freshEntry(cache, hash, now);
  if (entry) return admit(app, request, reply, key, hash, entry.found, now, scope);
  const stale = cache.get(hash, now);
  return (async () => {
    const current = stale ?? (await lookUp(app, cache, hash, now));
    // last_used_at is for operators: written at most once a minute per key, not on every request.
    if (current && validKey(current.found, now) && now - current.touched > TOUCH_INTERVAL_MS) {
      current.touched = now;
      await touchKey(app.db, current.found.key.id, new Date(now).toISOString());
    }
    await admit(app, request, reply, key, hash, current?.found, now, scope);
  })();
}

/** The one place a request looks its key up: shared by the requests of that key meanwhile (key-cache.ts, `lookUp`). */
const lookUp = (app: FastifyInstance, cache: KeyCache, hash: string, now: number) => cache.lookUp(hash, now, () => findKeyByHash(app.db, hash));

/** The token of an `Authorization: Bearer …` header (not yet checked against the key format). */
export const bearerToken = (authorization: string | undefined): string | undefined =>
  /^Bearer +(\S+)\s*$/i.exec(authorization ?? '')?.[1];

/** A cached key whose last use was written down lately: admitted (or refused) without a promise. */
export function freshEntry(cache: KeyCache, hash: string, now: number) {
  const entry = cache.get(hash, now);
  return entry && now - entry.touched <= TOUCH_INTERVAL_MS ? entry : undefined;
}

const validKey = (found: AuthenticatedKey, now: number): boolean =>
  !found.key.revoked_at && !(found.key.expires_at && Date.parse(found.key.expires_at) <= now);
const paused = (found: AuthenticatedKey): boolean => Boolean(found.entity.paused_at);
const mayUse = (found: AuthenticatedKey, scope: RequiredScope | null): boolean => scope === null || hasScope(found.scopes, scope);

/**
 * The key of `hash` when this check would admit it to a route of `scope` at once, past every refusal
 * (401, 403 paused, 403 scope): cached, last use written down lately, valid, its entity not paused.
 * Undefined when the full check has to run. The rate limit is not part of it: a 304 takes no unit.
 */
export function admittedAtOnce(cache: KeyCache, hash: string, now: number, scope: RequiredScope | null): AuthenticatedKey | undefined {
  const found = freshEntry(cache, hash, now)?.found;
  return found && validKey(found, now) && !paused(found) && mayUse(found, scope) ? found : undefined;
}

function admit(
  app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, key: string, keyHash: string,
  found: AuthenticatedKey | undefined, now: number, scope: RequiredScope | null,
): Promise<void> | void {
  if (!found || !validKey(found, now)) {
    request.log.info({ prefix: keyPrefix(key) }, 'rejected API key');
    throw unauthorized(reply, true);
  }
  if (paused(found)) throw new ApiError('forbidden', 'The account is paused.');
  // A conditional read of a key that may read it waits with its unit until the tag is known: a 304
  // takes none. Every other request is counted here, before the scope check (the order of docs/api.md, Authentication).
  const deferred = (request.method === 'GET' || request.method === 'HEAD') && request.headers['if-none-match'] !== undefined
    && mayUse(found, scope);
  const counted = deferred ? peekUnits(app, found) : app.rateLimiter.hit(...limiterArguments(app, found));
  if (counted instanceof Promise) return counted.then((rateLimit) => enter(app, request, reply, keyHash, found, rateLimit, scope, deferred));
  enter(app, request, reply, keyHash, found, counted, scope, deferred);
}

const limiterArguments = (app: FastifyInstance, found: Pick<AuthenticatedKey, 'key'>) =>
  [found.key.prefix, app.config.rateLimits[found.key.tier], app.config.rateLimitWindowS * 1000] as const;

/** The key's rate-limit state, counting nothing: the headers of an answer that takes no unit (a 304). */
export const peekUnits = (app: FastifyInstance, found: Pick<AuthenticatedKey, 'key'>) => app.rateLimiter.peek(...limiterArguments(app, found));

/**
 * Takes the key's unit for an answer sent before the framework, without a visit to Redis of its own
 * (perhaps after the one already on its way, a promise then): undefined (nothing taken) when the key
 * has no unit left — its 429 is the full check's — or the unit needs Redis.
 */
export const hitUnitWithin = (app: FastifyInstance, found: Pick<AuthenticatedKey, 'key'>) => app.rateLimiter.hitWithin?.(...limiterArguments(app, found));

/** The X-RateLimit-* headers of a state, in the order every answer sends them. */
export const rateLimitHeaderFields = (rateLimit: RateLimitState) => ({
  'x-ratelimit-limit': rateLimit.limit,
  'x-ratelimit-remaining': rateLimit.remaining,
  'x-ratelimit-reset': rateLimit.reset,
});

function rateLimitHeaders(app: FastifyInstance, reply: FastifyReply, rateLimit: RateLimitState, counted: boolean): void {
  reply.headers(rateLimitHeaderFields(rateLimit));
  if (counted && !rateLimit.allowed) {
    reply.header('retry-after', rateLimit.retryAfter);
    throw new ApiError('rate_limited', `Rate limit of ${rateLimit.limit} requests per ${app.config.rateLimitWindowS} s exceeded; retry in ${rateLimit.retryAfter} s.`, { retry_after: rateLimit.retryAfter });
  }
}

/**
 * Takes the unit a conditional GET deferred (its answer is not a 304): sets the headers from the
 * counted state and throws 429 when it is over the limit. Nothing to do for other requests.
 */
export function chargeDeferredUnit(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply): Promise<void> | void {
  if (!request.uncounted) return;
  request.uncounted = false;
  const counted = app.rateLimiter.hit(...limiterArguments(app, request.auth));
  const settle = (rateLimit: RateLimitState) => {
    request.auth.rateLimit = rateLimit;
    rateLimitHeaders(app, reply, rateLimit, true);
  };
  if (counted instanceof Promise) return counted.then(settle);
  settle(counted);
}

function enter(
  app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, keyHash: string, found: AuthenticatedKey,
  rateLimit: RateLimitState, scope: RequiredScope | null, deferred: boolean,
): void {
  rateLimitHeaders(app, reply, rateLimit, !deferred);
  if (!mayUse(found, scope)) {
    reply.header('www-authenticate', `${REALM}, error="insufficient_scope", scope="${scope}"`);
    throw new ApiError('forbidden', `This key lacks the scope ${scope}.`);
  }
  request.auth = { key: found.key, keyHash, entity: found.entity, scopes: found.scopes, actor: found.actor, rateLimit };
  request.uncounted = deferred;
}

export default fp(authPlugin, { name: 'auth' });
