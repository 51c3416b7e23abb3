import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../../domain/errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Whether close() has begun: answers outside Fastify's hooks (fast-not-modified.ts) leave these requests to it. */
    isClosing(): boolean;
  }
}

/**
 * Graceful stop (docs/operations.md, Failure, shutdown and slow clients), the app's half; `serve` adds the signals and the deadline. From the
 * moment `close()` starts: every answer, in flight or not, carries `Connection: close`, so no keep-alive
 * client holds its socket (and the process) open; a request that arrives meanwhile on an open
 * connection gets 503 in the contract's error shape. Fastify stops accepting connections and closes the
 * idle ones itself.
 */
async function shutdownPlugin(app: FastifyInstance): Promise<void> {
  let closing = false;
  app.decorate('isClosing', () => closing);
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    if (closing) return done(new ApiError('service_unavailable', 'The server is shutting down; try again.', { retry_after: 1 }));
    done();
  });
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
}

export default fp(shutdownPlugin, { name: 'shutdown' });
