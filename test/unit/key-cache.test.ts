import { afterEach, expect, test } from 'vitest';
import type { ApiKeyRow, EntityRow } from '../../src/db/types.js';
import { KeyCache } from '../../src/http/plugins/key-cache.js';
import { invalidations } from '../../src/store/notifications.js';

/**
 * The API key cache (src/http/plugins/key-cache.ts): a revocation or a pause in this process drops the
 * entries of that key or entity at once, and those only; a background round confirms the most recently
 * cached keys and drops the withdrawn ones. A drop reads the entries it drops, not every cached key: the
 * keys and entities here count how often their prefix and id are read.
 */

const TTL_MS = 5_000;
let reads = 0;
const caches: KeyCache[] = [];
afterEach(() => {
  for (const cache of caches.splice(0)) cache.close();
});

function entity(id: number): EntityRow {
  return { slug: `gallery-${id}`, get id() { reads++; return id; } } as unknown as EntityRow;
}

function key(id: number, prefix = `ak_${id}`): ApiKeyRow {
  return { scopes: 'read', last_used_at: null, get id() { reads++; return id; }, get prefix() { reads++; return prefix; } } as unknown as ApiKeyRow;
}

/** A cache of `count` keys, key i of entity i % 10, cached at `now`. */
function filled(count: number, now: number): KeyCache {
  const cache = new KeyCache(TTL_MS);
  caches.push(cache);
  const entities = Array.from({ length: 10 }, (_, id) => entity(id));
  for (let i = 0; i < count; i++) cache.set(`hash-${i}`, { key: key(i), entity: entities[i % 10]! }, now);
  return cache;
}

const cached = (cache: KeyCache, count: number, now: number) => Array.from({ length: count }, (_, i) => i).filter((i) => cache.get(`hash-${i}`, now));

test('an entity changed in this process drops its keys, and only those, reading only them', () => {
  const now = Date.now();
  const cache = filled(10_000, now);
  reads = 0;
  invalidations.emit('entity-changed', 3);
  // Each of the 1,000 dropped entries may be read a few times; the other 9,000 are not read.
  expect(reads).toBeLessThanOrEqual(1_000 * 3);
  const left = cached(cache, 10_000, now);
  expect(left).toHaveLength(9_000);
  expect(left.some((i) => i % 10 === 3)).toBe(false);
});

test('a key changed in this process drops that key, and only it, reading only it', () => {
  const now = Date.now();
  const cache = filled(10_000, now);
  reads = 0;
  invalidations.emit('key-changed', 'ak_4242');
  expect(reads).toBeLessThanOrEqual(3);
  expect(cached(cache, 10_000, now)).toEqual(Array.from({ length: 10_000 }, (_, i) => i).filter((i) => i !== 4242));
  // Cached again, it is dropped again by the next change.
  cache.set('hash-4242', { key: key(4242), entity: entity(2) }, now);
  expect(cache.get('hash-4242', now)).toBeDefined();
  invalidations.emit('entity-changed', 2);
  expect(cache.get('hash-4242', now)).toBeUndefined();
  expect(cached(cache, 10_000, now)).toHaveLength(9_000);
});

test('a round confirms the 200 most recently cached keys still within their time and drops those withdrawn', async () => {
  const then = Date.now() - 600;
  const cache = filled(1_000, then);
  // Cached again (a later lookup): the most recent of all.
  cache.set('hash-5', { key: key(5), entity: entity(5) }, then);
  let asked: number[] = [];
  await cache.recheck(async (ids) => {
    asked = ids;
    return new Set([5, 999]);
  });
  expect(asked).toEqual([...Array.from({ length: 199 }, (_, i) => 801 + i), 5]);
  // 200 ms later: the confirmed keys are used, the withdrawn ones are gone, the others are due for a lookup.
  const later = then + 800;
  expect(cached(cache, 1_000, later)).toEqual(Array.from({ length: 198 }, (_, i) => 801 + i));
  expect(cache.get('hash-5', then)).toBeUndefined();
  expect(cache.get('hash-999', then)).toBeUndefined();
  expect(cache.get('hash-800', then)).toBeDefined();
});
