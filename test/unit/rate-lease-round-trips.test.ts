import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisRateLimiter, leaseSize } from '../../src/coordination/rate-limiter.js';

/** A Redis that answers the commands sent to it only when the test says (`answerAll`): a slow round trip. */
function heldRedis() {
  let count = 0;
  let looks = 0;
  const onTheirWay: Array<() => void> = [];
  const fake = {
    // Read once by every try at a unit (whether Redis is there to count it): how often requests try.
    get status() {
      looks += 1;
      return 'ready';
    },
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
    /** How many times a request has tried to take a unit so far. */
    tries: () => looks,
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

test('requests waiting for room in a full lease try again only when an answer of Redis has room for them, not each at every answer', async () => {
  const LEASE = 20;
  const LIMIT = 1_000_000;
  const WAITING = 200;
  const { redis, told, tries, answerAll } = heldRedis();
  const limiter = new RedisRateLimiter(redis, 'test:', LEASE);
  const first = limiter.hit('key', LIMIT, 60_000);
  answerAll();
  await first;

  const triesBefore = tries();
  let admitted = 0;
  const all = Array.from({ length: WAITING }, () => Promise.resolve(limiter.hitWithin('key', LIMIT, 60_000)).then((state) => {
    if (state) admitted += 1;
  }));
  let roundTrips = 0;
  while (admitted < WAITING) {
    await turn();
    answerAll();
    roundTrips += 1;
  }
  await Promise.all(all);
  expect(told()).toBe(1 + WAITING);
  // A lease's worth per round trip to Redis, as when every request tried at every answer.
  expect(roundTrips).toBeLessThanOrEqual(Math.ceil(WAITING / (LEASE - 1)) + 1);
  // Each request tries when it comes and about once more when let through: where every answer let all of
  // them try again, the ones at the back of 200 tried at each of the ten answers before their turn.
  expect(tries() - triesBefore).toBeLessThan(2 * WAITING);
});
