import type { ErrorBodyType } from '../schemas/common.js';

/** An error answer of the service, with the fields of its body. */
export class ApiClientError extends Error {
  readonly status: number;
  readonly error: string;
  readonly details: { field: string; message: string }[] | undefined;
  readonly retryAfter: number | undefined;
  readonly existingId: number | undefined;

  constructor(status: number, body: Partial<ErrorBodyType> | undefined) {
    super(body?.message ?? `HTTP ${status}`);
    this.name = 'ApiClientError';
    this.status = status;
    this.error = body?.error ?? (status >= 500 ? 'internal_error' : 'unknown_error');
    this.details = body?.details;
    this.retryAfter = body?.retry_after;
    this.existingId = body?.existing_id;
  }
}

/** The service could not be reached, or the connection broke before an answer. */
export class NetworkError extends Error {
  constructor(override readonly cause: unknown) {
    super(`network error: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'NetworkError';
  }
}
