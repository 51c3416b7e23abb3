import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { ApiError } from '../../domain/errors.js';
import { Health } from '../../schemas/operations.js';
import { answer, errors } from '../responses.js';

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      operationId: 'health', tags: ['operations'], summary: 'Liveness and database reachability',
      description: 'No key needed. For load balancers and orchestrators.',
      response: { 200: answer(Health, 'The service and its database answer.'), ...errors('service_unavailable') },
    },
  }, async () => {
    try {
      await sql`select 1`.execute(app.db);
    } catch {
      throw new ApiError('service_unavailable', 'The database does not answer.');
    }
    return { status: 'ok' as const };
  });
};
