import { LRUCache } from 'lru-cache';

/** One kept answer: the tag the server gave it and its body as text. */
export interface KeptAnswer {
  etag: string;
  body: string;
}

export interface EtagCacheOptions {
  /** How many URLs are kept (default 1,000). */
  maxEntries?: number;
  /** How many bytes of bodies are kept (default 16 MB). */
  maxBytes?: number;
}

/**
 * GET answers by URL with their ETag, bounded by entries and bytes (least recently used go first):
 * the client sends the tag as If-None-Match and reuses the body on a 304, which costs no bytes of
 * body and no rate-limit unit (docs/api.md, Conditional requests). `entries()` and `load()` let a command keep it between
 * runs (push --dry-run does).
 */
export class EtagCache {
  private readonly kept: LRUCache<string, KeptAnswer>;

  constructor({ maxEntries = 1_000, maxBytes = 16 * 1024 * 1024 }: EtagCacheOptions = {}) {
    this.kept = new LRUCache<string, KeptAnswer>({
      max: maxEntries, maxSize: maxBytes,
      sizeCalculation: (answer) => Math.max(1, answer.body.length * 2 + answer.etag.length + 64),
    });
  }

  get(url: string): KeptAnswer | undefined {
    return this.kept.get(url);
  }

  set(url: string, answer: KeptAnswer): void {
    this.kept.set(url, answer);
  }

  get size(): number {
    return this.kept.size;
  }

  /** Every kept answer, most recently used first. */
  entries(): [string, KeptAnswer][] {
    return [...this.kept.entries()];
  }

  /** Adds answers kept earlier (as `entries()` listed them); the bounds still apply. */
  load(entries: [string, KeptAnswer][]): void {
    for (const [url, answer] of [...entries].reverse()) {
      if (typeof url === 'string' && typeof answer?.etag === 'string' && typeof answer.body === 'string') this.kept.set(url, answer);
    }
  }
}
