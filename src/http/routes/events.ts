import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidFields } from '../../domain/errors.js';
import { eventFromPost, eventFromPut } from '../../domain/event.js';
import { Deleted } from '../../schemas/artworks.js';
import { IdParams, parseQueryBoolean } from '../../schemas/common.js';
import { Event, EventList, EventListQuery, EventPost, EventPut, EVENT_EXAMPLE, EventPostResult, type EventPostBody } from '../../schemas/events.js';
import { deleteEvent, getEvent, listEvents, postEvent, postEventWork, toEvent, updateEvent } from '../../store/events.js';
import { pageMembers, pageRequest } from '../pagination.js';
import { todayUtc } from '../../clock.js';
import { BatchResponse, batchRequest } from '../../schemas/batch.js';
import { runBatch } from '../batch.js';
import { AUTHED, WITH_BODY, errors, recordId } from '../responses.js';
import { compileBodyValidator } from '../../schemas/validator.js';

const tags = ['events'];

const validateEvent = compileBodyValidator(EventPost);

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

  app.post('/events/batch', {
    config: { scope: 'events:write' },
    schema: {
      tags, summary: 'Post up to 100 events in one request (one rate-limit unit)',
      body: batchRequest('POST /v1/events', EVENT_EXAMPLE),
      response: { 200: BatchResponse, ...errors(...WITH_BODY, ...AUTHED, 409, 422) },
    },
  }, async (request) => ({
    results: await runBatch(app.db, request.body.items, validateEvent, (item: EventPostBody) => eventFromPost(item), function* (input) {
      const { event, created, changed } = yield* postEventWork(app.db, request.auth.actor, input);
      const { id, title, slug, last_synced_at } = event;
      return { id, title, slug, created, changed, last_synced_at };
    }),
  }));

  app.get('/events', {
    config: { scope: 'events:read' },
    schema: {
      tags, summary: 'List events: all by id (`page` or `after`), upcoming by start date, or past by start date descending',
      querystring: EventListQuery,
      response: { 200: EventList, ...errors(400, ...AUTHED) },
    },
  }, async (request, reply) => {
    const paging = pageRequest(request.query);
    const upcoming = parseQueryBoolean(request.query.upcoming);
    const past = parseQueryBoolean(request.query.past);
    if (upcoming && past) {
      throw invalidFields([{ field: 'past', message: 'cannot be true together with upcoming' }]);
    }
    const when = upcoming ? 'upcoming' : past ? 'past' : undefined;
    if (when && paging.after !== undefined) {
      throw invalidFields([{ field: 'after', message: `cannot be combined with ${when}: date-ordered lists count pages` }]);
    }
    const { events, ...listed } = await listEvents(app.db, request.auth.entity.id, { ...paging, when, today: todayUtc() });
    return { events, ...pageMembers(request, reply, paging, listed, when === undefined) };
  });

  app.get('/events/:id', {
    config: { scope: 'events:read' },
    schema: { tags, summary: 'Get one event', params: IdParams, response: { 200: Event, ...errors(404, ...AUTHED) } },
  }, async (request) => getEvent(app.db, request.auth.entity.id, recordId(request.params)));

  app.put('/events/:id', {
    config: { scope: 'events:write' },
    schema: {
      tags, summary: 'Change fields of an event; null clears a field; a new title re-derives the slug',
      params: IdParams, body: EventPut,
      response: { 200: Event, ...errors(...WITH_BODY, 404, 409, 422, ...AUTHED) },
    },
  }, async (request) => toEvent(await updateEvent(app.db, request.auth.actor, recordId(request.params), eventFromPut(request.body))));

  app.delete('/events/:id', {
    config: { scope: 'events:write' },
    schema: { tags, summary: 'Delete an event', params: IdParams, response: { 200: Deleted, ...errors(404, 409, 422, ...AUTHED) } },
  }, async (request) => {
    const id = recordId(request.params);
    await deleteEvent(app.db, request.auth.actor, id);
    return { deleted: true as const, id };
  });
};
