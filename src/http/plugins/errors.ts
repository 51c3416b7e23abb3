import type { FastifyError, FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, invalidFields, type ErrorCode } from '../../domain/errors.js';
import { toFieldProblems } from '../../schemas/validator.js';

/** Fastify's own errors (body parsing, limits) mapped onto the catalog. */
const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Request bodies must be sent with Content-Type: application/json.'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'The request body is larger than 1 MiB.'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['bad_request', 'The body is empty; send a JSON object.'],
  FST_ERR_CTP_INVALID_JSON_BODY: ['bad_request', 'The body is not valid JSON.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['bad_request', 'Content-Length does not match the body.'],
};

const BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 405: 'method_not_allowed',
  408: 'request_timeout', 413: 'payload_too_large', 415: 'unsupported_media_type', 429: 'rate_limited',
  431: 'headers_too_large',
};

/** Renders every failure as `{error, message, …}`; a 500 never shows its cause to the caller. */
export function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    // A path id that does not parse names no record: 404, as for an id that does not exist.
    if (error.validationContext === 'params') return new ApiError('not_found', 'Not found.');
    return invalidFields(toFieldProblems(error.validation, error.validationContext ?? 'body'));
  }
  const known = error.code ? FASTIFY_CODES[error.code] : undefined;
  if (known) return new ApiError(known[0], known[1]);
  if (error instanceof SyntaxError && /prototype/.test(error.message)) {
    return new ApiError('bad_request', 'The body contains a forbidden key (__proto__ or constructor.prototype).');
  }
  if (error instanceof SyntaxError) return new ApiError('bad_request', 'The body is not valid JSON.');
  const status = error.statusCode ?? 500;
  const code = BY_STATUS[status];
  if (code) return new ApiError(code, status === 400 ? error.message : undefined);
  if (status >= 400 && status < 500) return new ApiError('bad_request', error.message);
  return new ApiError('internal_error');
}

async function errorsPlugin(app: FastifyInstance): Promise<void> {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // An unknown route is a 404 whatever its body: the body is parsed before the 404 handler runs.
    const apiError = request.is404 ? new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`) : toApiError(error);
    // A 503 is an outage of a dependency, logged where it is noticed; only a 500 is a defect here.
    if (apiError.status === 503) request.log.warn({ code: apiError.code, reason: apiError.message }, 'request answered 503');
    else if (apiError.status >= 500) request.log.error({ err: error }, 'request failed');
    // 503 (and 429) tell the client when to come back, in the header as in the body.
    if (apiError.extras.retry_after !== undefined) reply.header('retry-after', apiError.extras.retry_after);
    return reply.code(apiError.status).type('application/json; charset=utf-8').send(apiError.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`).toBody());
  });
}

export default fp(errorsPlugin, { name: 'errors' });
