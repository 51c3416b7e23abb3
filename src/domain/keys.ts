import { hash, randomInt } from 'node:crypto';

import { SCOPES, type Scope, type Tier } from '../schemas/keys.js';
import { DAY_MS } from './days.js';

export { SCOPES, TIERS, type Scope, type Tier } from '../schemas/keys.js';

export const READ_SCOPES: readonly Scope[] = SCOPES.filter((s) => s.endsWith(':read'));

/** Webhooks are for the paying tiers only (docs/api.md, Webhooks). */
const PAID_ONLY: readonly Scope[] = ['webhooks:read', 'webhooks:write'];

/** Scopes each tier may hold (docs/api.md, Authentication); a key may be narrowed to a subset. */
export const TIER_SCOPES: Record<Tier, readonly Scope[]> = {
  free: READ_SCOPES.filter((scope) => !PAID_ONLY.includes(scope)),
  subscriber: SCOPES,
  partner: SCOPES,
};

/** Tiers from least to most: an entity's plan is the highest tier its console may create (docs/console.md, Users and invites). */
export const tierWithin = (tier: Tier, plan: Tier): boolean => TIER_ORDER.indexOf(tier) <= TIER_ORDER.indexOf(plan);
const TIER_ORDER: readonly Tier[] = ['free', 'subscriber', 'partner'];

/** How long the old key of a roll keeps working (docs/api.md, Authentication): `key roll --expire-old-in`, the console's choice. */
export const ROLL_GRACE = { '1h': 3_600_000, '24h': DAY_MS, '7d': 7 * DAY_MS, now: 0 } as const;
export type RollGrace = keyof typeof ROLL_GRACE;
export const DEFAULT_ROLL_GRACE: RollGrace = '24h';

/** The pseudo-scope of endpoints open to any read scope of the catalog (changelog, sync status); webhooks:read is not one. */
export const ANY_READ = 'any read scope';
export type RequiredScope = Scope | typeof ANY_READ;

export const KEY_PREFIX = 'ak_live_';
export const KEY_FORMAT = /^ak_live_[A-Za-z0-9]{32}$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new key: `ak_live_` and 32 characters drawn uniformly by a cryptographic RNG. */
export function generateKey(): string {
  let body = '';
  for (let i = 0; i < 32; i++) body += ALPHABET[randomInt(ALPHABET.length)];
  return KEY_PREFIX + body;
}

/**
 * The only form of a key the service stores: SHA-256, hex. Every keyed request hashes its key
 * (auth.ts, fast-not-modified.ts): the one-shot `hash` takes ~0.22 µs where a Hash object took ~0.5.
 */
export const hashKey = (key: string): string => hash('sha256', key, 'hex');

/** The public handle of a key: `ak_live_` plus its next 8 characters. */
export const keyPrefix = (key: string): string => key.slice(0, KEY_PREFIX.length + 8);
export const PREFIX_FORMAT = /^ak_live_[A-Za-z0-9]{8}$/;

// A key, whole or cut short, anywhere in a text: its prefix is public, the rest is the secret.
const KEY_IN_TEXT = /ak_live_([A-Za-z0-9]{8})[A-Za-z0-9]+/g;

/** `text` with every key in it shortened to its prefix and "…", for messages that echo what was typed. */
export const redactKeys = (text: string): string => text.replace(KEY_IN_TEXT, `${KEY_PREFIX}$1…`);

/**
 * An answer as it is kept for an idempotent replay (docs/api.md, Retries and idempotency): a secret it
 * showed (an endpoint's `secret` when created or rolled, a whole key as `key`) is `null` there, with `secret_shown: false`, so
 * no copy of a secret stays in the database. Any other body is kept as it is.
 */
export function withoutShownSecret(body: string): string {
  if (!body.includes('"secret"') && !body.includes('"key"')) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return body;
  const answer = parsed as Record<string, unknown>;
  if (typeof answer.secret === 'string') return JSON.stringify({ ...answer, secret: null, secret_shown: false });
  // A whole API key shown in an answer (its prefix is public and stays).
  if (typeof answer.key === 'string' && KEY_FORMAT.test(answer.key)) return JSON.stringify({ ...answer, key: null, secret_shown: false });
  return body;
}

export function hasScope(granted: readonly string[], required: RequiredScope): boolean {
  if (required === ANY_READ) return granted.some((s) => READ_SCOPES.includes(s as Scope) && !PAID_ONLY.includes(s as Scope));
  return granted.includes(required);
}
