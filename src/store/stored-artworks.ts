import type { ArtworkRow, Db } from '../db/types.js';
import { entityMarks } from './entity-marks.js';

/**
 * PostgreSQL: the artworks this process last re-posted, as stored, each with its row version
 * (`xmin`). A further re-post of one is merged here and written in one statement, which writes only
 * if the work is still the POST's match and still that version (store/artworks.ts,
 * `updateStoredAndRecord`): a stale entry costs one more statement, never a wrong write. New works
 * are not kept (holding each new row cost the process ~15 µs per new POST, docs/performance.md,
 * Writes, lists and growth): a work's first re-post takes two statements and is kept. Keyed the way
 * a re-post finds its work: by external_id when the work has one, else by fingerprint. One map per
 * database, as store/artists.ts
 * keeps its artists; bounded by count and by size (a description may be 20,000 characters), the
 * least recently written going first. A catalog larger than the bound, re-posted in a cycle, finds
 * none: each of its re-posts then takes the two statements of an uncached one.
 */
export interface StoredArtwork { row: ArtworkRow; version: string }

const STORED_MAX = 5_000;
const STORED_BYTES_MAX = 8 * 1024 * 1024;

interface Stored { entries: Map<string, StoredArtwork & { bytes: number }>; bytes: number }
const storedByDatabase = new WeakMap<object, Stored>();

function storedOf(db: Db): Stored {
  const database = db.getExecutor().adapter;
  let stored = storedByDatabase.get(database);
  if (!stored) storedByDatabase.set(database, (stored = { entries: new Map(), bytes: 0 }));
  return stored;
}

const keyOf = (entityId: number, externalId: string | null, fingerprint: string) =>
  (externalId !== null ? `${entityId}:e:${externalId}` : `${entityId}:f:${fingerprint}`);

/** The work a re-post with these keys most likely updates, if this process re-posted it; the statement checks. */
export function storedArtwork(db: Db, entityId: number, externalId: string | null, fingerprint: string): StoredArtwork | undefined {
  return storedOf(db).entries.get(keyOf(entityId, externalId, fingerprint));
}

/**
 * Remembers a work as its statement stored it (`version`: the `xmin` it answered), the latest last;
 * `before`: the same work as read before the write, whose key it may have changed. A row whose text
 * the database would not store as it is (a lone surrogate becomes U+FFFD) is not kept.
 */
export function rememberArtwork(db: Db, row: ArtworkRow, version: string, before?: ArtworkRow): void {
  const stored = storedOf(db);
  if (before) forgetKey(stored, keyOf(before.entity_id, before.external_id, before.source_fingerprint));
  const key = keyOf(row.entity_id, row.external_id, row.source_fingerprint);
  forgetKey(stored, key);
  const bytes = sizeOf(row);
  if (bytes === undefined) return;
  stored.entries.set(key, { row: { ...row }, version, bytes });
  stored.bytes += bytes;
  for (const [oldest, entry] of stored.entries) {
    if (stored.entries.size <= STORED_MAX && stored.bytes <= STORED_BYTES_MAX) break;
    stored.entries.delete(oldest);
    stored.bytes -= entry.bytes;
  }
}

/** Forgets the work a re-post with these keys found stale. */
export function forgetArtwork(db: Db, entityId: number, externalId: string | null, fingerprint: string): void {
  forgetKey(storedOf(db), keyOf(entityId, externalId, fingerprint));
}

function forgetKey(stored: Stored, key: string): void {
  const entry = stored.entries.get(key);
  if (!entry) return;
  stored.entries.delete(key);
  stored.bytes -= entry.bytes;
}

/** About the bytes a row takes in memory (UTF-16 text, a slot per field); undefined for text PostgreSQL would change. */
function sizeOf(row: ArtworkRow): number | undefined {
  let bytes = 64;
  for (const value of Object.values(row)) {
    if (typeof value !== 'string') bytes += 16;
    else if (!value.isWellFormed()) return undefined;
    else bytes += 16 + 2 * value.length;
  }
  return bytes;
}

/**
 * The entities whose last POST by this process was a re-post. For one of them, a POST of a work this
 * process does not hold is tried first as a re-post that changes nothing but the sync time (the common
 * POST of a sync: store/artworks.ts, `repostUnchangedOf`, one statement instead of two); for any other,
 * as a new work (one statement). A wrong guess costs one more statement, never a wrong write. One set
 * per database, bounded (store/entity-marks.ts), the earliest added going first.
 */
const REPOSTING_MAX = 10_000;
const repostingOf = entityMarks(REPOSTING_MAX);

/** Whether the entity's last POST by this process was a re-post. */
export const repostLikely = (db: Db, entityId: number): boolean => repostingOf(db).has(entityId);

/** What a POST of the entity turned out to be; an entity still re-posting keeps its place. */
export function rememberPosted(db: Db, entityId: number, reposted: boolean): void {
  if (reposted) repostingOf(db).mark(entityId);
  else repostingOf(db).unmark(entityId);
}
