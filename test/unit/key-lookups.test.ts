import { afterEach, expect, test } from 'vitest';
import type { ApiKeyRow, EntityRow } from '../../src/db/types.js';
import { KeyCache } from '../../src/http/plugins/key-cache.js';
import type { KeyWithEntity } from '../../src/store/keys.js';
import { invalidations } from '../../src/store/notifications.js';

/**
 * The key cache's shared look-ups (src/http/plugins/key-cache.ts, `lookUp`): the requests of one key
 * that come while its look-up runs wait for it; a failure fails each of them; nothing is held once it
 * settles; a look-up is not joined once it is older than a cached entry may be, nor across a drop made
 * in this process (a revocation, a pause), and a look-up a drop overtook caches nothing.
 */

const caches: KeyCache[] = [];
afterEach(() => {
  for (const cache of caches.splice(0)) cache.close();
});

function newCache(): KeyCache {
  const cache = new KeyCache(5_000);
  caches.push(cache);
  return cache;
}

const found = (id: number, prefix = `ak_${id}`): KeyWithEntity => ({
  key: { id, prefix, scopes: 'read', last_used_at: null } as unknown as ApiKeyRow,
  entity: { id: 100 + id, slug: `gallery-${id}` } as unknown as EntityRow,
});

/** A look-up the test answers by hand, counting how many were started. */
function loader() {
  const pending: { resolve: (value: KeyWithEntity | undefined) => void; reject: (error: Error) => void }[] = [];
  return {
    pending,
    load: () => new Promise<KeyWithEntity | undefined>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

test('requests of one key while its look-up runs share it, and the entry it caches', async () => {
  const cache = newCache();
  const { pending, load } = loader();
  const now = Date.now();
  const waiting = Array.from({ length: 50 }, (_, i) => cache.lookUp('hash-1', now + i, load));
  expect(pending).toHaveLength(1);
  pending[0]!.resolve(found(1));
  const entries = await Promise.all(waiting);
  expect(new Set(entries).size).toBe(1);
  expect(entries[0]!.found.key.id).toBe(1);
  expect(cache.get('hash-1', now + 50)).toBe(entries[0]);
  // Another key has a look-up of its own.
  void cache.lookUp('hash-2', now, load);
  expect(pending).toHaveLength(2);
});

test('a look-up that fails fails every request that waits for it alike, and the next request looks up again', async () => {
  const cache = newCache();
  const { pending, load } = loader();
  const now = Date.now();
  const waiting = Array.from({ length: 5 }, () => cache.lookUp('hash-1', now, load));
  const outage = new Error('the database does not answer');
  pending[0]!.reject(outage);
  const settled = await Promise.allSettled(waiting);
  expect(settled.map((outcome) => (outcome.status === 'rejected' ? outcome.reason : outcome.status))).toEqual(Array(5).fill(outage));
  expect(cache.get('hash-1', now)).toBeUndefined();
  void cache.lookUp('hash-1', now, load);
  expect(pending).toHaveLength(2);
});

test('a key that is not there: one look-up for the requests meanwhile, nothing cached, the next request looks up again', async () => {
  const cache = newCache();
  const { pending, load } = loader();
  const now = Date.now();
  const waiting = Array.from({ length: 5 }, () => cache.lookUp('hash-1', now, load));
  pending[0]!.resolve(undefined);
  expect(await Promise.all(waiting)).toEqual(Array(5).fill(undefined));
  void cache.lookUp('hash-1', now, load);
  expect(pending).toHaveLength(2);
});

test('a look-up older than a cached entry may be (0.75 s) is not joined: the request looks up on its own', async () => {
  const cache = newCache();
  const { pending, load } = loader();
  const now = Date.now();
  const first = cache.lookUp('hash-1', now, load);
  void cache.lookUp('hash-1', now + 749, load);
  expect(pending).toHaveLength(1);
  const second = cache.lookUp('hash-1', now + 750, load);
  expect(pending).toHaveLength(2);
  // The later read is cached; the earlier, ending after it, does not replace it.
  pending[1]!.resolve(found(1));
  const later = await second;
  pending[0]!.resolve(found(1));
  expect(await first).toBe(later);
  expect(cache.get('hash-1', now + 750)).toBe(later);
});

test('a revocation or a pause in this process: requests after it do not join the look-up before it, which caches nothing', async () => {
  for (const drop of [() => invalidations.emit('key-changed', 'ak_1'), () => invalidations.emit('entity-changed', 101)]) {
    const cache = newCache();
    const { pending, load } = loader();
    const now = Date.now();
    const before = cache.lookUp('hash-1', now, load);
    drop();
    const after = cache.lookUp('hash-1', now, load);
    expect(pending).toHaveLength(2);
    // The read from before the drop answers the requests that came before it, and is not cached.
    pending[0]!.resolve(found(1));
    expect((await before)!.found.key.id).toBe(1);
    expect(cache.get('hash-1', now)).toBeUndefined();
    const revoked = found(1);
    revoked.key.revoked_at = new Date(now).toISOString();
    pending[1]!.resolve(revoked);
    expect((await after)!.found.key.revoked_at).toBe(revoked.key.revoked_at);
    expect(cache.get('hash-1', now)!.found.key.revoked_at).toBe(revoked.key.revoked_at);
  }
});
