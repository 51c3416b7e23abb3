import { createHmac, randomBytes, randomUUID } from 'node:crypto';

import type { Scope } from '../schemas/keys.js';
import type { WebhookType } from '../schemas/webhooks.js';
import { DAY_MS } from './days.js';

export { WEBHOOK_TYPES, type WebhookType } from '../schemas/webhooks.js';

/** At most this many endpoints per entity. */
export const MAX_ENDPOINTS = 10;

export const SECRET_PREFIX = 'whsec_';

/** A new signing secret: `whsec_` + base64 of 32 random bytes, as the Standard Webhooks libraries read it. */
export const generateSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64');

/** A message's `webhook-id`: unique, the same for every attempt of the message. */
export const messageId = (): string => `msg_${randomUUID().replaceAll('-', '')}`;

/**
 * `v1,` + base64 HMAC-SHA256, keyed by the secret's decoded bytes, of `id.timestamp.body`
 * (the Standard Webhooks specification; docs/api.md, Webhooks).
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The `webhook-signature` header: one signature per live secret, space-separated. */
export const signatures = (secrets: readonly string[], id: string, timestamp: number, body: string): string =>
  secrets.map((secret) => sign(secret, id, timestamp, body)).join(' ');

/**
 * When a failed attempt is tried again, by the number of attempts made so far: about 5 s, 5 min,
 * 30 min, 2 h, 5 h, 10 h and 10 h; after the eighth attempt the message is `failed`.
 */
export const RETRY_DELAYS_MS: readonly number[] = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];

/** The delay before the next attempt after `attempts` attempts failed, or null when the message has failed. */
export const retryDelay = (attempts: number): number | null => RETRY_DELAYS_MS[attempts - 1] ?? null;

/** An endpoint whose every message failed for this long is disabled. */
export const FAILING_DISABLE_MS = 5 * DAY_MS;

/** Messages are kept this long. */
export const MESSAGE_RETENTION_MS = 30 * DAY_MS;

/** One attempt may take this long, headers and body. */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** A receiver's answer is read to this many bytes, and the first KEPT_RESPONSE_BYTES kept. */
export const RESPONSE_READ_BYTES = 64 * 1024;
export const KEPT_RESPONSE_BYTES = 1024;
/** Requests in flight at once to one endpoint. */
export const ENDPOINT_CONCURRENCY = 4;

/** The type of a changelog entry's message: `artwork.created`, …; none for artist records. */
export function changeType(entityType: string, action: string): WebhookType | null {
  if (entityType !== 'artwork' && entityType !== 'event' && entityType !== 'profile') return null;
  return `${entityType}.${action === 'create' ? 'created' : action === 'delete' ? 'deleted' : 'updated'}` as WebhookType;
}

/** Stored form of an endpoint's `events`: `*` or the types, space-separated (matched in SQL). */
export const storedEvents = (events: readonly string[]): string => (events.includes('*') ? '*' : [...new Set(events)].join(' '));
export const listedEvents = (stored: string): string[] => (stored === '*' ? ['*'] : stored.split(' ').filter(Boolean));

/**
 * The read scopes a key needs to have these types sent where it says (docs/api.md, Webhooks, Who may
 * subscribe): a message carries what a GET of its kind shows, so subscribing must not read past the
 * key's scopes. `feed.run.*` is sent for the entity's feeds of either kind, so it needs both.
 */
export function readScopesFor(events: readonly string[]): Scope[] {
  const needed = new Set<Scope>();
  for (const type of events) {
    if (type === '*') ['artworks:read', 'events:read', 'profile:read'].forEach((s) => needed.add(s as Scope));
    else if (type.startsWith('artwork.') || type.startsWith('image.')) needed.add('artworks:read');
    else if (type.startsWith('event.')) needed.add('events:read');
    else if (type === 'profile.updated') needed.add('profile:read');
    else if (type.startsWith('feed.run.')) ['artworks:read', 'events:read'].forEach((s) => needed.add(s as Scope));
  }
  return [...needed].sort();
}
