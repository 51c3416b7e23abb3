import type { Redis } from 'ioredis';
import { redisCommand } from './redis.js';
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
 * finished just before is replayed rather than run twice. Redis unreachable: the claim fails with 503
 * before the request runs.
 */
export class RedisIdempotencyGuard implements IdempotencyGuard {
  constructor(
    private readonly db: Db, private readonly redis: Redis, private readonly prefix: string, private readonly leaseMs: number,
    private readonly onUnlockFailure: (error: unknown) => void = () => undefined,
  ) {}

  private lockKey({ apiKeyId, key }: IdempotencyRequest): string {
    return `${this.prefix}idem:${apiKeyId}:${Buffer.from(key).toString('base64url')}`;
  }

  async claim(request: IdempotencyRequest): Promise<Claim> {
    const lock = this.lockKey(request);
    const won = await redisCommand(this.redis.set(lock, request.requestHash, 'PX', this.leaseMs, 'NX'));
    if (won !== 'OK') {
      const holder = await redisCommand(this.redis.get(lock));
      if (holder !== null && holder !== request.requestHash) return { outcome: 'mismatch' };
      return (await this.stored(request)) ?? { outcome: 'in_flight' };
    }
    const stored = await this.stored(request);
    if (stored) {
      await this.unlock(request);
      return stored;
    }
    return { outcome: 'claimed', id: null };
  }

  async complete(request: IdempotencyRequest, _claim: unknown, status: number, body: string): Promise<void> {
    await saveIdempotencyRecord(this.db, request.apiKeyId, request.key, request.requestHash, status, body);
    await this.unlock(request);
  }

  release(request: IdempotencyRequest): Promise<void> {
    return this.unlock(request);
  }

  /**
   * Best effort: the request has run and its answer is final, so Redis failing now must not turn it
   * into an error. A lock left behind expires with its lease; a retry meanwhile gets the stored answer
   * (or 409 after a release).
   */
  private async unlock(request: IdempotencyRequest): Promise<void> {
    await this.redis.del(this.lockKey(request)).catch((error: unknown) => this.onUnlockFailure(error));
  }

  private async stored({ apiKeyId, key, requestHash }: IdempotencyRequest): Promise<Claim | undefined> {
    const record = await findIdempotencyRecord(this.db, apiKeyId, key);
    if (!record || record.state !== 'done') return undefined;
    if (record.request_hash !== requestHash) return { outcome: 'mismatch' };
    return { outcome: 'replay', status: record.status ?? 200, body: record.body ?? '' };
  }
}
