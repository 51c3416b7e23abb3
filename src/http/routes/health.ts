import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { sql } from 'kysely';
import { ApiError } from '../../domain/errors.js';
import { errors } from '../responses.js';

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'], summary: 'Liveness and database reachability',
      response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errors(503) },
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
