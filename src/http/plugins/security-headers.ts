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

/** The one security header of API answers (see below). */
export const API_ANSWER_HEADERS = { 'x-content-type-options': 'nosniff' } as const;

/**
 * helmet's headers on documents (pages, feeds, /docs). The middleware is built once: helmet computes
 * its header values at construction (@fastify/helmet rebuilds it per request). JSON answers of the API
 * get only nosniff: CSP, frame and referrer policies govern documents a browser renders, and a kilobyte
 * of them on every API answer costs throughput for nothing.
 */
async function securityHeaders(app: FastifyInstance): Promise<void> {
  const apply = helmet({
    contentSecurityPolicy: { directives: CSP_DIRECTIVES },
    // HSTS only where the public address is https: RFC 6797 §7.2 forbids it over plain http.
    strictTransportSecurity: app.config.publicBaseUrl.startsWith('https:') ? {} : false,
  });
  app.addHook('onRequest', (request, reply, done) => {
    // Images are not documents either.
    if ((request.url.startsWith('/v1/') && !request.url.startsWith('/v1/openapi.json')) || request.url.startsWith('/images/')) {
      reply.headers(API_ANSWER_HEADERS);
      return done();
    }
    apply(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined));
  });
}

export default fp(securityHeaders, { name: 'security-headers' });
