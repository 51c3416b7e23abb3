import type { FieldProblem } from '../schemas/common.js';

/**
 * The one catalog of error codes the API answers with (interface.md "Errors", decisions §3 and §8).
 * Everything that fails a request throws an ApiError; one error handler renders it.
 */
export const ERROR_CATALOG = {
  bad_request: { status: 400, message: 'The request is invalid.' },
  unauthorized: { status: 401, message: 'A valid API key is required.' },
  forbidden: { status: 403, message: 'This key may not do that.' },
  not_found: { status: 404, message: 'Not found.' },
  duplicate: { status: 409, message: 'Another record already has this fingerprint.' },
  ambiguous: { status: 409, message: 'Several records match: say which one (external_id).' },
  idempotency_conflict: { status: 409, message: 'A request with this Idempotency-Key is still being processed.' },
  method_not_allowed: { status: 405, message: 'This method is not allowed on this resource.' },
  request_timeout: { status: 408, message: 'The request did not arrive in time.' },
  payload_too_large: { status: 413, message: 'The request body is larger than 1 MiB.' },
  unsupported_media_type: { status: 415, message: 'Request bodies must be sent as application/json.' },
  idempotency_key_reused: { status: 422, message: 'This Idempotency-Key was used with a different request.' },
  rate_limited: { status: 429, message: 'Rate limit exceeded.' },
  headers_too_large: { status: 431, message: 'The request headers are larger than 16 KiB.' },
  internal_error: { status: 500, message: 'Internal server error.' },
  service_unavailable: { status: 503, message: 'The service is not available right now.' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export type { FieldProblem };

/** Extra members some errors carry in their body: `details` (400), `retry_after` (429), `existing_id` and `candidates` (409). */
export interface ErrorExtras {
  details?: FieldProblem[];
  retry_after?: number;
  existing_id?: number;
  candidates?: number[];
}

export class ApiError extends Error {
  readonly status: number;

  constructor(readonly code: ErrorCode, message?: string, readonly extras: ErrorExtras = {}) {
    super(message ?? ERROR_CATALOG[code].message);
    this.name = 'ApiError';
    this.status = ERROR_CATALOG[code].status;
  }

  toBody(): { error: ErrorCode; message: string } & ErrorExtras {
    return { error: this.code, message: this.message, ...this.extras };
  }
}

/**
 * An input a rule refuses (a 400, or a 409 `ambiguous` match): in a batch it fails its own item, not
 * the batch.
 */
export const isRefusal = (error: unknown): error is ApiError =>
  error instanceof ApiError && (error.status === 400 || error.code === 'ambiguous');

export const notFound = (what = 'Resource') => new ApiError('not_found', `${what} not found.`);

/** A 400 naming each problem field; the message summarises them so a human sees the cause at once. */
export function invalidFields(details: FieldProblem[]): ApiError {
  const summary = details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ');
  return new ApiError('bad_request', `Invalid request: ${summary}`, { details });
}
