import type { Redis } from 'ioredis';
import type { Db } from '../db/types.js';
import {
  claimIdempotencyKey, completeIdempotencyKey, findIdempotencyRecord, releaseIdempotencyKey, saveIdempotencyRecord,
  type Claim,
} from '../store/idempotency.js';

export interface IdempotencyRequest {
  apiKeyId: number;
  key: string;
  requestHash: string;
}

/**
 * Who may run a request carrying an Idempotency-Key, and where its final answer is kept (always in the
 * database, so replays survive restarts). `claimed` means: run it, then `complete` or `release`.
 */
export interface IdempotencyGuard {
  claim(request: IdempotencyRequest): Promise<Claim>;
  complete(request: IdempotencyRequest, claim: Extract<Claim, { outcome: 'claimed' }>, status: number, body: string): Promise<void>;
  release(request: IdempotencyRequest, claim: Extract<Claim, { outcome: 'claimed' }>): Promise<void>;
}

/** Single database: an in-flight row under the unique (api key, idempotency key) index is the lock. */
export class DatabaseIdempotencyGuard implements IdempotencyGuard {
  constructor(private readonly db: Db, private readonly leaseMs: number) {}

  claim({ apiKeyId, key, requestHash }: IdempotencyRequest): Promise<Claim> {
    return claimIdempotencyKey(this.db, apiKeyId, key, requestHash, this.leaseMs);
  }

  complete(_request: IdempotencyRequest, claim: { id: number | null }, status: number, body: string): Promise<void> {
    return completeIdempotencyKey(this.db, claim.id!, status, body);
  }

  release(_request: IdempotencyRequest, claim: { id: number | null }): Promise<void> {
    return releaseIdempotencyKey(this.db, claim.id!);
  }
}

/**
 * Several processes: the in-flight lock is a Redis key (SET NX PX, holding the request hash), and only
 * final answers go to the database. The record is read again after the lock is won, so a request that
 * finished just before is replayed rather than run twice.
 */
export class RedisIdempotencyGuard implements IdempotencyGuard {
  constructor(private readonly db: Db, private readonly redis: Redis, private readonly prefix: string, private readonly leaseMs: number) {}

  private lockKey({ apiKeyId, key }: IdempotencyRequest): string {
    return `${this.prefix}idem:${apiKeyId}:${Buffer.from(key).toString('base64url')}`;
  }

  async claim(request: IdempotencyRequest): Promise<Claim> {
    const lock = this.lockKey(request);
    const won = await this.redis.set(lock, request.requestHash, 'PX', this.leaseMs, 'NX');
    if (won !== 'OK') {
      const holder = await this.redis.get(lock);
      if (holder !== null && holder !== request.requestHash) return { outcome: 'mismatch' };
      return (await this.stored(request)) ?? { outcome: 'in_flight' };
    }
    const stored = await this.stored(request);
    if (stored) {
      await this.redis.del(lock);
      return stored;
    }
    return { outcome: 'claimed', id: null };
  }

  async complete(request: IdempotencyRequest, _claim: unknown, status: number, body: string): Promise<void> {
    await saveIdempotencyRecord(this.db, request.apiKeyId, request.key, request.requestHash, status, body);
    await this.redis.del(this.lockKey(request));
  }

  async release(request: IdempotencyRequest): Promise<void> {
    await this.redis.del(this.lockKey(request));
  }

  private async stored({ apiKeyId, key, requestHash }: IdempotencyRequest): Promise<Claim | undefined> {
    const record = await findIdempotencyRecord(this.db, apiKeyId, key);
    if (!record || record.state !== 'done') return undefined;
    if (record.request_hash !== requestHash) return { outcome: 'mismatch' };
    return { outcome: 'replay', status: record.status ?? 200, body: record.body ?? '' };
  }
}
