import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ApiError } from '../../domain/errors.js';
import { MetricsText } from '../../schemas/operations.js';
import { answer, errors } from '../protocol/responses.js';
import { registerEventLoopMetrics } from '../runtime/event-loop.js';
import { requireSingleHeader } from '../protocol/single-header.js';
import { queueGauges, type KindGauges } from '../../store/jobs.js';
import { JOB_KINDS } from '../jobs.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's metrics, for paths that answer requests outside Fastify's hooks (fast-not-modified.ts). */
    metrics: AppMetrics;
  }
}

export interface AppMetrics {
  register: Registry;
  /**
   * The duration series of one (method, route, status), which counts answered requests as the
   * onResponse hook does for Fastify's; a path that answers many of one keeps it (fast-not-modified.ts).
   * Asked for at the first answer it counts: a series exists in /metrics once it has counted one.
   */
  requestSeries(method: string, route: string, statusCode: number): RequestSeries;
}

export interface RequestSeries {
  observe(seconds: number): void;
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
  registerQueueGauges(app, register);
  const replays = new Counter({
    name: 'art_catalog_idempotent_replays_total',
    help: 'Answers replayed for a repeated Idempotency-Key.',
    registers: [register],
  });

  // prom-client hashes the label set on every observe; the few (method, route, status) series are
  // looked up once and kept, so a request costs a map lookup and a bucket increment.
  const series = new Map<string, Histogram.Internal<'method' | 'route' | 'status_code'>>();
  const requestSeries = (method: string, route: string, statusCode: number) => {
    const id = `${method} ${statusCode} ${route}`;
    let child = series.get(id);
    if (!child) {
      child = duration.labels({ method, route, status_code: String(statusCode) });
      series.set(id, child);
    }
    return child;
  };
  app.decorate('metrics', { register, requestSeries });
  app.addHook('onResponse', (request, reply, done) => {
    requestSeries(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode).observe(reply.elapsedTime / 1000);
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

/**
 * The queue seen from outside (docs/operations.md, Jobs): per kind, jobs waiting, running, failed in
 * the last hour, and the age of the oldest due job, read at scrape time from the one queue (bounded,
 * indexed queries, off the event loop on SQLite: store/jobs.ts, `queueGauges`). The four gauges share
 * one read per scrape.
 */
function registerQueueGauges(app: FastifyInstance, register: Registry): void {
  let read: { at: number; gauges: Promise<KindGauges[]> } | undefined;
  const current = () => {
    const now = Date.now();
    if (!read || now - read.at > 1000) read = { at: now, gauges: queueGauges(app.db, JOB_KINDS, now) };
    return read.gauges;
  };
  const gauge = (name: string, help: string, value: (kind: KindGauges) => number) => new Gauge({
    name, help, labelNames: ['kind'] as const, registers: [register],
    async collect() {
      for (const kind of await current()) this.set({ kind: kind.kind }, value(kind));
    },
  });
  gauge('art_catalog_jobs_queued', 'Jobs waiting to be taken (due now or scheduled later), by kind.', (k) => k.queued);
  gauge('art_catalog_jobs_running', 'Jobs taken by a process and not yet ended, by kind.', (k) => k.running);
  gauge('art_catalog_jobs_failed_last_hour', 'Jobs given up, or ended with a failed outcome, in the last hour, by kind.', (k) => k.failedLastHour);
  gauge('art_catalog_jobs_oldest_due_seconds', 'How long the oldest due job has waited, by kind (0: none is due).', (k) => k.oldestDueSeconds);
}

export default fp(metricsPlugin, { name: 'metrics' });
