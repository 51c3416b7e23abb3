import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ArtworkListItemType } from '../schemas/artworks.js';
import { listArtworks } from '../store/artworks.js';
import {
  calendarEvents, platformVersion, profileEvents, publicArtwork, publicEntity, publicEvent, activeEntities, sitemapRecords,
  type PublicEntity,
} from '../store/public.js';
import { todayUtc } from '../clock.js';
import { presentArtwork, presentRecord, presentRecords } from '../store/present.js';
import { parseViews } from '../domain/artwork.js';
import { parseId } from '../domain/ids.js';
import type { ArtworkRow } from '../db/types.js';
import { FAVICON_SVG, SITE_CSS } from './assets.js';
import { prepareFormatters } from './format.js';
import { PageCache, type Built } from './cache.js';
import { COMPRESSIBLE_TYPE, COMPRESS_MIN_BYTES, bytesFor } from '../http-common/compression.js';
import { calendarText, cutDescription } from './ical.js';
import { artworkPage, eventPage, homePage, notFoundPage, profilePage } from './pages.js';
import { ifNoneMatch } from '../http-common/if-none-match.js';
import { addressRateLimit } from '../http-common/rate-limit.js';
import { renderVersion } from './render-version.js';
import { robotsTxt, sitemapIndex, sitemapPart, sitemapParts } from './sitemap.js';

/** Artworks per profile page. */
export const PAGE_SIZE = 60;
const hide = { hide: true };

interface Kind {
  type: string;
  cacheControl: string;
  /** Feeds are public data: any site may fetch them (CORS *). The API itself sends no CORS headers. */
  headers?: Record<string, string>;
}
const HTML: Kind = { type: 'text/html; charset=utf-8', cacheControl: 'public, max-age=60' };
const XML: Kind = { type: 'application/xml; charset=utf-8', cacheControl: 'public, max-age=3600' };
const ics = (filename: string): Kind => ({
  type: 'text/calendar; charset=utf-8', cacheControl: 'public, max-age=300',
  headers: { 'access-control-allow-origin': '*', 'content-disposition': `inline; filename="${filename}"` },
});
const STATIC = (type: string): Kind => ({ type, cacheControl: 'public, max-age=3600' });

type SlugParams = { slug: string };
type EventParams = { slug: string; event_slug: string };
type ArtworkParams = { slug: string; id: string };

/** Page numbers stay far below anything real (record ids: domain/ids.ts). */
const PAGE_MAX = 1_000_000;

/** A positive whole number from a path or query string up to `max` (absent: `fallback`), else undefined. */
function wholeNumber(raw: string | undefined, max: number, fallback?: number): number | undefined {
  if (raw === undefined) return fallback;
  return /^[1-9]\d{0,9}$/.test(raw) && Number(raw) <= max ? Number(raw) : undefined;
}

/**
 * Public, keyless pages, feeds and sitemaps (docs/public-pages.md). Every answer is named by its route and the
 * version of its data (one indexed query): the ETag comes from that name, so a 304 or a HEAD costs no
 * build, and the body is built once per version in each process and kept in a bounded cache. Paused or
 * unknown profiles, and records or pages that do not exist, are a friendly 404, never cached.
 */
async function routes(app: FastifyInstance): Promise<void> {
  const { publicRateLimit, rateLimitWindowS } = app.config;
  const cache = app.publicCache;
  // Read per request: with PORT=0 the default base URL is known only once the server listens.
  let site = { baseUrl: '', render: '' };
  const current = () => {
    if (site.baseUrl !== app.config.publicBaseUrl) site = { baseUrl: app.config.publicBaseUrl, render: renderVersion(app.config.publicBaseUrl) };
    return site;
  };
  const baseUrl = () => current().baseUrl;
  current(); // the code is hashed at start-up, not on the first visit
  // Inside this plugin only: the API's keyed routes have their own limits.
  addressRateLimit(app, publicRateLimit, rateLimitWindowS * 1000);

  const withImage = <T extends { image_url: string | null }>(record: T) => presentRecord(app.db, baseUrl(), record);

  /** An artwork with its image and its additional views' (docs/api.md, More views of a work), as GET shows them. */
  const withViews = async (row: ArtworkRow) => {
    const { additional_images: views, image } = await presentArtwork(app.db, baseUrl(), { ...row, additional_images: parseViews(row.additional_images) });
    return { artwork: { ...row, image }, views };
  };

  const notFound = (reply: FastifyReply) => reply.code(404).type(HTML.type).send(notFoundPage());

  /**
   * Answers from the name alone when it can (304 to a matching If-None-Match; HEAD without a cached
   * body, after `exists`, a point lookup, where the name alone does not prove the page exists), else
   * from the cache, building once. `build` answers undefined for a page that does not exist.
   */
  async function servePage(request: FastifyRequest, reply: FastifyReply, name: string, kind: Kind,
    build: () => Promise<Buffer | string | undefined>, exists?: () => Promise<boolean>) {
    const key = `${name}|${current().render}`;
    const etag = `"${createHash('sha256').update(key).digest('base64url').slice(0, 22)}"`;
    // Only an answer of this name carries its ETag: never a 404 or an error on the way.
    const named = () => {
      reply.header('etag', etag).header('cache-control', kind.cacheControl).type(kind.type);
      for (const [header, value] of Object.entries(kind.headers ?? {})) reply.header(header, value);
      return reply;
    };
    // `*` matches any current representation (RFC 9110 §13.1.2): only one that exists.
    const match = ifNoneMatch(request.headers['if-none-match'], etag);
    if (match === 'any' && exists && !(await exists())) return notFound(reply);
    if (match) return named().code(304).send();
    const cached = cache.peek(key);
    if (cached) return send(request, named(), kind, cached);
    // A HEAD needs the headers only: an empty stream leaves Content-Length unset instead of 0.
    if (request.method === 'HEAD') return exists && !(await exists()) ? notFound(reply) : named().send(Readable.from([]));
    const built: Built = await cache.get(key, async () => {
      const body = await build();
      return { body: typeof body === 'string' || body === undefined ? Buffer.from(body ?? '') : body, status: body === undefined ? 404 : 200, encoded: {} };
    });
    if (built.status === 404) {
      cache.forget(key);
      return notFound(reply);
    }
    return send(request, named(), kind, built);
  }

  /**
   * A built answer in the coding the client takes, from the copy kept with it (made once, on libuv's
   * thread pool): a feed of a few megabytes is compressed once per version, not once per request
   * through a stream, whose first step copies the whole answer on the event loop.
   */
  async function send(request: FastifyRequest, reply: FastifyReply, kind: Kind, built: Built) {
    if (!COMPRESSIBLE_TYPE.test(kind.type) || built.body.length < COMPRESS_MIN_BYTES) return reply.send(built.body);
    // Whether or not this client takes a coding, another may: shared caches keep them apart.
    reply.header('vary', 'accept-encoding');
    return reply.send(await bytesFor(request, reply, built));
  }

  /** The routes of one profile: its data version decides the cache key; unknown or paused → 404. */
  const forEntity = async (request: FastifyRequest<{ Params: SlugParams }>, reply: FastifyReply, route: string, kind: Kind,
    build: (found: PublicEntity) => Promise<Buffer | string | undefined>,
    options: { within?: (found: PublicEntity) => boolean; exists?: (found: PublicEntity) => Promise<boolean> } = {}) => {
    const found = await publicEntity(app.db, request.params.slug);
    if (!found || (options.within && !options.within(found))) return notFound(reply);
    const exists = options.exists;
    return servePage(request, reply, `${route}|${found.entity.id}|${found.version}`, kind, () => build(found), exists && (() => exists(found)));
  };

  /** A page of one record: `find` is a point lookup, run by the build and, alone, by a cold HEAD. */
  const forRecord = <T>(request: FastifyRequest<{ Params: SlugParams }>, reply: FastifyReply, route: string, kind: Kind,
    find: (found: PublicEntity) => Promise<T | undefined>, render: (found: PublicEntity, record: T) => Promise<Buffer | string> | string) =>
    forEntity(request, reply, route, kind, async (found) => {
      const record = await find(found);
      return record === undefined ? undefined : render(found, record);
    }, { exists: async (found) => (await find(found)) !== undefined });

  const staticRoute = (path: string, kind: Kind, body: () => string) =>
    app.get(path, { schema: hide }, async (request, reply) => servePage(request, reply, `static|${path}`, kind, async () => body()));
  staticRoute('/assets/site.css', STATIC('text/css; charset=utf-8'), () => SITE_CSS);
  staticRoute('/favicon.svg', STATIC('image/svg+xml'), () => FAVICON_SVG);
  staticRoute('/favicon.ico', STATIC('image/svg+xml'), () => FAVICON_SVG);
  staticRoute('/robots.txt', STATIC('text/plain; charset=utf-8'), () => robotsTxt(baseUrl()));

  app.get('/', { schema: hide }, async (request, reply) =>
    servePage(request, reply, `home|${await platformVersion(app.db)}`, HTML, async () => homePage(await activeEntities(app.db), baseUrl())));

  app.get('/sitemap.xml', { schema: hide }, async (request, reply) =>
    servePage(request, reply, `sitemap|${await platformVersion(app.db)}`, XML, async () => sitemapIndex(await activeEntities(app.db), baseUrl())));

  app.get<{ Params: SlugParams; Querystring: { part?: string } }>('/profiles/:slug/sitemap.xml', { schema: hide }, async (request, reply) => {
    const part = wholeNumber(request.query.part, PAGE_MAX, 1);
    if (part === undefined) return notFound(reply);
    return forEntity(request, reply, `sitemap|${part}`, XML,
      async ({ entity }) => sitemapPart(entity, await sitemapRecords(app.db, entity.id, part), part, baseUrl(), PAGE_SIZE),
      { within: ({ artworks }) => part <= sitemapParts(artworks) });
  });

  app.get<{ Params: SlugParams; Querystring: { page?: string } }>('/profiles/:slug', { schema: hide }, async (request, reply) => {
    const page = wholeNumber(request.query.page, PAGE_MAX, 1);
    if (page === undefined) return notFound(reply);
    const today = todayUtc();
    return forEntity(request, reply, `profile|${page}|${today}`, HTML, async ({ entity }) => {
      const [{ json, total }, { upcoming, past }] = await Promise.all([
        listArtworks(app.db, entity.id, { page, limit: PAGE_SIZE }),
        profileEvents(app.db, entity.id, today),
      ]);
      const listed = JSON.parse(json) as Array<Omit<ArtworkListItemType, 'image'>>;
      const [artworks, shownUpcoming] = await Promise.all([presentRecords(app.db, baseUrl(), listed), presentRecords(app.db, baseUrl(), upcoming)]);
      return profilePage({ entity, artworks, total, page, pageSize: PAGE_SIZE, upcoming: shownUpcoming, past, baseUrl: baseUrl() });
    // A page past the end does not exist (page 1 always does, empty or not).
    }, { within: ({ artworks }) => page === 1 || (page - 1) * PAGE_SIZE < artworks });
  });

  app.get<{ Params: ArtworkParams }>('/profiles/:slug/artworks/:id', { schema: hide }, async (request, reply) => {
    const id = parseId(request.params.id);
    if (id === undefined) return notFound(reply);
    return forRecord(request, reply, `artwork|${id}`, HTML, ({ entity }) => publicArtwork(app.db, entity.id, id),
      async ({ entity }, artwork) => artworkPage({ entity, ...(await withViews(artwork)), baseUrl: baseUrl() }));
  });

  app.get<{ Params: SlugParams }>('/profiles/:slug/events.ics', { schema: hide }, async (request, reply) => {
    const today = todayUtc();
    return forEntity(request, reply, `feed|${today}`, ics('events.ics'), async ({ entity }) => {
      const events = (await calendarEvents(app.db, entity.id, today)).map((e) => ({ ...e, description: cutDescription(e.description) }));
      return calendarText({ entity, baseUrl: baseUrl() }, events);
    });
  });

  app.get<{ Params: EventParams }>('/profiles/:slug/events/:event_slug', { schema: hide }, async (request, reply) =>
    forRecord(request, reply, `event|${request.params.event_slug}`, HTML, ({ entity }) => publicEvent(app.db, entity.id, request.params.event_slug),
      async ({ entity }, event) => eventPage(entity, await withImage(event), baseUrl())));

  app.get<{ Params: EventParams }>('/profiles/:slug/events/:event_slug/event.ics', { schema: hide }, async (request, reply) =>
    forRecord(request, reply, `event.ics|${request.params.event_slug}`, ics('event.ics'),
      // Only a dated event has a calendar entry.
      async ({ entity }) => { const event = await publicEvent(app.db, entity.id, request.params.event_slug); return event?.start_date ? event : undefined; },
      ({ entity }, event) => calendarText({ entity, baseUrl: baseUrl() }, [event])));
}

/**
 * The public routes, and their cache on the app (one per process, PUBLIC_CACHE_MB). The pages'
 * formatters are made here, before the server listens: made by the first page, they held the loop.
 */
export const webRoutes = fp(async (app: FastifyInstance) => {
  prepareFormatters();
  app.decorate('publicCache', new PageCache(app.config.publicCacheMb * 1024 * 1024));
  await app.register(routes);
}, { name: 'web-routes' });

declare module 'fastify' {
  interface FastifyInstance {
    /** The public pages' cache (tests read its counters). */
    publicCache: PageCache;
  }
}
