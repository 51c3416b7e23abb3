import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** A request id the caller may choose: short, and nothing that could forge a log line or a header. */
const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Fastify's `genReqId`: the request's own X-Request-Id when it is sane (a proxy or the client chose it,
 * to find this request in our logs), else a new UUID. Fastify puts it in every log line of the
 * request (`reqId`); the plugin below sends it back.
 */
export function requestId(request: IncomingMessage): string {
  const sent = request.headers['x-request-id'];
  return typeof sent === 'string' && SANE_ID.test(sent) ? sent : randomUUID();
}

/** X-Request-Id on every answer, errors and 404s included. */
async function requestIdPlugin(app: FastifyInstance): Promise<void> {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
}

export default fp(requestIdPlugin, { name: 'request-id' });
