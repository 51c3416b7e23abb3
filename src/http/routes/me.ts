import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Me } from '../../schemas/me.js';
import { AUTHED, answer, errors } from '../responses.js';

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', {
    config: { scope: null },
    schema: {
      operationId: 'me', tags: ['keys'], summary: 'The calling key: its entity, tier, scopes and rate-limit state',
      description: 'Any valid key may call it, whatever its scopes: a way to check a key.',
      response: { 200: answer(Me, 'The key and its entity.'), ...errors(...AUTHED) },
    },
  }, async ({ auth }) => ({
    entity: { id: auth.entity.id, type: auth.entity.type, name: auth.entity.name, slug: auth.entity.slug },
    key: {
      prefix: auth.key.prefix, tier: auth.key.tier, scopes: auth.scopes,
      expires_at: auth.key.expires_at, created_at: auth.key.created_at,
    },
    rate_limit: { limit: auth.rateLimit.limit, remaining: auth.rateLimit.remaining, reset: auth.rateLimit.reset },
  }));
};
