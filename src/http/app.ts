import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config.js';
import { connect, type DatabaseHandle } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Db } from '../db/types.js';
import authPlugin from './plugins/auth.js';
import errorsPlugin from './plugins/errors.js';
import idempotencyPlugin, { LEASE_MS } from './plugins/idempotency.js';
import metricsPlugin from './plugins/metrics.js';
import openapiPlugin, { registerOpenapiRoutes } from './plugins/openapi.js';
import securityHeaders from './plugins/security-headers.js';
import { DatabaseIdempotencyGuard, RedisIdempotencyGuard, type IdempotencyGuard } from '../coordination/idempotency.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../coordination/rate-limiter.js';
import { connectRedis } from '../coordination/redis.js';
import { artworkRoutes } from './routes/artworks.js';
import { changelogRoutes } from './routes/changelog.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { meRoutes } from './routes/me.js';
import { profileRoutes } from './routes/profile.js';
import { validatorCompiler } from './validation.js';
import { webRoutes } from '../web/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
    config: Config;
    rateLimiter: RateLimiter;
    idempotency: IdempotencyGuard;
  }
}

export interface AppOptions {
  config: Config;
  /** An open database to use (and leave open on close); by default one is opened from `config.databaseUrl`. */
  database?: DatabaseHandle;
  logger?: FastifyServerOptions['logger'];
}

export const BODY_LIMIT = 1024 * 1024;


/** A ready application: migrated database, every route, no listening socket (`serve` adds that). */
export async function buildApp({ config, database, logger }: AppOptions): Promise<FastifyInstance> {
  const handle = database ?? connect(config.databaseUrl, { poolSize: config.pgPoolSize, statementTimeoutMs: config.pgStatementTimeoutMs });
  try {
    await migrateToLatest(handle);
  } catch (error) {
    if (!database) await handle.close();
    throw error;
  }

  const app = Fastify({
    logger: logger ?? { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers["idempotency-key"]'] },
    bodyLimit: BODY_LIMIT,
    // Slow clients may not hold a connection forever (headers and whole request).
    requestTimeout: 30_000,
    connectionTimeout: 60_000,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // JSON is the only body the API reads; any other media type gets 415 (Fastify also parses text/plain).
  app.removeContentTypeParser('text/plain');
  app.decorate('db', handle.db);
  app.decorate('config', config);
  // With REDIS_URL, counters and in-flight locks are shared by every process; otherwise they are local.
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  app.decorate('rateLimiter', redis ? new RedisRateLimiter(redis, config.redisKeyPrefix) : new MemoryRateLimiter() as RateLimiter);
  app.decorate('idempotency', redis
    ? new RedisIdempotencyGuard(handle.db, redis, config.redisKeyPrefix, LEASE_MS)
    : new DatabaseIdempotencyGuard(handle.db, LEASE_MS) as IdempotencyGuard);
  app.addHook('onClose', async () => {
    await app.rateLimiter.close();
    await redis?.quit();
    if (!database) await handle.close();
  });

  await app.register(errorsPlugin);
  await app.register(securityHeaders);
  await app.register(openapiPlugin);
  await app.register(healthRoutes);
  await app.register(metricsPlugin);
  await app.register(async (api) => {
    await api.register(authPlugin);
    await api.register(idempotencyPlugin);
    for (const routes of [artworkRoutes, eventRoutes, profileRoutes, changelogRoutes, meRoutes]) await api.register(routes);
  }, { prefix: '/v1' });
  await app.register(webRoutes);
  await registerOpenapiRoutes(app);
  return app;
}
