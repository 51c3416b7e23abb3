import type { Db } from '../db/types.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type Claim =
  | { outcome: 'claimed'; id: number | null }
  | { outcome: 'replay'; status: number; body: string }
  | { outcome: 'mismatch' }
  | { outcome: 'in_flight' };

/**
 * Claims an Idempotency-Key for one request. The unique (api key, idempotency key) index decides
 * which of several concurrent requests runs; the others see it in flight, or replay its answer.
 */
export async function claimIdempotencyKey(db: Db, apiKeyId: number, key: string, requestHash: string, leaseMs: number): Promise<Claim> {
  const now = Date.now();
  const nowIso = new Date(now).toISOString();
  // Expired records, and claims whose process died before answering, make way for a new claim.
  await db.deleteFrom('idempotency_keys')
    .where('api_key_id', '=', apiKeyId).where('key', '=', key)
    .where((eb) => eb.or([
      eb('created_at', '<', new Date(now - IDEMPOTENCY_TTL_MS).toISOString()),
      eb.and([eb('state', '=', 'in_flight'), eb('locked_until', '<', nowIso)]),
    ]))
    .execute();
  const claimed = await db.insertInto('idempotency_keys')
    .values({
      api_key_id: apiKeyId, key, request_hash: requestHash, state: 'in_flight', status: null, body: null,
      created_at: nowIso, locked_until: new Date(now + leaseMs).toISOString(),
    })
    .onConflict((oc) => oc.columns(['api_key_id', 'key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (claimed) return { outcome: 'claimed', id: Number(claimed.id) };
  const existing = await db.selectFrom('idempotency_keys').selectAll()
    .where('api_key_id', '=', apiKeyId).where('key', '=', key).executeTakeFirst();
  // Gone between the insert and the read: another request released it; the caller may retry.
  if (!existing) return { outcome: 'in_flight' };
  if (existing.request_hash !== requestHash) return { outcome: 'mismatch' };
  if (existing.state === 'in_flight') return { outcome: 'in_flight' };
  return { outcome: 'replay', status: existing.status ?? 200, body: existing.body ?? '' };
}

/** Keeps the final answer of a claimed request for replay. */
export async function completeIdempotencyKey(db: Db, id: number, status: number, body: string): Promise<void> {
  await db.updateTable('idempotency_keys').set({ state: 'done', status, body }).where('id', '=', id).execute();
}

/** Forgets a claim whose answer is not final (5xx, 429), so a retry runs the request again. */
export async function releaseIdempotencyKey(db: Db, id: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('id', '=', id).execute();
}

export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys')
    .where('created_at', '<', new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString()).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A stored final answer for this key that has not expired (the Redis-locked mode keeps only these). */
export async function findIdempotencyRecord(db: Db, apiKeyId: number, key: string) {
  return db.selectFrom('idempotency_keys').select(['request_hash', 'state', 'status', 'body'])
    .where('api_key_id', '=', apiKeyId).where('key', '=', key)
    .where('created_at', '>=', new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString())
    .executeTakeFirst();
}

/** Stores a final answer directly as done (the Redis-locked mode, where Redis holds the in-flight claim). */
export async function saveIdempotencyRecord(db: Db, apiKeyId: number, key: string, requestHash: string, status: number, body: string): Promise<void> {
  const now = new Date().toISOString();
  await db.insertInto('idempotency_keys')
    .values({ api_key_id: apiKeyId, key, request_hash: requestHash, state: 'done', status, body, created_at: now, locked_until: now })
    .onConflict((oc) => oc.columns(['api_key_id', 'key']).doUpdateSet({ request_hash: requestHash, state: 'done', status, body, created_at: now, locked_until: now }))
    .execute();
}
