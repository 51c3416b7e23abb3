import { Redis } from 'ioredis';

/** One ioredis connection for the process; commands fail fast instead of queueing while Redis is down. */
export function connectRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
}
