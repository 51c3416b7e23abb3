import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { artworkFromPost, artworkFromPut } from '../../domain/artwork.js';
import {
  Artwork, ArtworkList, ArtworkListQuery, ArtworkPost, ARTWORK_EXAMPLE, ArtworkPostResult, ArtworkPut, Deleted, type ArtworkPostBody,
} from '../../schemas/artworks.js';
import { IdParams } from '../../schemas/common.js';
import {
  deleteArtwork, getArtwork, listArtworks, postArtwork, postArtworkWork, postArtworksWork, toArtwork, updateArtwork, type PostedArtwork,
} from '../../store/artworks.js';
import { BatchResponse, batchRequest } from '../../schemas/batch.js';
import { runBatch } from '../batch.js';
import { pageMembers, pageRequest } from '../pagination.js';
import { AUTHED, WITH_BODY, errors, recordId, sendJsonText } from '../responses.js';
import { compileBodyValidator } from '../../schemas/validator.js';

const tags = ['artworks'];

const validateArtwork = compileBodyValidator(ArtworkPost);

/** A batch item's result. */
const written = ({ artwork: { id, title, source_fingerprint, last_synced_at }, created, changed }: PostedArtwork) =>
  ({ id, title, source_fingerprint, created, changed, last_synced_at });

export const artworkRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/artworks', {
    config: { scope: 'artworks:write' },
    schema: {
      tags, summary: 'Create an artwork, or update the one with the same fingerprint',
      body: ArtworkPost,
      response: { 201: ArtworkPostResult, ...errors(...WITH_BODY, ...AUTHED, 409, 422) },
    },
  }, async (request, reply) => {
    const { artwork, created } = await postArtwork(app.db, request.auth.actor, artworkFromPost(request.body));
    const { id, title, source_fingerprint, last_synced_at } = artwork;
    return reply.code(201).send({ id, title, source_fingerprint, created, last_synced_at });
  });

  app.post('/artworks/batch', {
    config: { scope: 'artworks:write' },
    schema: {
      tags, summary: 'Post up to 100 artworks in one request (one rate-limit unit)',
      body: batchRequest('POST /v1/artworks', ARTWORK_EXAMPLE),
      response: { 200: BatchResponse, ...errors(...WITH_BODY, ...AUTHED, 409, 422) },
    },
  }, async (request) => ({
    results: await runBatch(app.db, request.body.items, validateArtwork, (item: ArtworkPostBody) => artworkFromPost(item),
      function* (input) {
        return written(yield* postArtworkWork(app.db, request.auth.actor, input));
      },
      function* (inputs) {
        return (yield* postArtworksWork(app.db, request.auth.actor, inputs)).map(written);
      }),
  }));

  app.get('/artworks', {
    config: { scope: 'artworks:read' },
    schema: {
      tags, summary: 'List the artworks of the key\'s entity, by id (`page` or `after`)',
      querystring: ArtworkListQuery,
      response: { 200: ArtworkList, ...errors(400, ...AUTHED) },
    },
  }, async (request, reply) => {
    const paging = pageRequest(request.query);
    const { json, ...listed } = await listArtworks(app.db, request.auth.entity.id, { ...paging, availability: request.query.availability });
    // The page's JSON comes from the database (store/artworks.ts); test/list-json.test.ts holds it to the schema.
    const members = JSON.stringify(pageMembers(request, reply, paging, listed));
    return sendJsonText(reply, `{"artworks":${json},${members.slice(1)}`);
  });

  app.get('/artworks/:id', {
    config: { scope: 'artworks:read' },
    schema: { tags, summary: 'Get one artwork', params: IdParams, response: { 200: Artwork, ...errors(404, ...AUTHED) } },
  }, async (request) => getArtwork(app.db, request.auth.entity.id, recordId(request.params)));

  app.put('/artworks/:id', {
    config: { scope: 'artworks:write' },
    schema: {
      tags, summary: 'Change fields of an artwork; null clears a field',
      params: IdParams, body: ArtworkPut,
      response: { 200: Artwork, ...errors(...WITH_BODY, 404, 409, 422, ...AUTHED) },
    },
  }, async (request) => {
    const artwork = await updateArtwork(app.db, request.auth.actor, recordId(request.params), artworkFromPut(request.body));
    return toArtwork(artwork);
  });

  app.delete('/artworks/:id', {
    config: { scope: 'artworks:write' },
    schema: { tags, summary: 'Delete an artwork', params: IdParams, response: { 200: Deleted, ...errors(404, 409, 422, ...AUTHED) } },
  }, async (request) => {
    const id = recordId(request.params);
    await deleteArtwork(app.db, request.auth.actor, id);
    return { deleted: true as const, id };
  });
};

