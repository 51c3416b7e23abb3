import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Readable } from 'node:stream';
import { ApiError, notFound } from '../../domain/errors.js';
import { CONTENT_TYPES, derivativeFormat } from '../../images/derive.js';
import type { ImageStore } from '../../images/store/index.js';
import { Ref } from '../../schemas/common.js';
import { ImageBytes, ImageParams } from '../../schemas/images.js';
import { addressRateLimit } from '../../http-common/rate-limit.js';
import { ifNoneMatch } from '../../http-common/if-none-match.js';
import { errors } from '../protocol/responses.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Where image derivatives are kept (IMAGE_STORE). */
    imageStore: ImageStore;
  }
}

/** A name stands for one content forever (the SHA-256 of the original is in it): cache it for a year. */
const CACHE_CONTROL = 'public, max-age=31536000, immutable';

const IMAGE_HEADERS = {
  ETag: { type: 'string', description: 'The image\'s name in quotes: send it back in `If-None-Match` for a 304.' },
  'Cache-Control': { type: 'string', enum: [CACHE_CONTROL], description: 'The image behind a name never changes.' },
};

/**
 * GET and HEAD /images/:name (docs/api.md, Images): a derivative from the image store, keyless and rate
 * limited per address like the public pages. The ETag is the name, so a 304 needs no store lookup;
 * the body is streamed from the store and never compressed (the formats are compressed already).
 */
export const imageRoutes: FastifyPluginAsyncTypebox = async (app) => {
  addressRateLimit(app, app.config.publicRateLimit, app.config.rateLimitWindowS * 1000, 'img');

  const named = (reply: FastifyReply, etag: string) =>
    reply.header('etag', etag).header('cache-control', CACHE_CONTROL)
      // Galleries may show our copies on their own sites: other origins may embed them.
      .header('cross-origin-resource-policy', 'cross-origin');

  app.get('/images/:name', {
    schema: {
      operationId: 'getImage', tags: ['images'], summary: 'An image derivative (AVIF, WebP or JPEG at 480, 960 or 1600 px)',
      description: 'No key needed; the URLs are those of `image.src` and `image.srcset` in artworks and events. Immutable: cached for a year, `ETag` and `If-None-Match` (304) supported, HEAD too. Limited per client address like the public pages (`PUBLIC_RATE_LIMIT`, counted apart from them).',
      params: ImageParams,
      response: {
        200: {
          description: 'The image, in the format its name\'s extension says.',
          headers: IMAGE_HEADERS,
          content: Object.fromEntries(Object.values(CONTENT_TYPES).map((type) => [type, { schema: Ref(ImageBytes) }])),
        },
        304: { type: 'null', description: 'The `If-None-Match` names this image: the copy the client holds is current.', headers: IMAGE_HEADERS },
        ...errors('not_found', 'rate_limited', 'internal_error', 'service_unavailable'),
      },
    },
  }, async (request, reply) => {
    const { name } = request.params;
    if (!derivativeFormat(name)) throw notFound('Image');
    const etag = `"${name}"`;
    // The name is the content: its own ETag needs no lookup; `*` matches only an image that exists.
    const match = ifNoneMatch(request.headers['if-none-match'], etag);
    if (match === 'etag') return named(reply, etag).code(304).send();
    const unavailable = (error: unknown): never => {
      request.log.error({ err: error }, 'image store did not answer');
      throw new ApiError('service_unavailable', 'The image store is not available right now.', { retry_after: 5 });
    };
    // HEAD and `If-None-Match: *` need only to know the image exists: its bytes are not read (on S3 a
    // HeadObject, not a GET whose body would be transferred and thrown away).
    if (request.method === 'HEAD' || match === 'any') {
      const info = await app.imageStore.head(name).catch(unavailable);
      if (!info) throw notFound('Image');
      if (match === 'any') return named(reply, etag).code(304).send();
      return named(reply, etag).type(info.contentType).header('content-length', info.size).send(Readable.from([]));
    }
    const image = await app.imageStore.get(name).catch(unavailable);
    if (!image) throw notFound('Image');
    return named(reply, etag).type(image.contentType).header('content-length', image.size).send(image.body);
  });
};
