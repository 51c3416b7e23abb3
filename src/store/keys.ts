import { generateKey, hashKey, keyPrefix, type Scope, type Tier } from '../domain/keys.js';
import { invalidations } from './notifications.js';
import { isUniqueViolation } from '../db/errors.js';
import type { ApiKeyRow, Db, EntityRow } from '../db/types.js';
import { nowIso } from './sql.js';

export interface NewKey {
  entityId: number;
  tier: Tier;
  scopes: readonly Scope[];
  expiresAt: string | null;
}

/** Issues a key. Only its hash is stored; the clear key exists in the return value alone. */
export async function createKey(db: Db, spec: NewKey): Promise<{ key: string; row: ApiKeyRow }> {
  for (;;) {
    const key = generateKey();
    try {
      const row = await db.insertInto('api_keys').values({
        entity_id: spec.entityId, prefix: keyPrefix(key), key_hash: hashKey(key), tier: spec.tier,
        scopes: spec.scopes.join(' '), expires_at: spec.expiresAt, revoked_at: null, created_at: nowIso(), last_used_at: null,
      }).returningAll().executeTakeFirstOrThrow();
      return { key, row };
    } catch (error) {
      // A prefix collision (1 in 62^8 per pair) is retried with a new key; anything else is real.
      if (!isUniqueViolation(error)) throw error;
    }
  }
}

export const listKeys = (db: Db, entityId: number): Promise<ApiKeyRow[]> =>
  db.selectFrom('api_keys').selectAll().where('entity_id', '=', entityId).orderBy('id').execute();

/** Revokes a key by prefix; false when no live key has it. */
export async function revokeKey(db: Db, prefix: string): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ revoked_at: nowIso() })
    .where('prefix', '=', prefix).where('revoked_at', 'is', null).executeTakeFirst();
  invalidations.emit('key-changed', prefix);
  return Number(result.numUpdatedRows) > 0;
}

export interface KeyWithEntity {
  key: ApiKeyRow;
  entity: EntityRow;
}

/** The key (any state) with this hash, and its entity. */
export async function findKeyByHash(db: Db, keyHash: string): Promise<KeyWithEntity | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  if (!row) return undefined;
  const entity = await db.selectFrom('entities').selectAll().where('id', '=', row.entity_id).executeTakeFirstOrThrow();
  return { key: row, entity };
}

export async function touchKey(db: Db, id: number, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}

export const keyScopes = (row: ApiKeyRow): Scope[] => (row.scopes === '' ? [] : (row.scopes.split(' ') as Scope[]));
