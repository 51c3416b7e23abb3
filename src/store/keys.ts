import { sql } from 'kysely';
import { nowIso } from '../clock.js';
import { generateKey, hashKey, keyPrefix, type Scope, type Tier } from '../domain/keys.js';
import { read, transaction } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { ApiKeyRow, Db, EntityRow } from '../db/types.js';
import { all, first } from '../db/work.js';
import { invalidations } from './notifications.js';
import { isPostgres } from './sql.js';

export interface NewKey {
  entityId: number;
  tier: Tier;
  scopes: readonly Scope[];
  expiresAt: string | null;
}

const insertKey = statement((db, p: Params<Omit<ApiKeyRow, 'id'>>) => db.insertInto('api_keys').values({
  entity_id: p.entity_id, prefix: p.prefix, key_hash: p.key_hash, tier: p.tier, scopes: p.scopes,
  expires_at: p.expires_at, revoked_at: p.revoked_at, created_at: p.created_at, last_used_at: p.last_used_at,
}).onConflict((oc) => oc.doNothing()).returningAll());

/** Issues a key. Only its hash is stored; the clear key exists in the return value alone. */
export function createKey(db: Db, spec: NewKey): Promise<{ key: string; row: ApiKeyRow }> {
  return transaction(db, function* () {
    for (;;) {
      const key = generateKey();
      const row = yield* first(insertKey, {
        entity_id: spec.entityId, prefix: keyPrefix(key), key_hash: hashKey(key), tier: spec.tier,
        scopes: spec.scopes.join(' '), expires_at: spec.expiresAt, revoked_at: null, created_at: nowIso(), last_used_at: null,
      });
      // A prefix collision (1 in 62^8 per pair) inserts nothing: another key is drawn.
      if (row) return { key, row };
    }
  });
}

// The operator's list; an entity has a handful of keys, but nothing bounds them.
const keysOf = statement((db, p: Params<{ entityId: number }>) =>
  db.selectFrom('api_keys').selectAll().where('entity_id', '=', p.entityId).orderBy('id'), { cost: 'scan' });

export const listKeys = (db: Db, entityId: number): Promise<ApiKeyRow[]> => read(db, () => all(keysOf, { entityId }));

const revoke = statement((db, p: Params<{ prefix: string; at: string }>) => db.updateTable('api_keys').set({ revoked_at: p.at })
  .where('prefix', '=', p.prefix).where('revoked_at', 'is', null).returning('id'));

/** Revokes a key by prefix; false when no live key has it. */
export async function revokeKey(db: Db, prefix: string): Promise<boolean> {
  const revoked = await transaction(db, () => first(revoke, { prefix, at: nowIso() }));
  invalidations.emit('key-changed', prefix);
  return revoked !== undefined;
}

export interface KeyWithEntity {
  key: ApiKeyRow;
  entity: EntityRow;
}

const keyByHash = statement((db, p: Params<{ keyHash: string }>) => db.selectFrom('api_keys').selectAll().where('key_hash', '=', p.keyHash));
const entityOfKey = statement((db, p: Params<{ id: number }>) => db.selectFrom('entities').selectAll().where('id', '=', p.id));

/** The key (any state) with this hash, and its entity. */
export function findKeyByHash(db: Db, keyHash: string): Promise<KeyWithEntity | undefined> {
  return read(db, function* () {
    const key = yield* first(keyByHash, { keyHash });
    if (!key) return undefined;
    const entity = yield* first(entityOfKey, { id: key.entity_id });
    if (!entity) throw new Error(`key ${key.prefix} has no entity`);
    return { key, entity };
  });
}

/** The keys of `ids` (a PostgreSQL array literal, or JSON on SQLite) that are not revoked and whose entity is not paused. */
const usableKeys = statement((db, p: Params<{ ids: string }>) => {
  const ids = isPostgres(db) ? sql<number>`(select unnest(cast(${p.ids} as bigint[])))` : sql<number>`(select value from json_each(${p.ids}))`;
  return db.selectFrom('api_keys').innerJoin('entities', 'entities.id', 'api_keys.entity_id').select('api_keys.id')
    .where('api_keys.id', 'in', ids).where('api_keys.revoked_at', 'is', null).where('entities.paused_at', 'is', null);
});

/** Of these keys (at most a few hundred: one statement), the ones no longer usable: revoked, gone, or of a paused entity. */
export function withdrawnKeys(db: Db, ids: readonly number[]): Promise<Set<number>> {
  const list = isPostgres(db) ? `{${ids.join(',')}}` : JSON.stringify(ids);
  return read(db, function* () {
    const usable = new Set((yield* all(usableKeys, { ids: list })).map((row) => Number(row.id)));
    return new Set(ids.filter((id) => !usable.has(id)));
  });
}

const touch = statement((db, p: Params<{ id: number; at: string }>) => db.updateTable('api_keys').set({ last_used_at: p.at }).where('id', '=', p.id));

export function touchKey(db: Db, id: number, at: string): Promise<void> {
  return transaction(db, () => first(touch, { id, at })).then(() => undefined);
}

export const keyScopes = (row: ApiKeyRow): Scope[] => (row.scopes === '' ? [] : (row.scopes.split(' ') as Scope[]));

const liveKeyByPrefix = statement((db, p: Params<{ prefix: string }>) => db.selectFrom('api_keys').selectAll().where('prefix', '=', p.prefix));
const expireKey = statement((db, p: Params<{ id: number; at: string }>) => db.updateTable('api_keys').set({ expires_at: p.at }).where('id', '=', p.id));

/** A key that still works: not revoked and not expired. */
export const isLive = (row: ApiKeyRow, now = Date.now()): boolean => !row.revoked_at && !(row.expires_at && Date.parse(row.expires_at) <= now);

/**
 * Rolls a key (docs/api.md, Authentication): a new key with the same entity, tier and scopes, while the old one
 * expires at `oldExpiresAt` (or earlier, if it was to expire sooner). Undefined when no live key has
 * the prefix, or when `entityId` is given and the key is another entity's.
 */
export async function rollKey(db: Db, prefix: string, oldExpiresAt: string, entityId?: number): Promise<{ key: string; row: ApiKeyRow; old: ApiKeyRow } | undefined> {
  const rolled = await transaction(db, function* () {
    const old = yield* first(liveKeyByPrefix, { prefix });
    if (!old || !isLive(old) || (entityId !== undefined && old.entity_id !== entityId)) return undefined;
    for (;;) {
      const key = generateKey();
      const row = yield* first(insertKey, {
        entity_id: old.entity_id, prefix: keyPrefix(key), key_hash: hashKey(key), tier: old.tier, scopes: old.scopes,
        expires_at: null, revoked_at: null, created_at: nowIso(), last_used_at: null,
      });
      if (!row) continue;
      const expiresAt = old.expires_at && old.expires_at < oldExpiresAt ? old.expires_at : oldExpiresAt;
      yield* first(expireKey, { id: old.id, at: expiresAt });
      return { key, row, old: { ...old, expires_at: expiresAt } };
    }
  });
  if (rolled) invalidations.emit('key-changed', prefix);
  return rolled;
}

/** The key with this prefix among an entity's keys (any state). */
export async function findEntityKey(db: Db, entityId: number, prefix: string): Promise<ApiKeyRow | undefined> {
  const row = await read(db, () => first(liveKeyByPrefix, { prefix }));
  return row?.entity_id === entityId ? row : undefined;
}
