import type { Scope } from '../../domain/keys.js';
import type { Actor } from '../../store/changelog.js';
import type { Db } from '../../db/types.js';
import { keyScopes, withdrawnKeys, type KeyWithEntity } from '../../store/keys.js';
import { invalidations } from '../../store/notifications.js';

/** A key with what every request of it needs, worked out once per cache entry. */
export interface AuthenticatedKey extends KeyWithEntity {
  scopes: Scope[];
  actor: Actor;
}

/**
 * How long a key checked against the database is used before it must be checked again: a key revoked or
 * paused elsewhere is refused within a second (docs/operations.md, Rate limits with several processes),
 * with a quarter of it left for the check's own read and the request on a busy machine.
 */
const KEY_CHECK_MS = 750;
/** The cache checks its keys again this often, in the background, so that the keys in use never wait for a check. */
const RECHECK_EVERY_MS = 250;
/** At most this many keys (the most recently cached) are checked in one round; the others are looked up again when used. */
const RECHECK_MAX = 200;

/** One cached key. */
export interface KeyCacheEntry {
  found: AuthenticatedKey;
  expires: number;
  touched: number;
  /** When the database last said the key was usable (the start of that read). */
  checked: number;
}

/**
 * Authenticated keys with their entity, by key hash (never by the clear key), for a few seconds.
 * Revocations and pauses made in this process drop entries at once. Changes made elsewhere (the CLI,
 * another server) take effect within a second: an entry is used only within KEY_CHECK_MS (0.75 s) of
 * the last time the database confirmed it, and a background round every 250 ms confirms the cached
 * keys again in one statement (dropping a revoked key, or one of a paused entity), so a key in use is
 * not looked up on a request.
 */
export class KeyCache {
  private readonly entries = new Map<string, KeyCacheEntry>();
  private readonly onEntity = (entityId: number) => this.drop((e) => e.found.entity.id === entityId);
  private readonly onKey = (prefix: string) => this.drop((e) => e.found.key.prefix === prefix);
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000) {
    invalidations.on('entity-changed', this.onEntity);
    invalidations.on('key-changed', this.onKey);
  }

  /** Starts the background checks against `db`. */
  recheckOn(db: Db): void {
    this.timer = setInterval(() => void this.recheck(db), RECHECK_EVERY_MS);
    this.timer.unref();
  }

  get(hash: string, now: number) {
    const entry = this.entries.get(hash);
    if (!entry || entry.expires <= now || now - entry.checked >= KEY_CHECK_MS) return undefined;
    return entry;
  }

  set(hash: string, found: KeyWithEntity, now: number) {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const { key, entity } = found;
    const entry = {
      found: { key, entity, scopes: keyScopes(key), actor: { entityId: entity.id, entitySlug: entity.slug, source: `api:${key.prefix}` } },
      expires: now + this.ttlMs,
      touched: key.last_used_at ? Date.parse(key.last_used_at) : 0,
      checked: now,
    };
    this.entries.set(hash, entry);
    return entry;
  }

  close(): void {
    clearInterval(this.timer);
    invalidations.off('entity-changed', this.onEntity);
    invalidations.off('key-changed', this.onKey);
    this.entries.clear();
  }

  private async recheck(db: Db): Promise<void> {
    if (this.checking || this.entries.size === 0) return;
    this.checking = true;
    const started = Date.now();
    const live = [...this.entries.values()].filter((entry) => entry.expires > started).slice(-RECHECK_MAX);
    try {
      const withdrawn = await withdrawnKeys(db, live.map((entry) => entry.found.key.id));
      for (const entry of live) if (!withdrawn.has(entry.found.key.id) && entry.checked < started) entry.checked = started;
      if (withdrawn.size > 0) this.drop((entry) => withdrawn.has(entry.found.key.id));
    } catch {
      // The database did not answer: the entries are not confirmed, and are looked up again after KEY_CHECK_MS.
    } finally {
      this.checking = false;
    }
  }

  private drop(match: (entry: { found: AuthenticatedKey }) => boolean): void {
    for (const [hash, entry] of this.entries) if (match(entry)) this.entries.delete(hash);
  }
}
