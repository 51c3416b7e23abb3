import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Health, HealthUnavailable } from '../../schemas/operations.js';
import { answer } from '../protocol/responses.js';

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

/** GET /healthz (docs/operations.md, Health, metrics and logs): 200 when every dependency answers, else 503 naming those that do not. */
export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/healthz', {
    schema: {
      operationId: 'health', tags: ['operations'], summary: 'Liveness and reachability of the database (and Redis, when configured)',
      description: 'No key needed. For load balancers and orchestrators.',
      response: {
        200: answer(Health, 'The service and every dependency answer.'),
        503: answer(HealthUnavailable, 'A dependency does not answer (`failing` names it), or the server is stopping (the Error model).', 'Retry-After'),
      },
    },
  }, async (_request, reply) => {
    const results = await Promise.all(app.dependencies.map(answers));
    const failing = app.dependencies.filter((_, i) => !results[i]).map((d) => d.name);
    if (failing.length === 0) return { status: 'ok' as const };
    return reply.code(503).header('retry-after', 1).send({ status: 'unavailable' as const, failing });
  });
};
