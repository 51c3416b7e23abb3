import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import proxyAddr from '@fastify/proxy-addr';
import { performance } from 'node:perf_hooks';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge } from 'prom-client';
import { hashKey } from '../../domain/keys.js';
import { ifNoneMatchMatches } from '../../http-common/if-none-match.js';
import { clientAddressOf } from '../../http-common/client-address.js';
import { REQUEST_COMPLETED, logsAt, requestLogFields } from '../runtime/logging.js';
import { admittedAtOnce, bearerToken, hitUnitWithin, peekUnits } from '../plugins/auth.js';
import { acceptedEncoding } from '../../http-common/compression.js';
import { dataTag, taggedByDataAndUrl } from '../plugins/conditional.js';
import { requestId } from '../plugins/request-id.js';
import { fairTurn } from '../runtime/fair-turns.js';
import { EarlyAnswerMemo, type EarlyRoute, type EarlySeries, type Kind, type Remembered } from './memo.js';
import { carriesKeptHeaders, carriesNotModifiedHeaders, keptEarlyHeaders, notModifiedAnswerHeaders } from './answer-headers.js';
import { appendRouteHook } from '../../http-common/route-hooks.js';
import { repeatedHeader } from '../protocol/single-header.js';

/** Headers no request may repeat (app.ts's onRequest hook, auth.ts): a repeat is Fastify's 400 to send. */
const SINGLE_HEADERS = ['Authorization', 'Host', 'Content-Type'];

interface Lane {
  app: FastifyInstance;
  memo: EarlyAnswerMemo;
  answered: Counter;
  keptAnswered: Counter;
  /** The address Fastify's `request.ip` names for a raw request (TRUST_PROXY decides). */
  namedAddress: (request: IncomingMessage) => string | undefined;
}

/**
 * `request.ip` as Fastify works it out for the app's TRUST_PROXY, by the same library: the peer, or
 * the nearest X-Forwarded-For entry the trusted proxies did not add.
 */
function namedAddressFor(trustProxy: FastifyInstance['config']['trustProxy']): Lane['namedAddress'] {
  if (trustProxy === false) return (request) => request.socket.remoteAddress;
  const trusted = trustProxy === true ? () => true : proxyAddr.compile(trustProxy);
  return (request) => proxyAddr(request, trusted);
}

/**
 * Answers before the framework (docs/performance.md, Reads). A poller sends the same keyed GET with
 * the tag it holds, and most of the time nothing changed: the answer is ~400 bytes of headers, and
 * Fastify's request, reply, hooks and child logger cost most of its time. Once Fastify has answered a
 * (key, URL) with a 304, the next such request is answered here, in the server's `request` listener,
 * before Fastify sees it: the key is checked by auth.ts's own rules on its cache, the version read
 * through conditional.ts's shared reads, and the 304 written with the headers Fastify's hooks would
 * set, counted in the same metrics and request log. The same for a GET Fastify answered from the
 * answer cache (by id, the profile, a list or changelog page): sent here next time to a client that
 * takes no coding of it, its rate-limit unit taken as auth.ts takes it — a page only while the
 * unread-answers check lets it through, and watched like Fastify's answers (slow-readers.ts).
 * Anything else — another request, a key that needs the full check or has no unit left, a tag that
 * does not match, close() begun — goes to Fastify untouched (nothing of the request has been read).
 */
async function fastNotModifiedPlugin(app: FastifyInstance): Promise<void> {
  const maxBytes = app.config.notModifiedMemoKb * 1024;
  if (maxBytes === 0) return;
  const memo = new EarlyAnswerMemo(maxBytes);
  const lane: Lane = {
    app, memo, namedAddress: namedAddressFor(app.config.trustProxy),
    answered: new Counter({
      name: 'art_catalog_http_early_not_modified_total',
      help: 'Keyed GETs answered 304 before the framework (NOT_MODIFIED_MEMO_KB); also counted in the duration histogram.',
      registers: [app.metrics.register],
    }),
    keptAnswered: new Counter({
      name: 'art_catalog_http_early_kept_answers_total',
      help: 'Keyed GETs answered 200 with a kept answer before the framework (NOT_MODIFIED_MEMO_KB); also counted in the duration histogram.',
      registers: [app.metrics.register],
    }),
  };
  new Gauge({
    name: 'art_catalog_http_not_modified_memo_bytes',
    help: 'Memory counted for the (key, URL) pairs whose 304 or kept answer is answered before the framework (NOT_MODIFIED_MEMO_KB is the ceiling).',
    registers: [app.metrics.register],
    collect() { this.set(memo.bytes()); },
  });

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config: FastifyContextConfig = route.config ?? {};
    const { scope } = config;
    if (scope === undefined || !taggedByDataAndUrl(config) || !methods.every((method) => method === 'GET' || method === 'HEAD')) return;
    const early: EarlyRoute = { pattern: route.url, scope, largeAnswer: config.largeAnswer === true, series: {} };
    // Kept answers are sent early only where the unit can be taken without a visit to Redis of its
    // own (in process memory, or from a lease of Redis's units).
    const keeps = app.rateLimiter.hitWithin !== undefined;
    appendRouteHook(route, 'onResponse', (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      rememberNotModified(memo, early, request, reply);
      if (keeps) rememberKept(memo, early, request, reply);
      done();
    });
  });

  // Fastify's server has one `request` listener, Fastify's router; the early answers go in front of it.
  const { server } = app;
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`fast-not-modified: the server has ${listeners.length} request listeners, expected Fastify's one`);
  const fastify = listeners[0]!;
  server.removeListener('request', fastify);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const started = performance.now();
    let early: Promise<boolean> | undefined;
    try {
      early = answerBeforeFastify(lane, request, response, started);
    } catch {
      early = undefined;
    }
    if (early === undefined) return fastify(request, response);
    early.then((answered) => {
      if (!answered) fastify(request, response);
    }, (error: unknown) => {
      if (!response.headersSent) return fastify(request, response);
      app.log.error({ err: error }, 'early 304 sent, then failed');
    });
  });
}

/** After a 304 of Fastify's (a tag that matched, not `If-None-Match: *`) that carried the early 304's headers. */
function rememberNotModified(memo: EarlyAnswerMemo, route: EarlyRoute, request: FastifyRequest, reply: FastifyReply): void {
  if (reply.statusCode !== 304 || !request.auth) return;
  const condition = request.headers['if-none-match'];
  if (condition === undefined || condition.trim() === '*') return;
  if (!carriesNotModifiedHeaders(reply)) return;
  memo.remember('304', request.method, request.url, request.auth.keyHash, { route, entityId: request.auth.entity.id });
}

/**
 * After a 200 of Fastify's sent from the answer cache, as it is, to a GET without If-None-Match, that
 * carried the early one's headers in their order (a coded answer carries more: it is not remembered).
 */
function rememberKept(memo: EarlyAnswerMemo, route: EarlyRoute, request: FastifyRequest, reply: FastifyReply): void {
  if (reply.statusCode !== 200 || !reply.reused || request.method !== 'GET' || !request.auth) return;
  if (request.headers['if-none-match'] !== undefined) return;
  if (!carriesKeptHeaders(reply)) return;
  memo.remember('200', request.method, request.url, request.auth.keyHash, { route, entityId: request.auth.entity.id });
}

/**
 * Undefined at once, or a promise of false, for a request Fastify is to answer; a promise of true once
 * this has answered it. Only what an earlier 304 of Fastify's showed is answered here, only when every
 * check Fastify's path makes would pass on cached state — each one by the function that path uses.
 */
function answerBeforeFastify(lane: Lane, request: IncomingMessage, response: ServerResponse, started: number): Promise<boolean> | undefined {
  const { method, url, headers } = request;
  if ((method !== 'GET' && method !== 'HEAD') || url === undefined || !url.startsWith('/v1/')) return undefined;
  const condition = headers['if-none-match'];
  // A 304 for a tag; else a kept answer, for a GET (a HEAD's answer is Fastify's to shape).
  const kind: Kind = condition === undefined ? '200' : '304';
  if ((kind === '304' && condition!.trim() === '*') || (kind === '200' && method !== 'GET') || lane.app.isClosing()) return undefined;
  const pairs = lane.memo.pairsOf(kind, method, url);
  if (pairs === undefined) return undefined;
  // A body (which a GET may carry) is for Fastify to read or refuse.
  if (headers['content-length'] !== undefined || headers['transfer-encoding'] !== undefined) return undefined;
  if (repeatedHeader(request.rawHeaders, SINGLE_HEADERS) !== undefined) return undefined;
  const key = bearerToken(headers.authorization);
  if (key === undefined) return undefined;
  const keyHash = hashKey(key);
  const remembered = lane.memo.get(pairs, keyHash);
  if (remembered === undefined || !admitted(lane, keyHash, remembered)) return undefined;
  const asked = { method, url, keyHash, remembered };
  return kind === '304' ? notModified(lane, request, response, started, { ...asked, condition: condition! }) : keptAnswer(lane, request, response, started, asked);
}

/** auth.ts's checks on its cached state, as Fastify's path would make them now (401, 403 paused, 403 scope). */
function admitted(lane: Lane, keyHash: string, remembered: Remembered) {
  const found = admittedAtOnce(lane.app.keyCache, keyHash, Date.now(), remembered.route.scope);
  return found?.entity.id === remembered.entityId ? found : undefined;
}

interface Asked {
  method: string;
  url: string;
  keyHash: string;
  remembered: Remembered;
}

async function notModified(lane: Lane, request: IncomingMessage, response: ServerResponse, started: number, asked: Asked & { condition: string }): Promise<boolean> {
  const { app } = lane;
  const { entityId } = asked.remembered;
  const tag = await dataTag(app.entityVersions, entityId, asked.url, '');
  if (!ifNoneMatchMatches(asked.condition, tag, true)) return false;
  // Checked again after the read: a revocation, a pause or close() may have come meanwhile.
  const found = admitted(lane, asked.keyHash, asked.remembered);
  if (found === undefined) return false;
  const peeked = peekUnits(app, found);
  const rateLimit = peeked instanceof Promise ? await peeked : peeked;
  if (app.isClosing() || request.socket.destroyed) return false;
  const id = requestId(request);
  response.writeHead(304, notModifiedAnswerHeaders(id, rateLimit, tag));
  response.end();
  app.unsent.watch(request, response);

  counted(lane, request, started, asked, id, asked.method === 'HEAD' ? 'HEAD 304' : 'GET 304');
  lane.answered.inc();
  return true;
}

/**
 * A kept answer Fastify's path would send (conditional.ts): the tag of the current version names an
 * answer the cache holds, and the client takes no coding of it (compression.ts decides, as for
 * Fastify's). A page passes the unread-answers check and takes its turn first, as on Fastify's path,
 * and an answer is watched while its client has yet to read it (slow-readers.ts). Its unit is
 * taken as auth.ts takes it — only where the limiter needs no visit to Redis of its own (process
 * memory, or a lease of Redis's units this process holds, perhaps once Redis's answer on its way has
 * made room in it) and the unit is there to take; a key at its limit, or a unit that needs Redis,
 * goes to Fastify, whose 429 and counting stay the only ones.
 */
async function keptAnswer(lane: Lane, request: IncomingMessage, response: ServerResponse, started: number, asked: Asked): Promise<boolean> {
  const { app } = lane;
  const tag = await dataTag(app.entityVersions, asked.remembered.entityId, asked.url, '');
  const kept = app.answers.get(tag);
  if (kept === undefined || acceptedEncoding(request.headers['accept-encoding'], kept.body.length) !== undefined) return false;
  const { largeAnswer } = asked.remembered.route;
  if (largeAnswer) {
    // Past the ceiling, Fastify's path answers 503 (slow-readers.ts).
    if (app.unsent.full()) return false;
    const turn = fairTurn();
    if (turn) await turn;
  }
  // Checked again after the read: a revocation, a pause or close() may have come meanwhile.
  let found = admitted(lane, asked.keyHash, asked.remembered);
  if (found === undefined || app.isClosing() || request.socket.destroyed) return false;
  const hit = hitUnitWithin(app, found);
  const rateLimit = hit instanceof Promise ? await hit : hit;
  if (hit instanceof Promise) {
    // Waited for Redis's answer about the key's lease (rate-limiter.ts): checked again, as after the read.
    found = rateLimit && admitted(lane, asked.keyHash, asked.remembered);
    // Revoked or paused meanwhile: the framework refuses it before counting anything (auth.ts).
    if (found === undefined) return false;
    // The client left: its unit is spent, as the framework's path spends it, and there is no one to answer.
    if (request.socket.destroyed) return true;
  }
  if (rateLimit === undefined) return false;
  const id = requestId(request);
  response.writeHead(200, keptEarlyHeaders(id, rateLimit, tag, kept.link, kept.body.length));
  response.end(kept.body);
  app.unsent.watch(request, response);
  counted(lane, request, started, asked, id, 'GET 200');
  lane.keptAnswered.inc();
  return true;
}

/** The duration histogram and the request log line, with the labels and fields Fastify's path gives. */
function counted(lane: Lane, request: IncomingMessage, started: number, asked: Asked, id: string, answer: keyof EarlySeries): void {
  const { app } = lane;
  const durationMs = performance.now() - started;
  const { route } = asked.remembered;
  const status = answer === 'GET 200' ? 200 : 304;
  (route.series[answer] ??= app.metrics.requestSeries(asked.method, route.pattern, status)).observe(durationMs / 1000);
  if (logsAt(app.log, 'info')) {
    const client = clientAddressOf(lane.namedAddress(request), request.socket.remoteAddress);
    app.log.info({
      reqId: id,
      ...requestLogFields({ method: asked.method, url: asked.url, status, durationMs, client, entityId: asked.remembered.entityId }),
    }, REQUEST_COMPLETED);
  }
}

export default fp(fastNotModifiedPlugin, { name: 'fast-not-modified', dependencies: ['auth', 'conditional', 'metrics', 'shutdown', 'slow-readers'] });
