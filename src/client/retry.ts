/**
 * When to try a request again, decided in one pure function (docs/api.md, Retries and idempotency): a 429 waits the server's
 * `retry_after`; a 5xx, a network failure or an idempotency conflict backs off exponentially with full
 * jitter. Every retry of a write carries the same Idempotency-Key, so nothing is written twice.
 */
export interface RetryPolicy {
  /** Attempts in all for 5xx, network errors and conflicts; default 5. */
  maxAttempts: number;
  /** How many 429 waits one call accepts before giving up; default 50. */
  maxRateLimitWaits: number;
  /** First backoff step in milliseconds; default 250. */
  baseDelayMs: number;
  /** Longest backoff in milliseconds; default 20 000. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, maxRateLimitWaits: 50, baseDelayMs: 250, maxDelayMs: 20_000 };

export type Outcome =
  | { kind: 'status'; status: number; error?: string | undefined; retryAfterS?: number | undefined }
  | { kind: 'network' };

export interface Attempts {
  /** Failed attempts so far that count against maxAttempts. */
  failures: number;
  /** 429 waits so far. */
  rateLimitWaits: number;
}

export type Decision =
  | { retry: false }
  | { retry: true; delayMs: number; reason: 'rate_limited' | 'server_error' | 'network' | 'conflict' };

export function shouldRetry(outcome: Outcome, attempts: Attempts, policy: RetryPolicy, random = Math.random): Decision {
  if (outcome.kind === 'status' && outcome.status === 429) {
    if (attempts.rateLimitWaits >= policy.maxRateLimitWaits) return { retry: false };
    return { retry: true, delayMs: Math.max(1, outcome.retryAfterS ?? 1) * 1000, reason: 'rate_limited' };
  }
  const reason = outcome.kind === 'network' ? 'network'
    : outcome.status >= 500 ? 'server_error'
      : outcome.status === 409 && outcome.error === 'idempotency_conflict' ? 'conflict'
        : undefined;
  if (!reason || attempts.failures + 1 >= policy.maxAttempts) return { retry: false };
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempts.failures);
  return { retry: true, delayMs: Math.round(random() * ceiling), reason };
}
