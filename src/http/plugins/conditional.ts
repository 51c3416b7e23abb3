import { randomUUID } from 'node:crypto';
import { Readable, Transform, pipeline } from 'node:stream';
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { entityVersion } from '../../store/versions.js';
import { COMPRESS_MIN_BYTES, bytesFor } from '../../http-common/compression.js';
import { AnswerCache, type Answer } from '../conditional/answer-cache.js';
import { ifNoneMatchMatches } from '../../http-common/if-none-match.js';
import { entityTag, urlTag } from '../conditional/entity-tags.js';
import { appendRouteHook, prependRouteHook } from '../../http-common/route-hooks.js';
import { SharedReads } from '../conditional/shared-reads.js';
import { chargeDeferredUnit } from './auth.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What a keyed GET's answer depends on besides the entity's data and the URL (e.g. today's date). */
    tagParts?: (request: FastifyRequest) => string;
    /** Routes of one record: whether it exists, for `If-None-Match: *`. Other keyed GETs always answer. */
    exists?: (request: FastifyRequest) => Promise<boolean>;
    /** An answer made of the key and its rate-limit state alone (GET /v1/me): tagged by that content, never kept. */
    keyAnswer?: (request: FastifyRequest) => unknown;
  }
  interface FastifyReply {
    /** The tag of this answer's data, once known (keyed GETs). */
    entityTag: string | null;
    /** Sent from the answer cache: nothing to keep. */
    reused: boolean;
    /**
     * Set by a handler whose answer may still change without a new data version (PostgreSQL changelog
     * entries that are not final yet): it gets a tag that matches nothing, and is not kept.
     */
    provisional: boolean;
  }
  interface FastifyInstance {
    answers: AnswerCache;
    /** The data versions of entities, one read shared by the requests that ask together (shared-reads.ts). */
    entityVersions: Versions;
  }
}

const CACHE_CONTROL = 'private, no-cache';

/**
 * An entity's version reads running at once (shared-reads.ts): on PostgreSQL a read per turn of the
 * event loop while earlier ones are on their way, so a request waits one round trip, not two; at most
 * this many, so one busy entity holds fewer than half of a process's connections (PG_POOL_SIZE, 10).
 * With one at a time a loaded machine left the event loop idle, its requests waiting for reads
 * (docs/performance.md, Reads).
 */
const VERSION_READS_PER_ENTITY = 4;
const JSON_TYPE = 'application/json; charset=utf-8';

/** What a 304 says besides the key's headers: its tag, and how it may be cached. */
export const notModifiedHeaders = (tag: string) => ({ etag: tag, 'cache-control': CACHE_CONTROL, vary: 'accept-encoding' });

/**
 * What a kept answer sent as it is (no coding) says besides the key's headers, in the order this
 * plugin sets them (`sendKept`, then `afterHandler`): its type, its Link (pages that have one), its
 * tag, how it may be cached, and for one of `bytes` that another client may take coded, that caches
 * keep the codings apart (`varies`), as on the answer first built.
 */
export function keptAnswerHeaders(tag: string, link: string | undefined, bytes: number): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': JSON_TYPE };
  if (link !== undefined) headers.link = link;
  headers.etag = tag;
  headers['cache-control'] = CACHE_CONTROL;
  if (varies(bytes)) headers.vary = 'accept-encoding';
  return headers;
}

/** Whether an answer of `bytes` varies by Accept-Encoding: whether or not this client takes a coding, another may. */
const varies = (bytes: number): boolean => bytes >= COMPRESS_MIN_BYTES;

/**
 * Whether a route's tag is made of the entity's data version and the URL alone (no `tagParts`, not an
 * answer of the key): then the tag of a URL can be known from the version without the route's code.
 */
export const taggedByDataAndUrl = (config: FastifyContextConfig): boolean => !config.tagParts && !config.keyAnswer;

/**
 * Conditional requests on every keyed GET (docs/api.md, Conditional requests). Before the handler, one indexed query reads
 * the entity's data version; with the URL it makes the answer's strong ETag. A matching If-None-Match
 * gets 304 without a body and without a rate-limit unit (auth.ts deferred it); otherwise the unit is
 * taken and the answer comes from the cache of answers by tag when one was built for this version,
 * else from the handler — then it is kept. Compressed copies are made here, once per answer and
 * coding, on the thread pool (src/http-common/compression.ts), so the compressor plugin leaves these answers alone.
 */
async function conditionalPlugin(app: FastifyInstance): Promise<void> {
  app.decorate('answers', new AnswerCache(app.config.answerCacheMb * 1024 * 1024));
  app.decorateReply('entityTag', null);
  app.decorateReply('reused', false);
  app.decorateReply('provisional', false);
  // Requests that arrive together share one read of their entity's version (shared-reads.ts).
  const versions: Versions = new SharedReads((entityId: number) => entityVersion(app.db, entityId), VERSION_READS_PER_ENTITY);
  app.decorate('entityVersions', versions);

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.config?.scope === undefined || !methods.every((method) => method === 'GET' || method === 'HEAD')) return;
    // Bound to the route's config: Fastify builds a new request.routeOptions on every access.
    const config: FastifyContextConfig = route.config ?? {};
    // Right after the key check (auth.ts's onRequest hook, added before this one).
    appendRouteHook(route, 'onRequest', (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      answerFromTag(app, versions, config, request, reply).then((sent) => { if (!sent) done(); }, done);
    });
    appendRouteHook(route, 'preHandler', (request: FastifyRequest, reply: FastifyReply) => beforeHandler(app, versions, config, request, reply));
    // Before the compressor's own onSend (registered earlier): the answer is kept as JSON.
    prependRouteHook(route, 'onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown) => afterHandler(app, config, request, reply, payload));
  });
}

export type Versions = SharedReads<number, string | undefined>;

async function currentTag(versions: Versions, config: FastifyContextConfig, request: FastifyRequest): Promise<string> {
  const entityId = request.auth.entity.id;
  if (config.keyAnswer) return entityTag(entityId, 'k', JSON.stringify(config.keyAnswer(request)));
  return dataTag(versions, entityId, request.url, config.tagParts?.(request) ?? '');
}

/** The tag of a URL's answer at the entity's current data version. */
export function dataTag(versions: Versions, entityId: number, url: string, extra: string): Promise<string> {
  // The entity passed authentication; a version it no longer has (deleted since) names no answer.
  // A `then`, not an async function: one promise fewer on every keyed GET (docs/performance.md, Reads).
  return versions.read(entityId).then((version) => urlTag(entityId, version ?? randomUUID(), url, extra));
}

/**
 * Answers what needs neither the body, nor validation, nor the handler, as soon as the key is checked:
 * a matching If-None-Match (304), and a kept answer of a route whose answers are small (routes with
 * large ones first pass the unread-answers check, a preHandler: slow-readers.ts). The URL needs no
 * validation here: a tag, and a kept answer, exist only for a URL that was answered 200 — the same
 * normalized URL validates the same way. Resolves true once it has answered. `If-None-Match: *` asks
 * whether the record exists, which only a validated id may: left to the preHandler.
 */
async function answerFromTag(app: FastifyInstance, versions: Versions, config: FastifyContextConfig, request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
  const condition = request.headers['if-none-match'];
  if (condition !== undefined && condition.trim() === '*') return false;
  const tag = await currentTag(versions, config, request);
  reply.entityTag = tag;
  if (condition !== undefined && ifNoneMatchMatches(condition, tag, true)) {
    notModified(reply, tag);
    return true;
  }
  if (config.keyAnswer || config.largeAnswer) return false;
  const kept = app.answers.get(tag);
  if (!kept) return false;
  await chargeDeferredUnit(app, request, reply);
  await sendKept(request, reply, kept);
  return true;
}

function notModified(reply: FastifyReply, tag: string): FastifyReply {
  return reply.code(304).headers(notModifiedHeaders(tag)).send();
}

async function beforeHandler(app: FastifyInstance, versions: Versions, config: FastifyContextConfig, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  if (reply.entityTag === null) {
    // If-None-Match: * (answerFromTag left it): the record's existence decides.
    const tag = await currentTag(versions, config, request);
    reply.entityTag = tag;
    const condition = request.headers['if-none-match'];
    if (condition !== undefined) {
      const exists = condition.trim() !== '*' || !config.exists || await config.exists(request);
      if (ifNoneMatchMatches(condition, tag, exists)) return notModified(reply, tag);
    }
  }
  await chargeDeferredUnit(app, request, reply);
  if (config.keyAnswer) return undefined;
  const kept = app.answers.get(reply.entityTag);
  return kept && sendKept(request, reply, kept);
}


async function sendKept(request: FastifyRequest, reply: FastifyReply, kept: Answer): Promise<FastifyReply> {
  reply.reused = true;
  reply.type(JSON_TYPE);
  if (kept.link !== undefined) reply.header('link', kept.link);
  return reply.send(await bytesFor(request, reply, kept));
}

async function afterHandler(app: FastifyInstance, config: FastifyContextConfig, request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const tag = reply.entityTag;
  if (reply.statusCode !== 200 || tag === null) return payload;
  if (config.keyAnswer) {
    // Tagged by what it shows: the rate-limit state after this request's own unit.
    reply.header('etag', entityTag(request.auth.entity.id, 'k', JSON.stringify(config.keyAnswer(request))));
  } else {
    reply.header('etag', reply.provisional ? tag.replace(/"$/, `-${randomUUID()}"`) : tag);
  }
  reply.header('cache-control', CACHE_CONTROL);
  if (reply.reused) {
    // A kept answer sent as it is says what a new one says (below); a coded one already does (compression.ts).
    if (Buffer.isBuffer(payload) && varies(payload.length)) reply.header('vary', 'accept-encoding');
    return payload;
  }
  const keep = !reply.provisional && !config.keyAnswer;
  if (payload instanceof Readable) {
    reply.header('vary', 'accept-encoding');
    const link = reply.getHeader('link');
    return keep ? keepWhileStreaming(app.answers, tag, typeof link === 'string' ? link : undefined, payload) : payload;
  }
  if (typeof payload !== 'string') return payload;
  // Whether or not this client takes a coding, another may: shared caches keep them apart.
  if (varies(payload.length)) reply.header('vary', 'accept-encoding');
  // One copy of the JSON as bytes, sent and kept: the socket would encode the string anyway.
  const body = Buffer.from(payload);
  const link = reply.getHeader('link');
  const answer = keep ? app.answers.set(tag, body, typeof link === 'string' ? link : undefined) : { body, link: undefined, encoded: {} };
  return bytesFor(request, reply, answer);
}

/** Streamed answers (large pages, written slice by slice) up to this size are kept as they go out. */
const KEEP_STREAMED_MAX = 256 * 1024;

/**
 * Passes a streamed answer on as it is written and keeps a copy once it has ended, if it stayed under
 * KEEP_STREAMED_MAX: what is held is what the client has already taken, so a client that stops
 * reading holds no more than the stream's own slice. A longer answer is only sent.
 */
function keepWhileStreaming(answers: AnswerCache, tag: string, link: string | undefined, source: Readable): Readable {
  const chunks: Buffer[] = [];
  let size = 0;
  const tee = new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      if (size <= KEEP_STREAMED_MAX) {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        size += bytes.length;
        if (size <= KEEP_STREAMED_MAX) chunks.push(bytes);
        else chunks.length = 0;
      }
      done(null, chunk);
    },
    flush(done) {
      if (size <= KEEP_STREAMED_MAX) answers.set(tag, Buffer.concat(chunks, size), link);
      done();
    },
  });
  // An error on either side ends both; Fastify sees it on the stream it sends.
  return pipeline(source, tee, () => {});
}

export default fp(conditionalPlugin, { name: 'conditional', dependencies: ['auth'] });
