import { LRUCache } from 'lru-cache';
import type { Compressible } from '../http-common/compression.js';

/** A built public answer: its bytes, their compressed copies once asked for, and its status. */
export interface Built extends Compressible {
  status: number;
}

/**
 * Public pages and feeds, built once per version of their data and kept in process memory, bounded
 * by bytes (PUBLIC_CACHE_MB). Keys carry the data version, so a write in any process makes the next
 * request ask for a new key; the old entry simply ages out. Concurrent requests for a missing key
 * share one build.
 */
export class PageCache {
  private readonly entries: LRUCache<string, Built>;
  private readonly building = new Map<string, Promise<Built>>();
  hits = 0;
  builds = 0;

  constructor(maxBytes: number) {
    // An answer larger than the whole cache is served but not kept.
    // Compressed copies are made later (text compresses to a fraction: a third at most is counted for them).
    this.entries = new LRUCache<string, Built>({ maxSize: Math.max(1, maxBytes), sizeCalculation: (b) => Math.max(1, Math.ceil(b.body.length * 1.3) + 64) });
  }

  async get(key: string, build: () => Promise<Built>): Promise<Built> {
    const cached = this.entries.get(key);
    if (cached) {
      this.hits++;
      return cached;
    }
    const pending = this.building.get(key);
    if (pending) return pending;
    this.builds++;
    const promise = build().then((built) => {
      this.entries.set(key, built);
      return built;
    }).finally(() => this.building.delete(key));
    this.building.set(key, promise);
    return promise;
  }

  /** A kept answer, without building one. */
  peek(key: string): Built | undefined {
    const cached = this.entries.get(key);
    if (cached) this.hits++;
    return cached;
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
