import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

// ioredis is loaded only when REDIS_URL is set: a single process never pays its memory.
const require = createRequire(import.meta.url);

/** One ioredis connection for the process; a command waits through at most two reconnection attempts. */
export function connectRedis(url: string): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  return new RedisClient(url, { maxRetriesPerRequest: 2 });
}
