import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';

/**
 * Refuses a request that carries one of these headers more than once, with 400 naming it. Node keeps
 * the first of several `Authorization`, `Host` or `Content-Type` headers and joins several
 * `Idempotency-Key`s into "a, b"; a proxy in front may pick the last instead, so the two would
 * disagree on which key, host or media type was meant (RFC 9112 §3.2 requires the 400 for Host).
 * Counted on the raw headers, the only place the repeats are still visible.
 */
export function requireSingleHeader(request: FastifyRequest, ...labels: string[]): void {
  const label = repeatedHeader(request.raw.rawHeaders, labels);
  if (label === undefined) return;
  throw new ApiError('bad_request', `Send one ${label} header; this request has several.`, {
    details: [{ field: label, message: 'sent more than once' }],
  });
}

/** The first of `labels` that `raw` (a request's raw headers, name and value in turn) carries more than once. */
export function repeatedHeader(raw: readonly string[], labels: readonly string[]): string | undefined {
  for (const label of labels) {
    const name = label.toLowerCase();
    let seen = 0;
    for (let i = 0; i < raw.length; i += 2) {
      const header = raw[i]!;
      if (header.length === name.length && header.toLowerCase() === name && ++seen > 1) return label;
    }
  }
  return undefined;
}
