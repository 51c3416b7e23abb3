import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

const DESCRIPTION = `Keep a gallery's or an artist's catalog on the Art Catalog platform up to date.

Every \`/v1\` endpoint needs \`Authorization: Bearer <API key>\`; each key is bound to one gallery or artist
and sees only its data. Errors are \`{"error", "message"}\` (plus \`details\` for invalid fields,
\`retry_after\` on 429). POST, PUT and DELETE accept an \`Idempotency-Key\` header.`;

const IDEMPOTENCY_HEADER = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$',
      description: 'Replays the first answer for the same key and body for 24 h; 422 for another body, 409 while the first runs.',
    },
  },
};

/**
 * The OpenAPI 3.1 document, generated from the route schemas that also validate requests: served as
 * /v1/openapi.json and browsable at /docs (Swagger UI from its npm package, no CDN).
 */
async function openapiPlugin(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Art Catalog Service API', version: '1.0.0', description: DESCRIPTION },
      servers: [{ url: app.config.publicBaseUrl }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key, ak_live_ followed by 32 characters.' } },
      },
      tags: [
        { name: 'artworks' }, { name: 'events' }, { name: 'profile' }, { name: 'changelog' },
        { name: 'keys' }, { name: 'operations' },
      ],
    },
    transform: ({ schema, url, route }) => {
      const scope = route.config?.scope;
      if (scope === undefined) return { schema, url };
      const methods = ([] as string[]).concat(route.method);
      const writes = methods.some((m) => m === 'POST' || m === 'PUT' || m === 'DELETE');
      return {
        schema: {
          ...schema,
          ...(writes ? { headers: IDEMPOTENCY_HEADER } : {}),
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
    reply.header('access-control-allow-origin', '*').send(app.swagger()));
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: true,
    uiConfig: { docExpansion: 'list', deepLinking: true, defaultModelsExpandDepth: 0 },
  });
}

export default fp(openapiPlugin, { name: 'openapi' });
