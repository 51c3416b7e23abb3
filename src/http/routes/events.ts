import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { invalidFields } from '../../domain/errors.js';
import { eventFromPost, eventFromPut } from '../../domain/event.js';
import { Deleted } from '../../schemas/artworks.js';
import { IdParams, parseQueryBoolean } from '../../schemas/common.js';
import { Event, EventList, EventListQuery, EventPost, EventPut, EVENT_EXAMPLE, EventPostResult, type EventPostBody } from '../../schemas/events.js';
import { deleteEvent, getEvent, listEvents, postEvent, postEventWork, toEvent, updateEvent } from '../../store/events.js';
import { pageMembers, pageRequest } from '../protocol/pagination.js';
import { todayUtc } from '../../clock.js';
import { batchSchema, batchSummary, runBatch } from '../protocol/batch.js';
import { recordExists } from '../conditional/conditional-routes.js';
import { AUTHED, IDEMPOTENT, WITH_BODY, answer, errors, recordId, routesTagged } from '../protocol/responses.js';
import { compileBodyValidator } from '../../schemas/validator.js';
import { presentRecord, presentRecords } from '../../store/present.js';

const route = routesTagged('events');

const validateEvent = compileBodyValidator(EventPost);

export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/events', route('events:write', 'postEvent', 'Create an event, or update the one with the same slug', {
    description: 'The slug is derived from the entity\'s slug and the title. A new slug creates the event (`created: true`); a known one gets the non-null fields sent merged in (`created: false`). Either way the answer is 201.',
    body: EventPost,
    response: {
      201: answer(EventPostResult, 'The event was created (`created: true`) or updated (`created: false`).'),
      ...errors(...WITH_BODY, ...AUTHED, ...IDEMPOTENT),
    },
  }), async (request, reply) => {
    const { event, created } = await postEvent(app.db, request.auth.actor, eventFromPost(request.body));
    const { id, title, slug, last_synced_at } = event;
    return reply.code(201).send({ id, title, slug, created, last_synced_at });
  });

  app.post('/events/batch', route('events:write', 'postEvents', batchSummary('events'), batchSchema('events', EVENT_EXAMPLE,
    'One result per item, in input order: 201 (written) or 400 (invalid).')), async (request) => ({
    results: await runBatch(app.db, request.body.items, validateEvent, (item: EventPostBody) => eventFromPost(item), function* (input) {
      const { event, created, changed } = yield* postEventWork(app.db, request.auth.actor, input);
      const { id, title, slug, last_synced_at } = event;
      return { id, title, slug, created, changed, last_synced_at };
    }),
  }));

  app.get('/events', route('events:read', 'listEvents', 'List events: all by id (`page` or `after`), upcoming by start date, or past by start date descending', {
    description: '`upcoming=true`: events whose end date (else start date) is today (UTC) or later, by start date. `past=true`: the others with a date, by start date descending. Without them, every event in id order, with the `after` cursor as for artworks.',
    querystring: EventListQuery,
    response: { 200: answer(EventList, 'A page of events.', 'Link'), ...errors('bad_request', ...AUTHED) },
  }, {
    largeAnswer: true,
    // Upcoming and past move at midnight (UTC) without a write: the day is part of their tag.
    tagParts: (request) => (/[?&](upcoming|past)=/.test(request.url) ? todayUtc() : ''),
  }), async (request, reply) => {
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
    const { events, ...listed } = await listEvents(app.db, request.auth.entity.id, { ...paging, when, today: todayUtc(), imageStatus: request.query.image_status });
    return { events: await presentRecords(app.db, app.config.publicBaseUrl, events), ...pageMembers(request, reply, paging, listed, when === undefined) };
  });

  app.get('/events/:id', route('events:read', 'getEvent', 'Get one event', {
    description: 'An event of another entity is not found (404), as one that does not exist.',
    params: IdParams, response: { 200: answer(Event, 'The event.'), ...errors('not_found', ...AUTHED) },
  }, { exists: (request) => recordExists(() => getEvent(app.db, request.auth.entity.id, recordId(request.params as { id: string }))) }),
  async (request) => presentRecord(app.db, app.config.publicBaseUrl, await getEvent(app.db, request.auth.entity.id, recordId(request.params))));

  app.put('/events/:id', route('events:write', 'updateEvent', 'Change fields of an event; null clears a field; a new title re-derives the slug', {
    description: 'Only the fields sent change; `null` clears an optional field (`title` cannot be cleared). A new title re-derives the slug: 409 `duplicate` when another event has it.',
    params: IdParams, body: EventPut,
    response: { 200: answer(Event, 'The whole event after the change.'), ...errors(...WITH_BODY, 'not_found', 'duplicate', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => presentRecord(app.db, app.config.publicBaseUrl, toEvent(await updateEvent(app.db, request.auth.actor, recordId(request.params), eventFromPut(request.body)))));

  app.delete('/events/:id', route('events:write', 'deleteEvent', 'Delete an event', {
    description: 'Re-posting its title later creates a new event. The changelog records the deletion.',
    params: IdParams, response: { 200: answer(Deleted, 'The event is deleted.'), ...errors('not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    const id = recordId(request.params);
    await deleteEvent(app.db, request.auth.actor, id);
    return { deleted: true as const, id };
  });
};
