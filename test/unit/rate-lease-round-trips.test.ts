import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisRateLimiter, leaseSize } from '../../src/coordination/rate-limiter.js';

/** A Redis that answers the commands sent to it only when the test says (`answerAll`): a slow round trip. */
function heldRedis() {
  let count = 0;
  const onTheirWay: Array<() => void> = [];
  const fake = {
    status: 'ready',
    on: () => fake,
    eval: (_script: string, _keys: number, _key: string, windowMs: number, units: number) => {
      count += units;
      const answer: [number, number] = [count, windowMs];
      return new Promise((resolve) => onTheirWay.push(() => resolve(answer)));
    },
  };
  return {
    redis: fake as unknown as Redis,
    /** The units Redis has been told of so far. */
    told: () => count,
    answerAll: () => { for (const answer of onTheirWay.splice(0)) answer(); },
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('requests faster than Redis answers: a full lease goes out per round trip to Redis, never more uncounted than the lease', async () => {
  const LEASE = 20;
  const LIMIT = 1_000_000;
  expect(leaseSize(LIMIT, LEASE)).toBe(LEASE);
  const { redis, told, answerAll } = heldRedis();
  const limiter = new RedisRateLimiter(redis, 'test:', LEASE);
  // The window's first request learns the lease.
  const first = limiter.hit('key', LIMIT, 60_000);
  answerAll();
  await first;

  let admitted = 0;
  const all = Array.from({ length: 100 }, () => Promise.resolve(limiter.hit('key', LIMIT, 60_000)).then(() => { admitted += 1; }));
  await turn();
  // Admitted here and not yet counted by Redis: fewer than a lease.
  expect(admitted).toBe(LEASE - 1);
  // What was spent is on its way to Redis at once, not half of it held back until the first answer.
  expect(told()).toBe(1 + LEASE - 1);
  const perRoundTrip = [];
  while (admitted < 100) {
    const before = admitted;
    const counted = told();
    answerAll();
    await turn();
    perRoundTrip.push(admitted - before);
    // Admitted and not in the counts Redis answered: fewer than a lease, all along.
    expect(1 + admitted - counted).toBeLessThan(LEASE);
  }
  await Promise.all(all);
  // Each answer of Redis let a lease's worth go on (the last round what was left), not half a lease.
  expect(perRoundTrip.slice(0, -1).every((n) => n === LEASE - 1)).toBe(true);
  answerAll();
});
