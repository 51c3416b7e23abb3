import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../domain/errors.js';
import { eventFromPost } from '../../domain/event.js';
import { Deleted } from '../../schemas/artworks.js';
import { IdParams, parseQueryBoolean } from '../../schemas/common.js';
import { Event, EventList, EventListQuery, EventPost, EventPostResult } from '../../schemas/events.js';
import { deleteEvent, getEvent, listEvents, postEvent } from '../../store/events.js';
import { AUTHED, WITH_BODY, errors, recordId } from '../responses.js';

const tags = ['events'];

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/events', {
    config: { scope: 'events:write' },
    schema: {
      tags, summary: 'Create an event, or update the one with the same slug',
      body: EventPost,
      response: { 201: EventPostResult, ...errors(...WITH_BODY, ...AUTHED, 409, 422) },
    },
  }, async (request, reply) => {
    const { event, created } = await postEvent(app.db, request.auth.actor, eventFromPost(request.body));
    const { id, title, slug, last_synced_at } = event;
    return reply.code(201).send({ id, title, slug, created, last_synced_at });
  });

  app.get('/events', {
    config: { scope: 'events:read' },
    schema: {
      tags, summary: 'List events: all by id, upcoming by start date, or past by start date descending',
      querystring: EventListQuery,
      response: { 200: EventList, ...errors(400, ...AUTHED) },
    },
  }, async (request) => {
    const { page, limit } = request.query;
    const upcoming = parseQueryBoolean(request.query.upcoming);
    const past = parseQueryBoolean(request.query.past);
    if (upcoming && past) {
      throw new ApiError('bad_request', 'upcoming and past cannot both be true.', { details: [{ field: 'past', message: 'cannot be true together with upcoming' }] });
    }
    const when = upcoming ? 'upcoming' : past ? 'past' : undefined;
    const today = new Date().toISOString().slice(0, 10);
    return { ...(await listEvents(app.db, request.auth.entity.id, { page, limit, when, today })), page, limit };
  });

  app.get('/events/:id', {
    config: { scope: 'events:read' },
    schema: { tags, summary: 'Get one event', params: IdParams, response: { 200: Event, ...errors(404, ...AUTHED) } },
  }, async (request) => getEvent(app.db, request.auth.entity.id, recordId(request.params)));

  app.delete('/events/:id', {
    config: { scope: 'events:write' },
    schema: { tags, summary: 'Delete an event', params: IdParams, response: { 200: Deleted, ...errors(404, 409, 422, ...AUTHED) } },
  }, async (request) => {
    const id = recordId(request.params);
    await deleteEvent(app.db, request.auth.actor, id);
    return { deleted: true as const, id };
  });
};
