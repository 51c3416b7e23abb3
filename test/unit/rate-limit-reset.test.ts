import type { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { RedisRateLimiter } from '../../src/coordination/rate-limiter.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A Redis whose fixed window ends at `end` (ms) and whose commands reach it after the given delays: the
 * time left it answers is `end` less the moment the command ran, so a request that was slow to arrive
 * learns a shorter time left than one sent at the same moment that arrived at once.
 */
function slowRedis(end: number, delays: number[]): Redis {
  let count = 0;
  const fake = {
    status: 'ready',
    on: () => fake,
    eval: async (_script: string, _keys: number, _key: string, _windowMs: number, units: number) => {
      await sleep(delays.shift() ?? 0);
      count += units;
      return [count, end - Date.now()];
    },
  };
  return fake as unknown as Redis;
}

test('answers of one window name one reset second, whatever each answer\'s latency (a window ending just after a second)', async () => {
  // The window ends 200 ms into a second, 3 s from now: a command that took 250 ms or more to arrive
  // learns an end in the second before; the first to arrive (at once) learns the true one.
  const end = Math.ceil(Date.now() / 1000) * 1000 + 3200;
  const delays = [0, 250, 400, 300, 0, 350, 250];
  const limiter = new RedisRateLimiter(slowRedis(end, [...delays]), 'test:', 1);
  const states = await Promise.all(delays.map(async () => await limiter.hit('key', 30, 60_000)));
  expect(states.map((s) => s.allowed)).toEqual(delays.map(() => true));
  expect(new Set(states.map((s) => s.reset))).toEqual(new Set([Math.ceil(end / 1000)]));
});
