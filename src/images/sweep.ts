import type { Db } from '../db/types.js';
import { knownHashes, sweepImageRows } from '../store/images.js';
import type { ImageStore } from './store/index.js';

export interface SweepReport {
  /** Records whose URL had no job and got one. */
  queued: number;
  /** Originals no URL used any more, forgotten. */
  originals: number;
  /** Stored derivatives of those (or of no known original), deleted. */
  deleted: number;
}

/**
 * Removes derivatives no record uses (docs/api.md, Images: deleting a record releases its image; the
 * sweep removes what nothing uses). The store is listed before the database is read: a job records
 * its original before it stores files, so every file listed here belongs to a hash the read after
 * it still knows, unless that original is gone for good.
 */
export async function sweepImages(db: Db, store: ImageStore, now: number): Promise<SweepReport> {
  const names: string[] = [];
  for await (const name of store.list()) names.push(name);
  const rows = await sweepImageRows(db, now);
  const known = await knownHashes(db);
  let deleted = 0;
  for (const name of names) {
    if (known.has(name.slice(0, 64))) continue;
    await store.delete(name);
    deleted++;
  }
  return { ...rows, deleted };
}
