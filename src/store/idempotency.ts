import { read, transaction } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Db } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { withoutShownSecret } from '../domain/keys.js';

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export type Claim =
  | { outcome: 'claimed'; id: number | null }
  | { outcome: 'replay'; status: number; body: string }
  | { outcome: 'mismatch' }
  | { outcome: 'in_flight' };

type Keyed = { apiKeyId: number; key: string };

// Expired records, and claims whose process died before answering, make way for a new claim.
const dropStale = statement((db, p: Params<Keyed & { expiredBefore: string; now: string }>) => db.deleteFrom('idempotency_keys')
  .where('api_key_id', '=', p.apiKeyId).where('key', '=', p.key)
  .where((eb) => eb.or([
    eb('created_at', '<', p.expiredBefore),
    eb.and([eb('state', '=', 'in_flight'), eb('locked_until', '<', p.now)]),
  ])));

const insertClaim = statement((db, p: Params<Keyed & { requestHash: string; now: string; lockedUntil: string }>) => db.insertInto('idempotency_keys')
  .values({
    api_key_id: p.apiKeyId, key: p.key, request_hash: p.requestHash, state: 'in_flight', status: null, body: null,
    created_at: p.now, locked_until: p.lockedUntil,
  })
  .onConflict((oc) => oc.columns(['api_key_id', 'key']).doNothing())
  .returning('id'));

const record = statement((db, p: Params<Keyed>) => db.selectFrom('idempotency_keys').selectAll()
  .where('api_key_id', '=', p.apiKeyId).where('key', '=', p.key));

/**
 * Claims an Idempotency-Key for one request. The unique (api key, idempotency key) index decides
 * which of several concurrent requests runs; the others see it in flight, or replay its answer.
 */
export function claimIdempotencyKey(db: Db, apiKeyId: number, key: string, requestHash: string, leaseMs: number): Promise<Claim> {
  const now = Date.now();
  const times = {
    now: new Date(now).toISOString(),
    expiredBefore: new Date(now - IDEMPOTENCY_TTL_MS).toISOString(),
    lockedUntil: new Date(now + leaseMs).toISOString(),
  };
  return transaction(db, () => claim({ apiKeyId, key }, requestHash, times));
}

function* claim(keyed: Keyed, requestHash: string, times: { now: string; expiredBefore: string; lockedUntil: string }): Work<Claim> {
  yield* first(dropStale, { ...keyed, ...times });
  const claimed = yield* first(insertClaim, { ...keyed, requestHash, ...times });
  if (claimed) return { outcome: 'claimed', id: Number(claimed.id) };
  const existing = yield* first(record, keyed);
  // Gone between the insert and the read: another request released it; the caller may retry.
  if (!existing) return { outcome: 'in_flight' };
  if (existing.request_hash !== requestHash) return { outcome: 'mismatch' };
  if (existing.state === 'in_flight') return { outcome: 'in_flight' };
  return { outcome: 'replay', status: existing.status ?? 200, body: existing.body ?? '' };
}

const complete = statement((db, p: Params<{ id: number; status: number; body: string }>) =>
  db.updateTable('idempotency_keys').set({ state: 'done', status: p.status, body: p.body }).where('id', '=', p.id));

/** Keeps the final answer of a claimed request for replay, without a secret it showed. */
export async function completeIdempotencyKey(db: Db, id: number, status: number, body: string): Promise<void> {
  await transaction(db, () => first(complete, { id, status, body: withoutShownSecret(body) }));
}

const release = statement((db, p: Params<{ id: number }>) => db.deleteFrom('idempotency_keys').where('id', '=', p.id));

/** Forgets a claim whose answer is not final (5xx, 429), so a retry runs the request again. */
export async function releaseIdempotencyKey(db: Db, id: number): Promise<void> {
  await transaction(db, () => first(release, { id }));
}

const SWEEP_CHUNK = 500;
// A bounded number of rows per statement, over the created_at index: a sweep never holds the database
// (or, on SQLite, the event loop) for a time that grows with the traffic of a day.
const expiredChunk = statement((db, p: Params<{ expiredBefore: string }>) => db.deleteFrom('idempotency_keys')
  .where('id', 'in', db.selectFrom('idempotency_keys').select('id').where('created_at', '<', p.expiredBefore).limit(SWEEP_CHUNK))
  .returning('id'));

/** Deletes the records older than 24 hours, a chunk per transaction; the number deleted. */
export async function deleteExpiredIdempotencyKeys(db: Db): Promise<number> {
  const expiredBefore = new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString();
  let deleted = 0;
  for (;;) {
    const chunk = (await transaction(db, () => all(expiredChunk, { expiredBefore }))).length;
    deleted += chunk;
    if (chunk < SWEEP_CHUNK) return deleted;
  }
}

const liveRecord = statement((db, p: Params<Keyed & { expiredBefore: string }>) => db.selectFrom('idempotency_keys')
  .select(['request_hash', 'state', 'status', 'body'])
  .where('api_key_id', '=', p.apiKeyId).where('key', '=', p.key).where('created_at', '>=', p.expiredBefore));

/** A stored final answer for this key that has not expired (the Redis-locked mode keeps only these). */
export function findIdempotencyRecord(db: Db, apiKeyId: number, key: string) {
  return read(db, () => first(liveRecord, { apiKeyId, key, expiredBefore: new Date(Date.now() - IDEMPOTENCY_TTL_MS).toISOString() }));
}

const saveDone = statement((db, p: Params<Keyed & { requestHash: string; status: number; body: string; now: string }>) => db.insertInto('idempotency_keys')
  .values({ api_key_id: p.apiKeyId, key: p.key, request_hash: p.requestHash, state: 'done', status: p.status, body: p.body, created_at: p.now, locked_until: p.now })
  .onConflict((oc) => oc.columns(['api_key_id', 'key'])
    .doUpdateSet({ request_hash: p.requestHash, state: 'done', status: p.status, body: p.body, created_at: p.now, locked_until: p.now })));

/** Stores a final answer directly as done (the Redis-locked mode, where Redis holds the in-flight claim), without a secret it showed. */
export async function saveIdempotencyRecord(db: Db, apiKeyId: number, key: string, requestHash: string, status: number, body: string): Promise<void> {
  await transaction(db, () => first(saveDone, { apiKeyId, key, requestHash, status, body: withoutShownSecret(body), now: new Date().toISOString() }));
}
