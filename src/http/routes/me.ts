import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Me } from '../../schemas/me.js';
import type { AuthContext } from '../plugins/auth.js';
import { AUTHED, answer, errors, routesTagged } from '../protocol/responses.js';

const route = routesTagged('keys');

export const meRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/me', route(null, 'me', 'The calling key: its entity, tier, scopes and rate-limit state', {
    description: 'Any valid key may call it, whatever its scopes: a way to check a key.',
    response: { 200: answer(Me, 'The key and its entity.'), ...errors(...AUTHED) },
  }, {
    // Its rate_limit changes with every counted request: tagged by its content (the state before
    // this request's unit for If-None-Match, after it for the answer), so a 304 means "still true".
    keyAnswer: ({ auth }) => me(auth),
  }), async ({ auth }) => me(auth));
};

const me = (auth: AuthContext) => ({
  entity: { id: auth.entity.id, type: auth.entity.type, name: auth.entity.name, slug: auth.entity.slug, default_currency: auth.entity.default_currency },
  key: {
    prefix: auth.key.prefix, tier: auth.key.tier, scopes: auth.scopes,
    expires_at: auth.key.expires_at, created_at: auth.key.created_at,
  },
  rate_limit: { limit: auth.rateLimit.limit, remaining: auth.rateLimit.remaining, reset: auth.rateLimit.reset },
});
