import type { Redis } from 'ioredis';
import { redisCommand } from './redis.js';

/**
 * Fixed-window request counting per API key (docs/api.md, Rate limits). A window starts at a key's first request
 * after the previous one ended. The store is an interface so several processes can share it (Redis).
 */
export interface RateLimitState {
  limit: number;
  /** The limit minus the requests counted so far in this window, never below 0. */
  remaining: number;
  /** Unix epoch seconds when the window ends. */
  reset: number;
  allowed: boolean;
  /** Whole seconds until the window ends, at least 1. */
  retryAfter: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `key` and tells whether it is within `limit`. Exact under concurrency.
   * A store in process memory answers at once, without a promise.
   */
  hit(key: string, limit: number, windowMs: number): RateLimitState | Promise<RateLimitState>;
  /**
   * The state as it stands, counting nothing: the headers of an answer that takes no unit (a 304,
   * docs/api.md, Conditional requests). A key without a window yet has its whole limit, in a window that would start now.
   */
  peek(key: string, limit: number, windowMs: number): RateLimitState | Promise<RateLimitState>;
  /**
   * Counts one request only when it is within `limit`, answering at once; undefined, counting nothing,
   * when it is not. Only a store in process memory has it: the early answers (fast-not-modified.ts)
   * take their unit this way, and leave a refusal, and any shared store, to the full check.
   */
  hitWithin?(key: string, limit: number, windowMs: number): RateLimitState | undefined;
  close(): Promise<void>;
}

export function rateLimitState(count: number, limit: number, resetAtMs: number, nowMs: number): RateLimitState {
  return {
    limit,
    remaining: Math.max(0, limit - count),
    reset: Math.ceil(resetAtMs / 1000),
    allowed: count <= limit,
    retryAfter: Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000)),
  };
}

/**
 * Counters live per key (an API key's prefix, or `ip:` and a client address): at most this many in
 * process memory, about 17 MB of heap when full of IPv6 addresses (measured on Node 24).
 */
export const MEMORY_LIMITER_ENTRIES = 50_000;

/**
 * Counters in process memory: exact because one event loop serialises every hit. Bounded: when the
 * table is full, the counter used least recently goes. Every hit makes its counter the most recent,
 * so a client that keeps sending (one over its limit keeps being refused) keeps its counter; a counter
 * is lost only after `maxEntries` other clients have each sent a request since its own last one. An
 * attacker resetting their own counter that way pays `maxEntries` requests from as many distinct
 * addresses (or keys) to win one window's limit, and whoever holds that many addresses is not held
 * back by a per-address limit anyway.
 */
export class MemoryRateLimiter implements RateLimiter {
  // A Map iterates in insertion order: re-inserting on each hit keeps the least recent first.
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private lastSweep = Date.now();

  constructor(private readonly maxEntries = MEMORY_LIMITER_ENTRIES) {}

  hit(key: string, limit: number, windowMs: number): RateLimitState {
    const now = Date.now();
    this.sweep(now, windowMs);
    let window = this.windows.get(key);
    if (window) this.windows.delete(key);
    if (!window || now >= window.resetAt) window = { count: 0, resetAt: now + windowMs };
    this.windows.set(key, window);
    if (this.windows.size > this.maxEntries) this.windows.delete(this.windows.keys().next().value!);
    window.count++;
    return rateLimitState(window.count, limit, window.resetAt, now);
  }

  hitWithin(key: string, limit: number, windowMs: number): RateLimitState | undefined {
    return this.peek(key, limit, windowMs).remaining < 1 ? undefined : this.hit(key, limit, windowMs);
  }

  peek(key: string, limit: number, windowMs: number): RateLimitState {
    const now = Date.now();
    const window = this.windows.get(key);
    if (!window || now >= window.resetAt) return rateLimitState(0, limit, now + windowMs, now);
    return rateLimitState(window.count, limit, window.resetAt, now);
  }

  /** How many counters are held (tests check the bound). */
  get size(): number {
    return this.windows.size;
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  /** Drops ended windows once per window length, so idle keys do not accumulate. */
  private sweep(now: number, windowMs: number): void {
    if (now - this.lastSweep < windowMs) return;
    this.lastSweep = now;
    for (const [key, window] of this.windows) if (now >= window.resetAt) this.windows.delete(key);
  }
}

// INCR and the first request's expiry in one atomic step: the window starts at the key's first request.
const FIXED_WINDOW = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}
`;

// The count and the window's time left, changing nothing (a key without a window: 0 and -2).
const PEEK = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
return {count, redis.call('PTTL', KEYS[1])}
`;

/**
 * Counters in Redis, shared by every process; one Lua script per hit keeps them exact. Redis unreachable:
 * the hit fails with 503 at once (no count is guessed, so no limit can be bypassed).
 */
export class RedisRateLimiter implements RateLimiter {
  constructor(private readonly redis: Redis, private readonly prefix: string) {}

  async hit(key: string, limit: number, windowMs: number): Promise<RateLimitState> {
    const now = Date.now();
    const [count, ttl] = await redisCommand(this.redis.eval(FIXED_WINDOW, 1, `${this.prefix}rl:${key}`, windowMs)) as [number, number];
    return rateLimitState(count, limit, now + ttl, now);
  }

  async peek(key: string, limit: number, windowMs: number): Promise<RateLimitState> {
    const now = Date.now();
    const [count, ttl] = await redisCommand(this.redis.eval(PEEK, 1, `${this.prefix}rl:${key}`)) as [number, number];
    return ttl < 0 ? rateLimitState(0, limit, now + windowMs, now) : rateLimitState(count, limit, now + ttl, now);
  }

  async close(): Promise<void> {
    // The connection belongs to the app, which closes it once.
  }
}
