import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { artworkFromPost, artworkFromPut } from '../../domain/artwork.js';
import {
  Artwork, ArtworkList, ArtworkListQuery, ArtworkPost, ARTWORK_EXAMPLE, ArtworkPostResult, ArtworkPut, Deleted, type ArtworkPostBody,
} from '../../schemas/artworks.js';
import { IdParams } from '../../schemas/common.js';
import {
  deleteArtwork, getArtwork, listArtworks, postArtwork, postArtworkWork, postArtworksWork, postNewArtworksWork, toArtwork, updateArtwork, type PostedArtwork,
} from '../../store/artworks.js';
import { batchSchema, batchSummary, runBatch } from '../protocol/batch.js';
import { pageMembers, pageRequest } from '../protocol/pagination.js';
import { recordExists } from '../conditional/conditional-routes.js';
import { AUTHED, IDEMPOTENT, WITH_BODY, answer, errors, recordId, routesTagged, sendJsonText } from '../protocol/responses.js';
import { compileBodyValidator } from '../../schemas/validator.js';
import { presentArtwork, presentRecords } from '../../store/present.js';

const route = routesTagged('artworks');

const validateArtwork = compileBodyValidator(ArtworkPost);

/** A batch item's result. */
const written = ({ artwork: { id, title, source_fingerprint, last_synced_at }, created, changed }: PostedArtwork) =>
  ({ id, title, source_fingerprint, created, changed, last_synced_at });

export const artworkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artworks', route('artworks:write', 'postArtwork', 'Create an artwork, or update the one with the same fingerprint', {
    description: 'Matches the artwork by `external_id`, else by its fingerprint (SHA-256 of slug(artist_name)|slug(title)|year). A new one is created (`created: true`); a known one gets the non-null fields sent merged in and `last_synced_at` refreshed (`created: false`). Either way the answer is 201.',
    body: ArtworkPost,
    response: {
      201: answer(ArtworkPostResult, 'The artwork was created (`created: true`) or updated (`created: false`).'),
      ...errors(...WITH_BODY, ...AUTHED, ...IDEMPOTENT, 'ambiguous'),
    },
  }), async (request, reply) => {
    const { artwork, created } = await postArtwork(app.db, request.auth.actor, artworkFromPost(request.body));
    const { id, title, source_fingerprint, last_synced_at } = artwork;
    return reply.code(201).send({ id, title, source_fingerprint, created, last_synced_at });
  });

  app.post('/artworks/batch', route('artworks:write', 'postArtworks', batchSummary('artworks'), batchSchema('artworks', ARTWORK_EXAMPLE,
    'One result per item, in input order: 201 (written), 400 (invalid) or 409 (ambiguous).')), async (request) => ({
    results: await runBatch(app.db, request.body.items, validateArtwork, (item: ArtworkPostBody) => artworkFromPost(item),
      function* (input) {
        return written(yield* postArtworkWork(app.db, request.auth.actor, input));
      },
      {
        * many(inputs) {
          return (yield* postArtworksWork(app.db, request.auth.actor, inputs)).map(written);
        },
        * alone(inputs) {
          return (yield* postNewArtworksWork(app.db, request.auth.actor, inputs))?.map(written);
        },
      }),
  }));

  app.get('/artworks', route('artworks:read', 'listArtworks', 'List the artworks of the key\'s entity, by id (`page` or `after`)', {
    description: 'In id order. To read a whole catalog, start with `after=0` and pass each answer\'s `next_after` as `after` until `has_more` is false: a cursor page costs the same at any depth and never skips or repeats a record.',
    querystring: ArtworkListQuery,
    response: { 200: answer(ArtworkList, 'A page of artworks.', 'Link'), ...errors('bad_request', ...AUTHED) },
  }, { largeAnswer: true }), async (request, reply) => {
    const paging = pageRequest(request.query);
    const { json, ...listed } = await listArtworks(app.db, request.auth.entity.id, {
      ...paging, availability: request.query.availability, imageStatus: request.query.image_status,
    });
    // The page's JSON comes from the database (store/artworks.ts); test/api/list-json.test.ts holds it to the schema.
    const artworks = JSON.stringify(await presentRecords(app.db, app.config.publicBaseUrl, JSON.parse(json) as Array<{ image_url: string | null }>));
    const members = JSON.stringify(pageMembers(request, reply, paging, listed));
    return sendJsonText(reply, `{"artworks":${artworks},${members.slice(1)}`);
  });

  app.get('/artworks/:id', route('artworks:read', 'getArtwork', 'Get one artwork', {
    description: 'An artwork of another entity is not found (404), as one that does not exist.',
    params: IdParams, response: { 200: answer(Artwork, 'The artwork.'), ...errors('not_found', ...AUTHED) },
  }, { exists: (request) => recordExists(() => getArtwork(app.db, request.auth.entity.id, recordId(request.params as { id: string }))) }),
  async (request) => presentArtwork(app.db, app.config.publicBaseUrl, await getArtwork(app.db, request.auth.entity.id, recordId(request.params))));

  app.put('/artworks/:id', route('artworks:write', 'updateArtwork', 'Change fields of an artwork; null clears a field', {
    description: 'Only the fields sent change; `null` clears an optional field (`title` cannot be cleared). A change of title, artist_name or creation_year recomputes the fingerprint: 409 `duplicate` when another artwork has it.',
    params: IdParams, body: ArtworkPut,
    response: { 200: answer(Artwork, 'The whole artwork after the change.'), ...errors(...WITH_BODY, 'not_found', 'duplicate', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    const artwork = await updateArtwork(app.db, request.auth.actor, recordId(request.params), artworkFromPut(request.body));
    return presentArtwork(app.db, app.config.publicBaseUrl, toArtwork(artwork));
  });

  app.delete('/artworks/:id', route('artworks:write', 'deleteArtwork', 'Delete an artwork', {
    description: 'The changelog records the deletion (`action: delete`, each field\'s `new` null).',
    params: IdParams, response: { 200: answer(Deleted, 'The artwork is deleted.'), ...errors('not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    const id = recordId(request.params);
    await deleteArtwork(app.db, request.auth.actor, id);
    return { deleted: true as const, id };
  });
};

