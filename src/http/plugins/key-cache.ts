import type { Scope } from '../../domain/keys.js';
import type { Actor } from '../../store/changelog.js';
import type { Db } from '../../db/types.js';
import { keyScopes, withdrawnKeys, type KeyWithEntity } from '../../store/keys.js';
import { invalidations } from '../../store/notifications.js';

/** A key with what every request of it needs, worked out once per cache entry. */
export interface AuthenticatedKey extends KeyWithEntity {
  scopes: Scope[];
  actor: Actor;
}

/**
 * How long a key checked against the database is used before it must be checked again: a key revoked or
 * paused elsewhere is refused within a second (docs/operations.md, Rate limits with several processes),
 * with a quarter of it left for the check's own read and the request on a busy machine.
 */
const KEY_CHECK_MS = 750;
/** The cache checks its keys again this often, in the background, so that the keys in use never wait for a check. */
const RECHECK_EVERY_MS = 250;
/** At most this many keys (the most recently cached) are checked in one round; the others are looked up again when used. */
const RECHECK_MAX = 200;

/** One cached key. */
export interface KeyCacheEntry {
  found: AuthenticatedKey;
  expires: number;
  touched: number;
  /** When the database last said the key was usable (the start of that read). */
  checked: number;
}

/** A look-up of one key in flight, shared by every request of that key that comes while it runs. */
interface Flight {
  /** When the look-up started: the `checked` of the entry it caches. */
  started: number;
  entry: Promise<KeyCacheEntry | undefined>;
}

/** Cached key hashes by one field of their entry (entity id, key prefix, key id): a drop reads only the entries it drops. */
class HashesBy<K> {
  private readonly hashes = new Map<K, Set<string>>();

  add(field: K, hash: string): void {
    const set = this.hashes.get(field);
    if (set) set.add(hash);
    else this.hashes.set(field, new Set([hash]));
  }

  remove(field: K, hash: string): void {
    const set = this.hashes.get(field);
    if (set?.delete(hash) && set.size === 0) this.hashes.delete(field);
  }

  /** The hashes under `field`, a copy: the caller removes them. */
  of(field: K): string[] {
    return [...(this.hashes.get(field) ?? [])];
  }

  clear(): void {
    this.hashes.clear();
  }
}

/**
 * Authenticated keys with their entity, by key hash (never by the clear key), for a few seconds.
 * Revocations and pauses made in this process drop entries at once. Changes made elsewhere (the CLI,
 * another server) take effect within a second: an entry is used only within KEY_CHECK_MS (0.75 s) of
 * the last time the database confirmed it, and a background round every 250 ms confirms the cached
 * keys again in one statement (dropping a revoked key, or one of a paused entity), so a key in use is
 * not looked up on a request.
 *
 * Each round and each drop costs what it reads, not the size of the cache (10,000 keys): a round reads
 * the RECHECK_MAX most recently cached keys, kept apart in that order, and a drop finds its entries by
 * entity, key prefix or key id (bench/key-cache.mjs, docs/performance.md, API key cache).
 *
 * A key not cached (or no longer usable as cached) is looked up once however many requests of it come
 * while the look-up runs (`lookUp`): they share it, its entry or its failure. Only look-ups in flight
 * are held, one per key hash, each gone when it settles.
 */
export class KeyCache {
  private readonly entries = new Map<string, KeyCacheEntry>();
  /** The RECHECK_MAX most recently cached hashes, oldest first (an entry cached again moves to the end). */
  private readonly recent = new Set<string>();
  private readonly byEntity = new HashesBy<number>();
  private readonly byPrefix = new HashesBy<string>();
  private readonly byKeyId = new HashesBy<number>();
  /** The look-ups in flight, by key hash. */
  private readonly flights = new Map<string, Flight>();
  /** Counts the drops made in this process: a look-up that a drop overtook does not cache what it read. */
  private drops = 0;
  private readonly onEntity = (entityId: number) => this.dropped(this.byEntity.of(entityId));
  private readonly onKey = (prefix: string) => this.dropped(this.byPrefix.of(prefix));
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly ttlMs: number, private readonly maxEntries = 10_000) {
    invalidations.on('entity-changed', this.onEntity);
    invalidations.on('key-changed', this.onKey);
  }

  /** Starts the background checks against `db`. */
  recheckOn(db: Db): void {
    this.timer = setInterval(() => void this.recheck((ids) => withdrawnKeys(db, ids)), RECHECK_EVERY_MS);
    this.timer.unref();
  }

  get(hash: string, now: number) {
    const entry = this.entries.get(hash);
    if (!entry || entry.expires <= now || now - entry.checked >= KEY_CHECK_MS) return undefined;
    return entry;
  }

  /**
   * The key of `hash` as the database has it, cached (undefined when there is none). Requests that come
   * while a look-up of the same hash runs wait for that one instead of sending their own: one statement
   * for a flood of requests whose key's entry ran out, not one per request (docs/performance.md, API key
   * cache). A look-up that fails fails each of them alike. A look-up is joined only within KEY_CHECK_MS of
   * its start, the age a cached entry may have, and not across a drop made in this process: a request
   * that comes after a revocation or a pause here never gets what was read before it.
   */
  lookUp(hash: string, now: number, load: () => Promise<KeyWithEntity | undefined>): Promise<KeyCacheEntry | undefined> {
    const flying = this.flights.get(hash);
    if (flying && now - flying.started < KEY_CHECK_MS) return flying.entry;
    const drops = this.drops;
    const landed = () => {
      if (this.flights.get(hash) === flight) this.flights.delete(hash);
    };
    const flight: Flight = {
      started: now,
      entry: new Promise<KeyWithEntity | undefined>((resolve) => resolve(load())).then((found) => {
        landed();
        if (!found) return undefined;
        // Overtaken by a drop: answered as read (the requests came before it), not cached.
        if (drops !== this.drops) return this.entryOf(found, now);
        // A look-up that started later has already cached what it read.
        const cached = this.entries.get(hash);
        return cached && cached.checked >= now ? cached : this.set(hash, found, now);
      }, (error: unknown) => {
        landed();
        throw error;
      }),
    };
    this.flights.set(hash, flight);
    return flight.entry;
  }

  set(hash: string, found: KeyWithEntity, now: number) {
    if (this.entries.size >= this.maxEntries) this.clear();
    else this.remove(hash);
    const entry = this.entryOf(found, now);
    const { key } = found;
    this.entries.set(hash, entry);
    this.byEntity.add(entry.found.actor.entityId, hash);
    this.byPrefix.add(key.prefix, hash);
    this.byKeyId.add(key.id, hash);
    this.recent.add(hash);
    if (this.recent.size > RECHECK_MAX) this.recent.delete(this.recent.values().next().value!);
    return entry;
  }

  private entryOf({ key, entity }: KeyWithEntity, now: number): KeyCacheEntry {
    return {
      found: { key, entity, scopes: keyScopes(key), actor: { entityId: entity.id, entitySlug: entity.slug, source: `api:${key.prefix}` } },
      expires: now + this.ttlMs,
      touched: key.last_used_at ? Date.parse(key.last_used_at) : 0,
      checked: now,
    };
  }

  close(): void {
    clearInterval(this.timer);
    invalidations.off('entity-changed', this.onEntity);
    invalidations.off('key-changed', this.onKey);
    this.flights.clear();
    this.clear();
  }

  /**
   * One round: the most recently cached keys still within their time (at most RECHECK_MAX; the others are
   * looked up again when used) are confirmed by `withdrawn`, which names those no longer usable; those are dropped.
   */
  async recheck(withdrawn: (ids: number[]) => Promise<Set<number>>): Promise<void> {
    if (this.checking || this.recent.size === 0) return;
    this.checking = true;
    const started = Date.now();
    // Cached in this order with one time to live: an expired one means every one before it has expired too.
    const live: KeyCacheEntry[] = [];
    for (const hash of this.recent) {
      const entry = this.entries.get(hash)!;
      if (entry.expires > started) live.push(entry);
    }
    try {
      const gone = await withdrawn(live.map((entry) => entry.found.key.id));
      for (const entry of live) if (!gone.has(entry.found.key.id) && entry.checked < started) entry.checked = started;
      for (const id of gone) this.removeAll(this.byKeyId.of(id));
    } catch {
      // The database did not answer: the entries are not confirmed, and are looked up again after KEY_CHECK_MS.
    } finally {
      this.checking = false;
    }
  }

  /** A revocation or a pause in this process: its entries go, and no look-up started before it is joined or cached. */
  private dropped(hashes: readonly string[]): void {
    this.drops++;
    this.flights.clear();
    this.removeAll(hashes);
  }

  private removeAll(hashes: readonly string[]): void {
    for (const hash of hashes) this.remove(hash);
  }

  private remove(hash: string): void {
    const entry = this.entries.get(hash);
    if (!entry) return;
    this.entries.delete(hash);
    this.recent.delete(hash);
    this.byEntity.remove(entry.found.actor.entityId, hash);
    this.byPrefix.remove(entry.found.key.prefix, hash);
    this.byKeyId.remove(entry.found.key.id, hash);
  }

  private clear(): void {
    this.entries.clear();
    this.recent.clear();
    this.byEntity.clear();
    this.byPrefix.clear();
    this.byKeyId.clear();
  }
}
