import Fastify, { type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { defaultBaseUrl, type Config } from '../config.js';
import { connect, type DatabaseHandle } from '../db/connect.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Db } from '../db/types.js';
import authPlugin from './plugins/auth.js';
import compressionPlugin from './plugins/compression.js';
import conditionalPlugin from './plugins/conditional.js';
import errorsPlugin from './plugins/errors.js';
import fastNotModifiedPlugin from './early/fast-not-modified.js';
import { OneLinePerRequest, loggerOptions } from './runtime/logging.js';
import idempotencyPlugin, { LEASE_MS, bodyTextHash } from './plugins/idempotency.js';
import metricsPlugin from './plugins/metrics.js';
import openapiPlugin, { registerOpenapiRoutes } from './plugins/openapi.js';
import requestIdPlugin, { requestId } from './plugins/request-id.js';
import securityHeaders from './plugins/security-headers.js';
import shutdownPlugin from './plugins/shutdown.js';
import slowReadersPlugin from './plugins/slow-readers.js';
import unreadBodyPlugin from './plugins/unread-body.js';
import { DatabaseIdempotencyGuard, RedisIdempotencyGuard, type IdempotencyGuard } from '../coordination/idempotency.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from '../coordination/rate-limiter.js';
import { connectRedis, firstConnection, logOutages } from '../coordination/redis.js';
import { artworkRoutes } from './routes/artworks.js';
import { changelogRoutes } from './routes/changelog.js';
import { eventRoutes } from './routes/events.js';
import { healthRoutes, type Dependency } from './routes/health.js';
import { feedRoutes } from './routes/feeds.js';
import { trashRoutes } from './routes/trash.js';
import { runRoutes } from './routes/runs.js';
import { feedFetcher } from '../feeds/fetcher.js';
import { meRoutes } from './routes/me.js';
import { profileRoutes } from './routes/profile.js';
import { imageRoutes } from './routes/images.js';
import { webhookRoutes } from './routes/webhooks.js';
import { prepareServerKey } from '../secrets/seal.js';
import { openImageStore, type ImageStore } from '../images/store/index.js';
import { cachedSerializers } from './protocol/serializers.js';
import { validatorCompiler } from './protocol/validation.js';
import { clientErrorHandler } from './protocol/client-errors.js';
import { bodyWhereNoneIsTaken, otherMediaType, takesBody } from './protocol/no-body.js';
import { requireSingleHeader } from './protocol/single-header.js';
import { ApiError } from '../domain/errors.js';
import { webRoutes } from '../web/routes.js';
import { consolePlugin } from '../console/plugin.js';
import { HeldImports } from '../console/held-imports.js';
import { JobRunner, type JobRunnerOptions } from '../jobs/runner.js';
import { addressPolicy } from '../fetch/index.js';
import { registerJobKinds, startRecurring } from './jobs.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** SHA-256 of the JSON body exactly as received, for requests with an Idempotency-Key (else null). */
    bodyHash: string | null;
  }
  interface FastifyInstance {
    db: Db;
    config: Config;
    rateLimiter: RateLimiter;
    idempotency: IdempotencyGuard;
    imageStore: ImageStore;
    /**
     * The one runner of this process's background jobs (src/jobs/README.md): kinds register on it
     * before the app is ready; it starts on `onReady` and stops on close.
     */
    jobs: JobRunner;
  }
}

export interface AppOptions {
  config: Config;
  /** An open database to use (and leave open on close); by default one is opened from `config.databaseUrl`. */
  database?: DatabaseHandle;
  logger?: FastifyServerOptions['logger'];
  /** Where the standard logger writes (default stdout); tests capture it to check what is logged. */
  logStream?: NodeJS.WritableStream;
  /** The image store to use (and leave open on close); by default one is opened from `config.imageStore`. */
  imageStore?: ImageStore;
  /** Limits on slow clients; the defaults suit production, tests shorten them. */
  timeouts?: Partial<Timeouts>;
  /** The job runner's timing (tests shorten it); `false`: this process runs no background jobs at all. */
  jobs?: boolean | Pick<JobRunnerOptions, 'pollMs' | 'now' | 'leaseMs'>;
  /** Whether this process works on the image queue (default true); tests may also set the runner's timing and an image's time limit. */
  imageWorker?: boolean | (Pick<JobRunnerOptions, 'pollMs' | 'now' | 'leaseMs'> & { timeoutMs?: number });
  /** A test's short time limit per undo (the default is UNDO_TIMEOUT_MS, src/feeds/undo.ts). */
  undoTimeoutMs?: number;
}

export interface Timeouts {
  /** The whole request, headers and body, must arrive within this (default 30 s). */
  requestMs: number;
  /** The request headers must arrive within this (default 10 s): a client dribbling headers is cut off. */
  headersMs: number;
  /** An idle keep-alive connection is closed after this (default 72 s, above common load balancers' 60 s). */
  keepAliveMs: number;
}

const DEFAULT_TIMEOUTS: Timeouts = { requestMs: 30_000, headersMs: 10_000, keepAliveMs: 72_000 };
/** Request headers larger than this get 431 from Node before any of our code runs. */
export const MAX_HEADER_BYTES = 16 * 1024;

export const BODY_LIMIT = 1024 * 1024;


/** A ready application: migrated database, every route, no listening socket (`serve` adds that). */
export async function buildApp({ config, database, imageStore, logger, logStream, timeouts: custom, imageWorker = true, jobs: jobOptions = true, undoTimeoutMs }: AppOptions): Promise<FastifyInstance> {
  const timeouts = { ...DEFAULT_TIMEOUTS, ...custom };
  const handle = database ?? connect(config.databaseUrl, { poolSize: config.pgPoolSize, bulkReads: config.pgBulkReads, statementTimeoutMs: config.pgStatementTimeoutMs });
  try {
    await migrateToLatest(handle);
  } catch (error) {
    if (!database) await handle.close();
    throw error;
  }

  const app = Fastify({
    logger: logger ?? await loggerOptions(config, logStream),
    logController: new OneLinePerRequest(),
    bodyLimit: BODY_LIMIT,
    // The request id of every log line, sent back as X-Request-Id (plugins/request-id.ts checks a client's).
    requestIdHeader: false,
    genReqId: requestId,
    // Slow clients may not hold a connection forever (headers, whole request, idle keep-alive).
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: Math.min(timeouts.headersMs, timeouts.requestMs),
      maxHeaderSize: MAX_HEADER_BYTES,
      // How often Node checks those timeouts (its default, 30 s, would let a slow client stay that long).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(timeouts.headersMs / 2)),
    },
    // Whether request.ip comes from X-Forwarded-For (the keyless routes' per-address limit uses it).
    trustProxy: config.trustProxy,
    // Requests arriving during shutdown get our own 503 (plugins/shutdown.ts), in the contract's shape.
    return503OnClosing: false,
    // Requests Node's parser refuses (malformed, headers too large, too slow) get the contract's shape.
    clientErrorHandler,
    // Response serializers compiled once per process, not once per app (protocol/serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: cachedSerializers } },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // A URL that does not decode, or a path parameter over 200 characters, names no resource: 404.
    frameworkErrors: (_error, _request, reply) => {
      (reply as FastifyReply).code(404).type('application/json; charset=utf-8').send(new ApiError('not_found').toBody());
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // JSON is the only body the API reads; any other media type gets 415 (Fastify also parses text/plain).
  app.removeContentTypeParser('text/plain');
  // Fastify's own JSON parser (prototype-poisoning checks included), keeping a hash of the exact text:
  // idempotency compares bodies by it, never by re-serializing a body of any depth.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.decorateRequest('bodyHash', null);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    // A route that takes no body (DELETE) reads none, whatever Content-Type the client always sends.
    if (!takesBody(request)) return done(bodyWhereNoneIsTaken(request, body as string), undefined);
    // Only an idempotent request compares bodies; the others skip hashing theirs.
    if (request.headers['idempotency-key'] !== undefined) request.bodyHash = bodyTextHash(body as string);
    void parseJson(request, body as string, done);
  });
  app.addContentTypeParser('*', (request, _payload, done) => done(otherMediaType(request), undefined));
  app.decorate('db', handle.db);
  app.decorate('config', config);
  app.decorate('imageStore', imageStore ?? openImageStore(config));
  // With REDIS_URL, counters and in-flight locks are shared by every process; otherwise they are local.
  const redis = config.redisUrl ? connectRedis(config.redisUrl) : undefined;
  if (redis) {
    logOutages(redis, app.log);
    await firstConnection(redis);
  }
  app.decorate('rateLimiter', redis ? new RedisRateLimiter(redis, config.redisKeyPrefix, config.rateLimitLease) : new MemoryRateLimiter() as RateLimiter);
  app.decorate('idempotency', redis
    ? new RedisIdempotencyGuard(handle.db, redis, config.redisKeyPrefix, LEASE_MS, (error) => app.log.warn({ err: error }, 'idempotency lock not released; it expires with its lease'))
    : new DatabaseIdempotencyGuard(handle.db, LEASE_MS) as IdempotencyGuard);
  const dependencies: Dependency[] = [{ name: 'database', check: () => handle.ping() }];
  if (redis) dependencies.push({ name: 'redis', check: () => redis.ping() });
  app.decorate('dependencies', dependencies);
  // PORT=0: the default base URL of links names the port the system gave. This hook runs as the
  // socket starts listening, before a request can arrive; readers take the base URL per request.
  app.addHook('onListen', (done) => {
    const bound = app.server.address();
    if (config.publicBaseUrlIsDefault && bound !== null && typeof bound === 'object') config.publicBaseUrl = defaultBaseUrl(config.host, bound.port);
    // The health check's own connection (PostgreSQL) is opened now, not by the first /healthz, which then
    // answers as fast as the others (docs/operations.md, Health, metrics and logs). Not awaited: a database
    // that is down by now is /healthz's to report, not a reason to hold or fail the start.
    handle.ping().catch(() => undefined);
    done();
  });
  // One runner for every kind of background job (src/jobs/README.md); a test's image timings apply to it.
  const { timeoutMs: imageTimeoutMs, ...imageTimings } = typeof imageWorker === 'object' ? imageWorker : {};
  const jobs = new JobRunner({
    db: handle.db, log: app.log, leaseMs: config.jobLeaseS * 1000,
    ...(typeof jobOptions === 'object' ? jobOptions : {}),
    ...imageTimings,
  });
  app.decorate('jobs', jobs);
  // Webhook secrets are stored sealed with the server key (docs/operations.md, Secrets at rest).
  prepareServerKey();
  // A gallery's two import slots, shared by the console's Import and Feeds and the API's feed preview.
  app.decorate('heldImports', new HeldImports());
  // Feeds read files through the one outgoing fetcher (src/feeds/fetcher.ts).
  app.decorate('feedFetch', feedFetcher(addressPolicy(config.fetchAllowPrivate)));
  // Every kind, the sweeps included, registered in one place (src/http/jobs.ts). A write that queues a
  // job nudges this process's slots of its kind once it has committed (src/db/run.ts, afterCommit).
  registerJobKinds(jobs, { db: handle.db, config, imageStore: app.imageStore, feedFetch: app.feedFetch }, app.log, {
    images: imageWorker !== false, imageTimeoutMs, undoTimeoutMs,
  });
  app.addHook('onReady', async () => {
    if (jobOptions === false) return;
    await startRecurring(handle.db, jobs.now());
    jobs.start();
  });
  app.addHook('onClose', async () => {
    await jobs.close();
    await app.rateLimiter.close();
    // QUIT needs a live connection; a Redis that is down is simply let go.
    await redis?.quit().catch(() => redis.disconnect());
    if (!database) await handle.close();
    if (!imageStore) await app.imageStore.close();
  });

  // Headers no request may repeat, whatever its route (the keyed ones check Authorization and
  // Idempotency-Key themselves): a proxy reading the last would disagree with Node, which reads the first.
  app.addHook('onRequest', (request, _reply, done) => {
    try {
      requireSingleHeader(request, 'Host', 'Content-Type');
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
  await app.register(requestIdPlugin);
  await app.register(errorsPlugin);
  await app.register(shutdownPlugin);
  await app.register(unreadBodyPlugin);
  await app.register(slowReadersPlugin, { sendTimeoutMs: config.sendTimeoutMs, unsentMaxBytes: config.unsentMaxMb * 1024 * 1024 });
  await app.register(securityHeaders);
  await app.register(compressionPlugin);
  await app.register(openapiPlugin);
  await app.register(healthRoutes);
  await app.register(metricsPlugin);
  await app.register(async (api) => {
    await api.register(authPlugin);
    await api.register(idempotencyPlugin);
    await api.register(conditionalPlugin);
    // Before the routes: it learns which of them may answer a 304 early as they are added.
    await api.register(fastNotModifiedPlugin);
    for (const routes of [artworkRoutes, eventRoutes, profileRoutes, changelogRoutes, meRoutes, feedRoutes, webhookRoutes, trashRoutes, runRoutes]) await api.register(routes);
  }, { prefix: '/v1' });
  await app.register(webRoutes);
  await app.register(imageRoutes);
  // The gallery console (src/console): its own cookies, forms, CSRF and error pages, encapsulated.
  await app.register(consolePlugin, { prefix: '/console' });
  await registerOpenapiRoutes(app);
  return app;
}
