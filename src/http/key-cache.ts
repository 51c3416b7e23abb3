import type { KeyWithEntity } from '../store/keys.js';
import { invalidations } from '../store/notifications.js';

/**
 * Authenticated keys with their entity, by key hash (never by the clear key), for a few seconds.
 * Revocations and pauses made in this process drop entries at once; changes made elsewhere (the
 * CLI, another server) take effect within the TTL.
 */
export class KeyCache {
  private readonly entries = new Map<string, { found: KeyWithEntity; expires: number; touched: number }>();
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
    const entry = { found, expires: now + this.ttlMs, touched: found.key.last_used_at ? Date.parse(found.key.last_used_at) : 0 };
    this.entries.set(hash, entry);
    return entry;
  }

  close(): void {
    invalidations.off('entity-changed', this.onEntity);
    invalidations.off('key-changed', this.onKey);
    this.entries.clear();
  }

  private drop(match: (entry: { found: KeyWithEntity }) => boolean): void {
    for (const [hash, entry] of this.entries) if (match(entry)) this.entries.delete(hash);
  }
}
