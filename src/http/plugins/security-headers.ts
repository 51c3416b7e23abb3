import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import helmet from 'helmet';

/** No inline scripts or styles anywhere; artwork images may come from any http(s) host. */
const CSP_DIRECTIVES = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'https:', 'http:', 'data:'],
  objectSrc: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  // The pages are also served over plain http (development, an internal network): keep their assets loading.
  upgradeInsecureRequests: null,
};

/**
 * helmet's headers on every response. The middleware is built once: helmet computes its header values
 * at construction, so each request only copies them (@fastify/helmet rebuilds it per request).
 */
async function securityHeaders(app: FastifyInstance): Promise<void> {
  const apply = helmet({ contentSecurityPolicy: { directives: CSP_DIRECTIVES } });
  app.addHook('onRequest', (request, reply, done) => {
    apply(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined));
  });
}

export default fp(securityHeaders, { name: 'security-headers' });
