import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import Type from 'typebox';
import { ErrorBody } from '../../schemas/common.js';

/** Something the service cannot answer without; `/healthz` asks each one. */
export interface Dependency {
  name: 'database' | 'redis';
  /** Resolves when the dependency answers a trivial request; rejects (or hangs) otherwise. */
  check(): Promise<unknown>;
}

declare module 'fastify' {
  interface FastifyInstance {
    dependencies: Dependency[];
  }
}

/** A probe still waiting after this counts as failing: /healthz itself answers within a second. */
const CHECK_DEADLINE_MS = 800;

async function answers(dependency: Dependency): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => { timer = setTimeout(() => resolve(false), CHECK_DEADLINE_MS); });
  try {
    return await Promise.race([dependency.check().then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** GET /healthz (decisions §9): 200 when every dependency answers, else 503 naming those that do not. */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      tags: ['operations'], summary: 'Liveness and reachability of the database (and Redis, when configured)',
      response: {
        200: Type.Object({ status: Type.Literal('ok') }),
        // A dependency down, or (in the error shape) the server shutting down.
        503: Type.Union([
          Type.Object({
            status: Type.Literal('unavailable'),
            failing: Type.Array(Type.Union([Type.Literal('database'), Type.Literal('redis')]), { description: 'The dependencies that do not answer.' }),
          }),
          ErrorBody,
        ], { description: 'A dependency does not answer, or the server is stopping (Retry-After: 1).' }),
      },
    },
  }, async (_request, reply) => {
    const results = await Promise.all(app.dependencies.map(answers));
    const failing = app.dependencies.filter((_, i) => !results[i]).map((d) => d.name);
    if (failing.length === 0) return { status: 'ok' as const };
    return reply.code(503).header('retry-after', 1).send({ status: 'unavailable' as const, failing });
  });
};
