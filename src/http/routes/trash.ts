import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import Type from 'typebox';
import { ApiError, invalidFields } from '../../domain/errors.js';
import { hasScope } from '../../domain/keys.js';
import { Artwork } from '../../schemas/artworks.js';
import { IdParams } from '../../schemas/common.js';
import { Event } from '../../schemas/events.js';
import { TrashPage, TrashParams, TrashQuery } from '../../schemas/trash.js';
import { restoreArtwork, toArtwork } from '../../store/artworks.js';
import { restoreEvent, toEvent } from '../../store/events.js';
import { TRASH_KINDS, deleteFromTrash, listTrash, trashCursor, type TrashKind } from '../../store/trash.js';
import { AUTHED, IDEMPOTENT, answer, errors, recordId, routesTagged } from '../protocol/responses.js';
import { presentArtwork, presentRecord } from '../../store/present.js';
import { requireKind } from '../protocol/scopes.js';

const route = routesTagged('trash');

/** The kinds whose scope (`artworks:read`, `events:write`, …) the key holds. */
const kindsOf = (request: FastifyRequest, access: 'read' | 'write'): TrashKind[] =>
  TRASH_KINDS.filter((kind) => hasScope(request.auth.scopes, `${kind}:${access}`));


/** The trash and restores (docs/api.md, Trash). Its list changes without the entity's data version: never kept, never 304. */
export const trashRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/trash', route(null, 'listTrash', 'Deleted artworks and events, newest delete first, until the purge', {
    description: 'With `kind`, one kind (its read scope needed); without, every kind the key may read. Cursor: pass `next_after` as `after`.',
    querystring: TrashQuery,
    response: { 200: answer(TrashPage, 'A page of the trash.'), ...errors('bad_request', ...AUTHED) },
  }), async (request, reply) => {
    reply.provisional = true;
    const { kind, after, limit } = request.query;
    if (kind) requireKind(request, kind, 'read');
    const kinds = kind ? [kind] : kindsOf(request, 'read');
    if (kinds.length === 0) throw new ApiError('forbidden', 'This key lacks the scopes artworks:read and events:read.');
    const cursor = after === undefined ? undefined : trashCursor(after);
    if (after !== undefined && !cursor) throw invalidFields([{ field: 'after', message: 'is not a next_after this service gave' }]);
    const page = await listTrash(app.db, request.auth.entity.id, kinds, limit, cursor, app.config.trashDays);
    return { items: page.items, has_more: page.hasMore, next_after: page.nextAfter };
  });

  app.delete('/trash/:kind/:id', route(null, 'deleteFromTrash', 'Remove a record from the trash for good now', {
    description: 'Its images go with it unless another record uses them. Needs the kind\'s write scope; 404 when the trash does not hold it.',
    params: TrashParams,
    response: { 204: Type.Null({ description: 'Removed for good.' }), ...errors('not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request, reply) => {
    requireKind(request, request.params.kind, 'write');
    await deleteFromTrash(app.db, request.auth.entity.id, request.params.kind, recordId(request.params));
    return reply.code(204).send(null);
  });

  app.post('/artworks/:id/restore', route('artworks:write', 'restoreArtwork', 'Bring an artwork back from the trash, with its id and fields', {
    description: 'Recorded as a `create` in the changelog and sent as `artwork.created`. 409 `duplicate` (with `existing_id`) when a live artwork now has its identity; 404 when the trash does not hold it.',
    params: IdParams,
    response: { 200: answer(Artwork, 'The artwork, as GET shows it.'), ...errors('not_found', 'duplicate', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => presentArtwork(app.db, app.config.publicBaseUrl, toArtwork(await restoreArtwork(app.db, request.auth.actor, recordId(request.params)))));

  app.post('/events/:id/restore', route('events:write', 'restoreEvent', 'Bring an event back from the trash, with its id and fields', {
    description: 'Recorded as a `create` in the changelog and sent as `event.created`. 409 `duplicate` (with `existing_id`) when a live event now has its slug; 404 when the trash does not hold it.',
    params: IdParams,
    response: { 200: answer(Event, 'The event, as GET shows it.'), ...errors('not_found', 'duplicate', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => presentRecord(app.db, app.config.publicBaseUrl, toEvent(await restoreEvent(app.db, request.auth.actor, recordId(request.params)))));
};
