import type { FieldProblem } from '../schemas/common.js';

/** Response headers an error answer carries besides the ones every answer has. */
export type ErrorHeader = 'Allow' | 'Retry-After' | 'WWW-Authenticate';

interface CatalogEntry {
  status: number;
  /** The default `message` of the body. */
  message: string;
  /** When the code is answered: the text of the OpenAPI document and of docs/api.md. */
  description: string;
  headers?: readonly ErrorHeader[];
}

/**
 * The one catalog of error codes the API answers with (docs/api.md, Errors, plus
 * 405/408/431): the HTTP layer, the OpenAPI document and docs/api.md are derived from it, and
 * test/unit/error-catalog.test.ts holds it to the contract. Everything that fails a request throws an
 * ApiError; one error handler renders it.
 */
export const ERROR_CATALOG = {
  bad_request: {
    status: 400, message: 'The request is invalid.',
    description: 'Invalid JSON, a missing, unknown or invalid field, an invalid query parameter, or a header that may be sent once (`Authorization`, `Idempotency-Key`) sent several times; `details` names each field.',
  },
  unauthorized: {
    status: 401, message: 'A valid API key is required.',
    description: 'The Authorization header is missing, or the key is malformed, expired or revoked.',
    headers: ['WWW-Authenticate'],
  },
  forbidden: {
    status: 403, message: 'This key may not do that.',
    description: 'The key lacks the scope the endpoint needs (the message names it), or the account is paused.',
    headers: ['WWW-Authenticate'],
  },
  not_found: {
    status: 404, message: 'Not found.',
    description: 'No such route, or no such record among the key\'s entity\'s records (another entity\'s records are not found either).',
  },
  method_not_allowed: {
    status: 405, message: 'This method is not allowed on this path.',
    description: 'The path exists but not with this method; `Allow` lists the methods it has.',
    headers: ['Allow'],
  },
  request_timeout: {
    status: 408, message: 'The request did not arrive in time.',
    description: 'The headers or the body arrived too slowly; the connection is closed.',
  },
  duplicate: {
    status: 409, message: 'Another record already has this fingerprint.',
    description: 'A PUT would give the record the fingerprint, event slug or `external_id` of another record; `existing_id` names it.',
  },
  ambiguous: {
    status: 409, message: 'Several records match: say which one (external_id).',
    description: 'A POST without `external_id` matches several artworks with the same fingerprint; `candidates` lists them.',
  },
  conflict: {
    status: 409, message: 'This cannot be done in the state the record is in now.',
    description: 'The request does not fit the current state: a feed run\'s deletions already confirmed, or a later run of the feed has since ended `applied` or `needs_attention`; an undo of a run that is queued or running, undone already (`undone_by` names the undo), itself an undo, or older than `TRASH_DAYS`; the message says which.',
  },
  idempotency_conflict: {
    status: 409, message: 'A request with this Idempotency-Key is still being processed.',
    description: 'A request with the same Idempotency-Key is still running; retry once it has answered.',
  },
  payload_too_large: {
    status: 413, message: 'The request body is larger than 1 MiB.',
    description: 'The body is larger than 1 MiB.',
  },
  unsupported_media_type: {
    status: 415, message: 'Request bodies must be sent with Content-Type: application/json.',
    description: 'A body was sent with a Content-Type other than application/json.',
  },
  idempotency_key_reused: {
    status: 422, message: 'This Idempotency-Key was used with a different request.',
    description: 'The Idempotency-Key was used before with another method, path or body.',
  },
  rate_limited: {
    status: 429, message: 'Rate limit exceeded.',
    description: 'The key\'s requests per window are used up: wait `retry_after` seconds (also in `Retry-After`).',
    headers: ['Retry-After'],
  },
  headers_too_large: {
    status: 431, message: 'The request headers are too large.',
    description: 'The request headers are larger than 16 KiB.',
  },
  internal_error: {
    status: 500, message: 'Internal server error.',
    description: 'A failure on the server; its cause is logged, never sent. A retry with the same Idempotency-Key is safe.',
  },
  service_unavailable: {
    status: 503, message: 'The service is not available right now.',
    description: 'A dependency (database, Redis) is briefly unavailable, the server is shutting down, or (on list routes) answers not yet read by their clients hold more memory than the server allows: retry after `retry_after` seconds (also in `Retry-After`).',
    headers: ['Retry-After'],
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export type { FieldProblem };

/** Extra members some errors carry in their body: `details` (400), `retry_after` (429), `existing_id`, `candidates` and `undone_by` (409). */
export interface ErrorExtras {
  details?: FieldProblem[];
  retry_after?: number;
  existing_id?: number;
  candidates?: number[];
  undone_by?: number;
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

/** The one code answered with `status`, when exactly one code has it (a generic 409 has none). */
export function codeForStatus(status: number): ErrorCode | undefined {
  const codes = (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((code) => ERROR_CATALOG[code].status === status);
  return codes.length === 1 ? codes[0] : undefined;
}

export const notFound = (what = 'Resource') => new ApiError('not_found', `${what} not found.`);

/** A 400 naming each problem field; the message summarises them so a human sees the cause at once. */
export function invalidFields(details: FieldProblem[]): ApiError {
  const summary = details.map((d) => (d.field ? `${d.field}: ${d.message}` : d.message)).join('; ');
  return new ApiError('bad_request', `Invalid request: ${summary}`, { details });
}
