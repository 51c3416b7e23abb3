import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema } from 'fastify';
import fp from 'fastify-plugin';
import { COMPONENTS } from '../../schemas/components.js';
import { headerSchemas, type HeaderName } from '../protocol/responses.js';

const DESCRIPTION = `Keep a gallery's or an artist's catalog on the Art Catalog platform up to date: artworks, events,
the profile, and a changelog of every API write to poll.

Every \`/v1\` endpoint needs \`Authorization: Bearer <API key>\`; each key is bound to one gallery or artist
and sees only its data. Errors are \`{"error", "message"}\` (plus \`details\` for invalid fields,
\`retry_after\` on 429 and 503, \`existing_id\` or \`candidates\` on 409). POST, PUT and DELETE accept an
\`Idempotency-Key\` header. Every answer carries \`X-Request-Id\`. The guide for integrators is docs/api.md
in the repository.`;

const IDEMPOTENCY_HEADER = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$',
      description: 'Replays the first answer for the same key and body for 24 h (with `Idempotent-Replayed: true`); 422 for another body, 409 while the first runs.',
    },
  },
};

const RATE_LIMIT: HeaderName[] = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

const IF_NONE_MATCH_HEADER = {
  type: 'object',
  properties: {
    'if-none-match': {
      type: 'string',
      description: 'The ETag of an earlier answer (or a list of tags, or `*`): 304 without a body when the answer is unchanged; a 304 takes no rate-limit unit.',
    },
  },
};

/** Keyed GETs (docs/api.md, Conditional requests): the 200 carries ETag and Cache-Control; a matching If-None-Match gets 304. */
function conditional(response: Record<string, Response>): Record<string, Response> {
  const ok = response['200'];
  if (!ok) return response;
  return {
    ...response,
    200: { ...ok, headers: { ...ok.headers, ...headerSchemas(['ETag', 'Cache-Control']) } },
    304: {
      description: 'Not modified: the If-None-Match tag is the current one. No body; no rate-limit unit was taken (the X-RateLimit headers show the state).',
      headers: headerSchemas(['ETag', 'Cache-Control']),
    },
  };
}

type Response = { description?: string; headers?: Record<string, unknown> };

/**
 * The headers that hooks add to answers, documented on each response of the routes they run on:
 * X-Request-Id on all; the rate-limit headers on every answer to a known key (so not on a 401);
 * Idempotent-Replayed on the answers of writes, which a replay repeats.
 */
function withHookHeaders(response: Record<string, Response>, keyed: boolean, writes: boolean): Record<string, Response> {
  return Object.fromEntries(Object.entries(response).map(([status, answer]) => {
    const names: HeaderName[] = ['X-Request-Id'];
    if (keyed && status !== '401') names.push(...RATE_LIMIT);
    if (writes && status !== '401' && Number(status) < 500 && status !== '429') names.push('Idempotent-Replayed');
    return [status, { ...answer, headers: { ...headerSchemas(names), ...answer.headers } }];
  }));
}

/**
 * A query parameter with a default need not be sent: Ajv fills it in, so the schema lists it as
 * required (handlers always see it), but the document must not ask clients for it.
 */
function optionalDefaults(query: unknown): unknown {
  const { required, properties } = query as { required?: string[]; properties?: Record<string, { default?: unknown }> };
  if (!required || !properties) return query;
  return { ...(query as object), required: required.filter((name) => properties[name]?.default === undefined) };
}

/**
 * The OpenAPI 3.1 document, generated from the route schemas that also validate requests and serialize
 * answers: served as /v1/openapi.json and browsable at /docs (Swagger UI from its npm package, no CDN).
 * The named models are shared schemas, so the document refers to them as components by their `$id`.
 */
async function openapiPlugin(app: FastifyInstance): Promise<void> {
  for (const model of COMPONENTS) app.addSchema(model);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Art Catalog Service API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: app.config.publicBaseUrl }],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http', scheme: 'bearer', bearerFormat: 'ak_live_ followed by 32 letters and digits',
            description: 'An API key, bound to one gallery or artist; its scopes decide what it may do. The operator issues keys (`art-catalog key create`).',
          },
        },
      },
      tags: [
        { name: 'artworks', description: 'The catalog of artworks, matched by fingerprint or external_id.' },
        { name: 'events', description: 'Exhibitions, openings, talks; matched by slug.' },
        { name: 'profile', description: 'The gallery or artist profile of the key\'s entity.' },
        { name: 'changelog', description: 'Every API write, to poll; the sync status.' },
        { name: 'feeds', description: 'Files at URLs the gallery already publishes, applied on a schedule like the console\'s Import.' },
        { name: 'trash', description: 'Deleted artworks and events, kept TRASH_DAYS (30) days: restore them, or remove them for good.' },
        { name: 'keys', description: 'The calling key.' },
        { name: 'operations', description: 'Health of the service (no key).' },
        { name: 'images', description: 'The platform\'s copies of artwork and event images (no key).' },
      ],
    },
    // Components are named by their $id (the default names them def-0, def-1, …).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    transform: ({ schema, url, route }) => {
      // A route declared without any schema (none of the API's) is listed as it is.
      if (!schema) return { schema, url };
      const scope = route.config?.scope;
      const keyed = scope !== undefined;
      const methods = ([] as string[]).concat(route.method);
      const writes = keyed && methods.some((m) => m === 'POST' || m === 'PUT' || m === 'DELETE');
      const reads = keyed && methods.includes('GET');
      const declared = schema.response as Record<string, Response> | undefined;
      const response = declared ? withHookHeaders(reads ? conditional(declared) : declared, keyed, writes) : undefined;
      const transformed: FastifySchema = {
        ...schema,
        ...(response ? { response } : {}),
        ...(schema.querystring ? { querystring: optionalDefaults(schema.querystring) } : {}),
      };
      // A keyless route says so: an empty security list, not an absent one that tools read as "unknown".
      if (!keyed) return { schema: { ...transformed, security: [] }, url };
      return {
        schema: {
          ...transformed,
          ...(writes ? { headers: IDEMPOTENCY_HEADER } : {}),
          ...(reads ? { headers: IF_NONE_MATCH_HEADER } : {}),
          security: [{ bearerAuth: [] }],
          description: `${schema.description ?? ''}${schema.description ? '\n\n' : ''}Scope: ${scope === null ? 'any valid key' : scope}.`,
        },
        url,
      };
    },
  });
}

/** Registers the document route and the reference page; call after every route is registered. */
export async function registerOpenapiRoutes(app: FastifyInstance): Promise<void> {
  // Public and keyless, so API tools on other origins may load it (CORS *).
  app.get('/v1/openapi.json', { schema: { hide: true } }, async (_request, reply) =>
    // The base URL as of now: with PORT=0 it names the port bound after the document was set up.
    reply.header('access-control-allow-origin', '*').send({ ...app.swagger(), servers: [{ url: app.config.publicBaseUrl }] }));
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0 },
  });
}

export default fp(openapiPlugin, { name: 'openapi' });
