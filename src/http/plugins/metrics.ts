import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ApiError } from '../../domain/errors.js';
import { MetricsText } from '../../schemas/operations.js';
import { answer, errors } from '../protocol/responses.js';
import { registerEventLoopMetrics } from '../runtime/event-loop.js';
import { requireSingleHeader } from '../protocol/single-header.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics, for paths that answer requests outside Fastify's hooks (fast-not-modified.ts). */
    metrics: AppMetrics;
  }
}

export interface AppMetrics {
  register: Registry;
  /** Counts one answered request in the duration histogram, as the onResponse hook does for Fastify's. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void;
}

/**
 * Prometheus metrics at GET /metrics: process metrics and one histogram of request durations by
 * route pattern (not raw URL, so ids do not multiply series). One registry per app, so several apps
 * in one process (tests) keep their own counts.
 */
async function metricsPlugin(app: FastifyInstance): Promise<void> {
  const register = new Registry();
  collectDefaultMetrics({ register, prefix: 'art_catalog_' });
  const eventLoop = registerEventLoopMetrics(register);
  app.addHook('onListen', async () => eventLoop.serving());
  app.addHook('onClose', async () => eventLoop.stop());
  const duration = new Histogram({
    name: 'art_catalog_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [register],
  });
  const { unsent } = app;
  new Gauge({
    name: 'art_catalog_http_unsent_bytes',
    help: 'Bytes of answers written but not yet read by their clients, held in this process (UNSENT_MAX_MB is the ceiling).',
    registers: [register],
    collect() { this.set(unsent.bytes()); },
  });
  new Counter({
    name: 'art_catalog_http_unsent_shed_total',
    help: 'List requests answered 503 because unread answers held more than UNSENT_MAX_MB.',
    registers: [register],
    collect() { this.reset(); this.inc(unsent.shed); },
  });
  new Counter({
    name: 'art_catalog_http_send_timeouts_total',
    help: 'Connections closed because their client read nothing of the answer for SEND_TIMEOUT_MS.',
    registers: [register],
    collect() { this.reset(); this.inc(unsent.dropped); },
  });
  const replays = new Counter({
    name: 'art_catalog_idempotent_replays_total',
    help: 'Answers replayed for a repeated Idempotency-Key.',
    registers: [register],
  });

  // prom-client hashes the label set on every observe; the few (method, route, status) series are
  // looked up once and kept, so a request costs a map lookup and a bucket increment.
  const series = new Map<string, Histogram.Internal<'method' | 'route' | 'status_code'>>();
  const observeRequest = (method: string, route: string, statusCode: number, seconds: number) => {
    const id = `${method} ${statusCode} ${route}`;
    let child = series.get(id);
    if (!child) {
      child = duration.labels({ method, route, status_code: String(statusCode) });
      series.set(id, child);
    }
    child.observe(seconds);
  };
  app.decorate('metrics', { register, observeRequest });
  app.addHook('onResponse', (request, reply, done) => {
    observeRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    if (reply.getHeader('idempotent-replayed') === 'true') replays.inc();
    done();
  });

  const token = app.config.metricsToken;
  app.get('/metrics', {
    schema: {
      operationId: 'metrics', tags: ['operations'],
      summary: 'Prometheus metrics (text exposition format)',
      description: 'Process metrics and request durations by route pattern, for a Prometheus scraper. Open unless the operator sets METRICS_TOKEN; then it needs `Authorization: Bearer <METRICS_TOKEN>`.',
      produces: ['text/plain'],
      response: { 200: answer(MetricsText, 'The metrics of this process.'), ...(token ? errors('bad_request', 'unauthorized') : {}) },
    },
    ...(token ? { onRequest: bearerGuard(token) } : {}),
  }, async (_request, reply) => reply.type(register.contentType).send(await register.metrics()));
}

/**
 * Refuses a request whose `Authorization: Bearer …` is not `token`. Both sides are hashed first, so
 * the comparison takes the same time whatever the length or the first differing byte.
 */
function bearerGuard(token: string) {
  const expected = sha256(token);
  return (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    try {
      requireSingleHeader(request, 'Authorization');
    } catch (error) {
      return done(error as Error);
    }
    const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
    if (match?.[1] && timingSafeEqual(sha256(match[1]), expected)) return done();
    reply.header('www-authenticate', 'Bearer realm="metrics"');
    done(new ApiError('unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.'));
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

export default fp(metricsPlugin, { name: 'metrics' });
