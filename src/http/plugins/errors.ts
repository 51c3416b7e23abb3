import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { chargeDeferredUnit } from './auth.js';
import fp from 'fastify-plugin';
import { ApiError, codeForStatus, invalidFields, type ErrorCode } from '../../domain/errors.js';
import { toFieldProblems } from '../../schemas/validator.js';

/** Fastify's own errors (body parsing, limits) mapped onto the catalog; a message only where it says more. */
const FASTIFY_CODES: Record<string, [ErrorCode, string?]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'The body is empty; send a JSON object.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'The body is not valid JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body.'],
};

/** Renders every failure as `{error, message, …}`; a 500 never shows its cause to the caller. */
export function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    // A path id that does not parse names no record: 404, as for an id that does not exist.
    if (error.validationContext === 'params') return new ApiError('not_found');
    return invalidFields(toFieldProblems(error.validation, error.validationContext ?? 'body'));
  }
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) return new ApiError(known[0], known[1]);
  if (error instanceof SyntaxError && /prototype/.test(error.message)) {
    return new ApiError('bad_request', 'The body contains a forbidden key (__proto__ or constructor.prototype).');
  }
  if (error instanceof SyntaxError) return new ApiError('bad_request', 'The body is not valid JSON.');
  const status = error.statusCode ?? 500;
  if (status >= 500) return new ApiError('internal_error');
  const code = codeForStatus(status) ?? 'bad_request';
  return new ApiError(code, code === 'bad_request' ? error.message : undefined);
}

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * No route for this method and URL: 405 with `Allow` when the path has routes for other methods, 404
 * when it has none. Costs a few router look-ups, on failed requests only.
 */
function noRoute(app: FastifyInstance, request: FastifyRequest): { error: ApiError; allow?: string } {
  const path = request.url.split('?', 1)[0]!;
  const allowed = METHODS.filter((method) => app.findRoute({ method, url: path }) !== null);
  if (allowed.length === 0) return { error: new ApiError('not_found', `No route ${request.method} ${path}.`) };
  return {
    error: new ApiError('method_not_allowed', `${request.method} is not allowed on ${path}; it allows ${allowed.join(', ')}.`),
    allow: allowed.join(', '),
  };
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // A conditional GET that fails (400, 404, 503, …) takes the unit it deferred; over the limit, the
    // 429 comes first, as docs/api.md, Authentication, orders the checks.
    let charged: Promise<void> | void;
    try {
      charged = chargeDeferredUnit(app, request, reply);
    } catch (limited) {
      return render(app, request, reply, limited as FastifyError);
    }
    if (charged) return charged.then(() => render(app, request, reply, error), (limited: FastifyError) => render(app, request, reply, limited));
    return render(app, request, reply, error);
  });
  app.setNotFoundHandler((request, reply) => {
    const { error, allow } = noRoute(app, request);
    if (allow) reply.header('allow', allow);
    reply.code(error.status).send(error.toBody());
  });
}

function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, error: FastifyError): FastifyReply {
  // An unknown route is a 404 (or 405) whatever its body: the body is parsed before the 404 handler runs.
  const unrouted = request.is404 ? noRoute(app, request) : undefined;
  if (unrouted?.allow) reply.header('allow', unrouted.allow);
  const apiError = unrouted?.error ?? toApiError(error);
  // A 503 is an outage of a dependency, logged where it is noticed; only a 500 is a defect here.
  if (apiError.status === 503) request.log.warn({ code: apiError.code, reason: apiError.message }, 'request answered 503');
  else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
  // 503 (and 429) tell the client when to come back, in the header as in the body.
  if (apiError.extras.retry_after !== undefined) reply.header('retry-after', apiError.extras.retry_after);
  return reply.code(apiError.status).type('application/json; charset=utf-8').send(apiError.toBody());
}

export default fp(errorsPlugin, { name: 'errors' });
