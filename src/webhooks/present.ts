import { isIP } from 'node:net';
import type { WebhookAttemptRow, WebhookEndpointRow, WebhookMessageRow } from '../db/types.js';
import { listedEvents } from '../domain/webhooks.js';
import { publicAddress } from '../fetch/index.js';

/** An endpoint as the API shows it: never its secret. */
export const toEndpoint = (row: WebhookEndpointRow) => ({
  id: Number(row.id), url: row.url, events: listedEvents(row.events), description: row.description,
  enabled: row.enabled === 1, disabled_reason: row.disabled_reason, created_at: row.created_at,
});

/** An endpoint just created or rolled, with its secret: the one answer that shows it. */
export const withSecret = (row: WebhookEndpointRow) => ({ ...toEndpoint(row), secret: row.secret });

export const toAttempt = (row: WebhookAttemptRow) => ({
  at: row.at, status_code: row.status_code === null ? null : Number(row.status_code), duration_ms: Number(row.duration_ms),
  response: row.response, error: row.error,
});

export const toMessage = (row: WebhookMessageRow, attempts: readonly WebhookAttemptRow[] = []) => ({
  id: row.id, type: row.type, status: row.status, created_at: row.created_at, attempts: attempts.map(toAttempt),
});

/**
 * Why an endpoint URL is refused, or null: https only (http where private addresses are allowed, for
 * tests), no credentials in it, and not a literal loopback or private address unless allowed. A name
 * is checked again on every delivery, on the addresses it resolves to, as the fetcher does.
 */
export function endpointUrlProblem(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'must be an https URL';
  if (url.username || url.password) return 'must not hold a user name or password';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost') || (isIP(host) && !publicAddress(host)))) {
    return 'address not allowed: a private or local address (FETCH_ALLOW_PRIVATE=true allows it in development)';
  }
  return null;
}
