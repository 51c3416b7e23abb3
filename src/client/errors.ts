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
  /** The system's error code when there is one: `ECONNREFUSED`, `ENOTFOUND`, `ECONNRESET`, … */
  readonly code: string | undefined;

  constructor(override readonly cause: unknown) {
    const code = systemCode(cause);
    super(`network error: ${describeCause(cause, code)}`);
    this.name = 'NetworkError';
    this.code = code;
  }
}

/** fetch reports "fetch failed"; the reason is a cause (or an AggregateError's errors) further down. */
function systemCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    current = current instanceof AggregateError ? current.errors[0] : current.cause;
  }
  return undefined;
}

function describeCause(cause: unknown, code: string | undefined): string {
  const innermost = (error: unknown): unknown => (error instanceof Error && error.cause instanceof Error ? innermost(error.cause) : error);
  const message = cause instanceof Error ? (innermost(cause) as Error).message || cause.message : String(cause);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}
