import etag from '@fastify/etag';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { EntityRow } from '../db/types.js';
import { listArtworks } from '../store/artworks.js';
import type { ArtworkListItemType } from '../schemas/artworks.js';
import { findEntityBySlug, listEntities } from '../store/entities.js';
import { datedEvents, findEventBySlug, upcomingEvents } from '../store/events.js';
import { todayUtc } from '../clock.js';
import { SITE_CSS } from './assets.js';
import { calendarFeed } from './ical.js';
import { eventPage, homePage, notFoundPage, profilePage } from './pages.js';

const PAGE_SIZE = 60;
const UPCOMING_SHOWN = 20;
const hide = { hide: true };

type SlugParams = { slug: string };
type EventParams = { slug: string; event_slug: string };

/** Public, keyless pages and feeds (decisions §9). Paused or unknown profiles are a friendly 404. */
export async function webRoutes(app: FastifyInstance): Promise<void> {
  // Weak ETags from the body: a revalidation costs a render but no bytes on the wire (304).
  await app.register(etag, { weak: true });
  const baseUrl = app.config.publicBaseUrl;

  const publicEntity = async (slug: string): Promise<EntityRow | undefined> => {
    const entity = await findEntityBySlug(app.db, slug);
    return entity && !entity.paused_at ? entity : undefined;
  };
  const notFound = (reply: FastifyReply) => reply.code(404).type('text/html; charset=utf-8').send(notFoundPage());
  const htmlReply = (reply: FastifyReply, body: string) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'public, max-age=60').send(body);
  // Feeds are public data: any site may fetch them (CORS *). The API itself sends no CORS headers.
  const icsReply = (reply: FastifyReply, body: string, filename: string) =>
    reply.type('text/calendar; charset=utf-8').header('cache-control', 'public, max-age=300')
      .header('access-control-allow-origin', '*')
      .header('content-disposition', `inline; filename="${filename}"`).send(body);

  app.get('/assets/site.css', { schema: hide }, async (_request, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(SITE_CSS));

  app.get('/', { schema: hide }, async (_request, reply) => {
    const entities = (await listEntities(app.db)).filter((e) => !e.paused_at);
    return htmlReply(reply, homePage(entities));
  });

  app.get<{ Params: SlugParams; Querystring: { page?: string } }>('/profiles/:slug', { schema: hide }, async (request, reply) => {
    const entity = await publicEntity(request.params.slug);
    if (!entity) return notFound(reply);
    const requested = Number(request.query.page ?? 1);
    const page = Number.isInteger(requested) && requested >= 1 && requested <= 1_000_000 ? requested : 1;
    const [{ json, total }, events] = await Promise.all([
      listArtworks(app.db, entity.id, { page, limit: PAGE_SIZE }),
      upcomingEvents(app.db, entity.id, todayUtc(), UPCOMING_SHOWN),
    ]);
    const artworks = JSON.parse(json) as ArtworkListItemType[];
    return htmlReply(reply, profilePage({ entity, artworks, total, page, pageSize: PAGE_SIZE, events }));
  });

  app.get<{ Params: SlugParams }>('/profiles/:slug/events.ics', { schema: hide }, async (request, reply) => {
    const entity = await publicEntity(request.params.slug);
    if (!entity) return notFound(reply);
    return icsReply(reply, calendarFeed(entity, await datedEvents(app.db, entity.id), baseUrl), 'events.ics');
  });

  app.get<{ Params: EventParams }>('/profiles/:slug/events/:event_slug', { schema: hide }, async (request, reply) => {
    const entity = await publicEntity(request.params.slug);
    const event = entity && await findEventBySlug(app.db, entity.id, request.params.event_slug);
    if (!entity || !event) return notFound(reply);
    return htmlReply(reply, eventPage(entity, event));
  });

  app.get<{ Params: EventParams }>('/profiles/:slug/events/:event_slug/event.ics', { schema: hide }, async (request, reply) => {
    const entity = await publicEntity(request.params.slug);
    const event = entity && await findEventBySlug(app.db, entity.id, request.params.event_slug);
    if (!entity || !event || !event.start_date) return notFound(reply);
    return icsReply(reply, calendarFeed(entity, [event], baseUrl), `${event.id}.ics`);
  });
}
