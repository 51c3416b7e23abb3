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
   * Counts one request of `key` and tells whether it is within `limit`. Exact under concurrency in one
   * process. A store in process memory answers at once, without a promise; Redis's leases mostly do.
   */
  hit(key: string, limit: number, windowMs: number): RateLimitState | Promise<RateLimitState>;
  /**
   * The state as it stands, counting nothing: the headers of an answer that takes no unit (a 304,
   * docs/api.md, Conditional requests). A key without a window yet has its whole limit, in a window that would start now.
   */
  peek(key: string, limit: number, windowMs: number): RateLimitState | Promise<RateLimitState>;
  /**
   * Counts one request only when it is within `limit` and can be counted here (in process memory, or
   * from a lease of Redis's units this process holds, perhaps once an answer of Redis already on its
   * way has made room in it); undefined, counting nothing, otherwise. The early answers
   * (fast-not-modified.ts) take their unit this way, and leave a refusal, and a unit that needs Redis,
   * to the full check.
   */
  hitWithin?(key: string, limit: number, windowMs: number): RateLimitState | undefined | Promise<RateLimitState | undefined>;
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

// INCRBY and the first request's expiry in one atomic step: the window starts at the key's first request.
const FIXED_WINDOW = `
local count = redis.call('INCRBY', KEYS[1], ARGV[2])
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
 * How many of a key's units a process may spend between two visits to Redis (docs/operations.md, Rate
 * limits with several processes): RATE_LIMIT_LEASE, at most a twentieth of the limit, at least 1 (every
 * request counted in Redis, exact: a free key's 30).
 */
export const leaseSize = (limit: number, lease: number): number => Math.max(1, Math.min(lease, Math.floor(limit / 20)));

/** What one process knows of a key's window in Redis, and the units it spent since it last told Redis. */
interface Lease {
  /** Epoch ms when the window ends, as Redis's time-to-live said. */
  resetAt: number;
  /** The window's count in Redis at this process's last visit. */
  known: number;
  /** Units spent here on their way to Redis (an INCRBY not answered yet). */
  sending: number;
  /** Units spent here and not sent: with `sending`, fewer than the lease size. */
  pending: number;
  /**
   * Units of requests that asked Redis themselves and wait for its count: not admitted yet, so not
   * held against the lease (Redis's answer admits or refuses them), but counted in the state shown.
   */
  asking: number;
  /** Requests waiting for room in the lease, which the next answer of Redis about this key makes. */
  waiting: Array<() => void>;
  /** Waiting requests let go by an answer and not yet back to try (`answered`): the room they will take. */
  woken: number;
}

const counted = (lease: Lease): number => lease.known + lease.sending + lease.pending + lease.asking;

/** Lets the first `count` requests waiting for room in a lease try again, in the order they came (all by default). */
function wake(held: Lease, count = held.waiting.length): void {
  const woken = held.waiting.splice(0, Math.max(0, count));
  held.woken += woken.length;
  for (const resolve of woken) resolve();
}

/**
 * Counters in Redis, shared by every process, spent in leases (docs/operations.md, Rate limits with
 * several processes): a process counts a key's requests itself and tells Redis in one INCRBY for several
 * of them, sent in the background once half a lease is spent (or, with one on its way, once the lease is
 * full); Redis's answer also tells it what the
 * other processes counted. A process never holds more than `leaseSize - 1` admitted requests Redis has
 * not counted: the request that would reach it waits for Redis and is counted by Redis's answer. So a key
 * may exceed its limit in a window by at most the lease size per process, and with one process every
 * count is exact (nobody else adds to Redis's). A key's first request of a window, and every request of a
 * key whose lease size is 1, go to Redis. Redis unreachable (its connection not ready): nothing is spent
 * here, so the request goes to Redis and fails with 503 at once (no count is guessed, so no limit can be
 * bypassed); only the few requests between Redis's end and this process seeing its connection close are
 * still counted here.
 */
export class RedisRateLimiter implements RateLimiter {
  // A Map iterates in insertion order: re-inserting on each spend keeps the least recent first.
  private readonly leases = new Map<string, Lease>();

  constructor(
    private readonly redis: Redis, private readonly prefix: string,
    private readonly lease = 1, private readonly maxEntries = MEMORY_LIMITER_ENTRIES,
  ) {
    // The connection lost: what this process held is let go, so every request asks Redis (503) until it is back.
    redis.on('close', () => this.letGo());
  }

  hit(key: string, limit: number, windowMs: number): RateLimitState | Promise<RateLimitState> {
    const spent = this.spend(key, limit, windowMs, false);
    if (spent instanceof Promise) return spent.then(() => this.hit(key, limit, windowMs));
    return spent ?? this.send(key, limit, windowMs);
  }

  hitWithin(key: string, limit: number, windowMs: number): RateLimitState | undefined | Promise<RateLimitState | undefined> {
    const spent = this.spend(key, limit, windowMs, true);
    return spent instanceof Promise ? spent.then(() => this.hitWithin(key, limit, windowMs)) : spent;
  }

  peek(key: string, limit: number, windowMs: number): RateLimitState | Promise<RateLimitState> {
    const now = Date.now();
    const held = this.ready() ? this.held(key, now) : undefined;
    if (held) return rateLimitState(counted(held), limit, held.resetAt, now);
    return this.peekRedis(key, limit, windowMs, now);
  }

  /** How many keys this process holds a lease of (tests check the bound). */
  get size(): number {
    return this.leases.size;
  }

  async close(): Promise<void> {
    // The connection belongs to the app, which closes it once.
    this.letGo();
  }

  /** Drops every lease; the requests waiting for room in one try again (and go to Redis). */
  private letGo(): void {
    const leases = [...this.leases.values()];
    this.leases.clear();
    for (const held of leases) wake(held);
  }

  private ready(): boolean {
    return this.redis.status === 'ready';
  }

  private held(key: string, now: number): Lease | undefined {
    const held = this.leases.get(key);
    if (held === undefined || now < held.resetAt) return held;
    // The window ended: what was spent in it and not sent no longer counts.
    this.leases.delete(key);
    return undefined;
  }

  /**
   * One unit spent here, at once: undefined when this request must go to Redis (no lease of this window,
   * the lease's size reached with nothing on its way to Redis, Redis not ready) — or, `within`, when the
   * unit would be over the limit. A promise when the lease is full and an answer of Redis about this key
   * is on its way: it settles once an answer has made room for this request (`answered`), which then
   * tries again. Under load a key's requests come faster than Redis answers: waiting for the answer already on its way
   * takes one visit to Redis for a lease's worth of them, where asking Redis each (and, from the early
   * answers, through the framework) took one per request, and kept the lease full as long as they came.
   * The units spent since that visit go to Redis as soon as the lease is full, beside it: each answer
   * then makes room for what the other carried, so a full lease goes out per round trip to Redis, not
   * half of one (what is uncounted stays under the lease's size all along).
   */
  private spend(key: string, limit: number, windowMs: number, within: boolean): RateLimitState | undefined | Promise<void> {
    if (!this.ready()) return undefined;
    const size = leaseSize(limit, this.lease);
    if (size === 1) return undefined;
    const now = Date.now();
    const held = this.held(key, now);
    if (held === undefined) return undefined;
    if (held.pending + held.sending + 1 >= size) {
      if (held.sending === 0) return undefined;
      if (held.pending > 0) this.flush(key, held, size, windowMs, now);
      return new Promise<void>((resolve) => held.waiting.push(resolve)).then(() => { held.woken -= 1; });
    }
    const count = counted(held) + 1;
    if (within && count > limit) return undefined;
    held.pending += 1;
    this.leases.delete(key);
    this.leases.set(key, held);
    // Half a lease goes to Redis when nothing is on its way; with something on its way, the rest as soon
    // as the lease is full: the next request would wait for room, and each answer then makes room for
    // what the other carried (the requests let through by an answer fill the lease without another one).
    if (held.sending === 0 ? held.pending * 2 >= size : held.pending + held.sending + 1 >= size) this.flush(key, held, size, windowMs, now);
    return rateLimitState(count, limit, held.resetAt, now);
  }

  /** Tells Redis what was spent here, in the background. A failure drops the lease: the next request asks Redis. */
  private flush(key: string, held: Lease, size: number, windowMs: number, now: number): void {
    const units = held.pending;
    held.pending = 0;
    held.sending += units;
    this.count(key, windowMs, units).then(([count, ttl]) => {
      held.sending -= units;
      this.learn(key, count, ttl, units, now);
      this.answered(key, held, size);
    }, () => {
      held.sending -= units;
      if (this.leases.get(key) === held) this.leases.delete(key);
      wake(held);
    });
  }

  /** Sends this request's unit and the ones spent here and not yet sent; Redis's count is this request's. */
  private async send(key: string, limit: number, windowMs: number): Promise<RateLimitState> {
    const now = Date.now();
    const held = this.held(key, now);
    // The units spent here go along (held against the lease until Redis has them); this request's own
    // is Redis's to admit.
    const spent = held?.pending ?? 0;
    if (held) {
      held.pending = 0;
      held.sending += spent;
      held.asking += 1;
    }
    let answer: [number, number];
    try {
      answer = await redisCommand(this.count(key, windowMs, spent + 1));
    } catch (error) {
      if (held) {
        held.sending -= spent;
        held.asking -= 1;
        wake(held);
      }
      throw error;
    }
    if (held) {
      held.sending -= spent;
      held.asking -= 1;
    }
    const [count, ttl] = answer;
    this.learn(key, count, ttl, spent + 1, now);
    if (held) this.answered(key, held, leaseSize(limit, this.lease));
    // The window's end as this process first learned it: `now + ttl` of each answer is that end less the
    // answer's own latency, and answers of one window must name one reset whatever their latencies.
    return rateLimitState(count, limit, this.leases.get(key)?.resetAt ?? now + ttl, now);
  }

  private async count(key: string, windowMs: number, units: number): Promise<[number, number]> {
    return await this.redis.eval(FIXED_WINDOW, 1, `${this.prefix}rl:${key}`, windowMs, units) as [number, number];
  }

  /**
   * Lets the requests waiting for room in `held` try again once an answer of Redis about its key has
   * made some: as many as fit in it, first come first (less the room of those an earlier answer let go
   * that have not tried yet); the others wait for the next answer — letting them try too would only
   * have them find the lease full and wait anew, a promise and a try per answer for each waiting
   * request (under load, most of them). All of them when `held` is no longer the key's lease (dropped,
   * or a new window) and, once those let go have tried, when no answer is on its way any more: then
   * nothing else would wake them, and each finds its own way (a unit here, Redis, or the framework).
   */
  private answered(key: string, held: Lease, size: number): void {
    if (this.leases.get(key) !== held) return wake(held);
    wake(held, size - 1 - held.pending - held.sending - held.woken);
    if (held.sending > 0 || held.waiting.length === 0) return;
    // Nothing on its way: the ones let go refill the lease and send it, whose answer lets the others go.
    // Should they not (they left for Redis or the framework), the others go once they have tried.
    setImmediate(() => { if (held.sending === 0) wake(held); });
  }

  /** What Redis answered an INCRBY of `units` sent at `now`: the window's count and time left. */
  private learn(key: string, count: number, ttl: number, units: number, now: number): void {
    const current = this.leases.get(key);
    // A key Redis made by this INCRBY is a new window: what is held of an earlier one goes.
    if (current !== undefined && count !== units && now < current.resetAt) {
      current.known = Math.max(current.known, count);
      return;
    }
    this.leases.delete(key);
    this.leases.set(key, { resetAt: now + ttl, known: count, sending: 0, pending: 0, asking: 0, waiting: [], woken: 0 });
    if (this.leases.size > this.maxEntries) this.leases.delete(this.leases.keys().next().value!);
  }

  private async peekRedis(key: string, limit: number, windowMs: number, now: number): Promise<RateLimitState> {
    const [count, ttl] = await redisCommand(this.redis.eval(PEEK, 1, `${this.prefix}rl:${key}`)) as [number, number];
    return ttl < 0 ? rateLimitState(0, limit, now + windowMs, now) : rateLimitState(count, limit, now + ttl, now);
  }
}
