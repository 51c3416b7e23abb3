import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { ApiError } from '../domain/errors.js';

// ioredis is loaded only when REDIS_URL is set: a single process never pays its memory.
const require = createRequire(import.meta.url);

/**
 * How long a command may take before its request is answered 503 (docs/api.md, Service unavailable (503): within 1 s). Redis
 * answers in well under a millisecond; a command that takes this long meets a server that is stopped
 * (SIGSTOP), swapping or unreachable behind a firewall that swallows packets.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
/** Reconnection attempts come at most this far apart, so service resumes within a second of Redis. */
const RECONNECT_MAX_DELAY_MS = 1000;

/**
 * One ioredis connection for the process, set up to fail fast rather than wait: while the connection
 * is down, commands are refused at once (no offline queue) instead of queueing until Redis returns;
 * a command whose connection drops is not retried on the next one; a connection attempt and a command
 * each have a short deadline. Reconnection goes on in the background, so service resumes by itself.
 */
export function connectRedis(url: string): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof import('ioredis');
  return new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: REDIS_COMMAND_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    retryStrategy: (attempt) => Math.min(attempt * 100, RECONNECT_MAX_DELAY_MS),
  });
}

/**
 * Resolves once the first connection is ready, or after `ms` (a Redis that is down at start-up does not
 * stop the server: requests that need it get 503 until it answers).
 */
export function firstConnection(redis: Redis, ms = 2 * REDIS_COMMAND_TIMEOUT_MS): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    redis.once('ready', done);
  });
}

/**
 * Logs the connection's outages once each (down, then back) instead of every failed reconnection
 * attempt; without an 'error' listener ioredis would print each one to the console.
 */
export function logOutages(redis: Redis, log: { warn(obj: object, msg: string): void; info(msg: string): void }): void {
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    log.warn({ err: error }, 'Redis unavailable: requests that need it answer 503 until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    log.info('Redis available again');
  });
}

/** Seconds a client should wait before retrying after Redis failed (Retry-After). */
const RETRY_AFTER_S = 1;

/**
 * The outcome of a Redis command as the API should see it: Redis unreachable, refusing commands or too
 * slow becomes 503 `service_unavailable`. An error Redis itself answered (a ReplyError: a script bug,
 * a wrong type) stays what it is, a 500.
 */
export async function redisCommand<T>(command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch (error) {
    if ((error as Error | undefined)?.name === 'ReplyError') throw error;
    throw new ApiError('service_unavailable', 'Redis does not answer; try again shortly.', { retry_after: RETRY_AFTER_S });
  }
}
