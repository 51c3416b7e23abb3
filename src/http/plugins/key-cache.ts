import type { Scope } from '../../domain/keys.js';
import type { Actor } from '../../store/changelog.js';
import { keyScopes, type KeyWithEntity } from '../../store/keys.js';
import { invalidations } from '../../store/notifications.js';

/** A key with what every request of it needs, worked out once per cache entry. */
export interface AuthenticatedKey extends KeyWithEntity {
  scopes: Scope[];
  actor: Actor;
}

/**
 * Authenticated keys with their entity, by key hash (never by the clear key), for a few seconds.
 * Revocations and pauses made in this process drop entries at once; changes made elsewhere (the
 * CLI, another server) take effect within the TTL.
 */
export class KeyCache {
  private readonly entries = new Map<string, { found: AuthenticatedKey; expires: number; touched: number }>();
  private readonly onEntity = (entityId: number) => this.drop((e) => e.found.entity.id === entityId);
  private readonly onKey = (prefix: string) => this.drop((e) => e.found.key.prefix === prefix);

  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000) {
    invalidations.on('entity-changed', this.onEntity);
    invalidations.on('key-changed', this.onKey);
  }

  get(hash: string, now: number) {
    const entry = this.entries.get(hash);
    if (!entry || entry.expires <= now) return undefined;
    return entry;
  }

  set(hash: string, found: KeyWithEntity, now: number) {
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    const { key, entity } = found;
    const entry = {
      found: { key, entity, scopes: keyScopes(key), actor: { entityId: entity.id, entitySlug: entity.slug, source: `api:${key.prefix}` } },
      expires: now + this.ttlMs,
      touched: key.last_used_at ? Date.parse(key.last_used_at) : 0,
    };
    this.entries.set(hash, entry);
    return entry;
  }

  close(): void {
    invalidations.off('entity-changed', this.onEntity);
    invalidations.off('key-changed', this.onKey);
    this.entries.clear();
  }

  private drop(match: (entry: { found: AuthenticatedKey }) => boolean): void {
    for (const [hash, entry] of this.entries) if (match(entry)) this.entries.delete(hash);
  }
}
