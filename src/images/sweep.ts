import type { Db } from '../db/types.js';
import { knownHashes, sweepImageRows } from '../store/images.js';
import { derivativeFormat } from './derive.js';
import type { ImageStore } from './store/index.js';

export interface SweepReport {
  /** Records whose URL had no job and got one. */
  queued: number;
  /** Originals no URL used any more, forgotten. */
  originals: number;
  /** Stored derivatives of those (or of no known original), deleted. */
  deleted: number;
  /** Objects under the store's location whose names the service never writes: left alone. */
  foreign: number;
}

/**
 * Removes derivatives no record uses (docs/api.md, Images: deleting a record releases its image; the
 * sweep removes what nothing uses). The store is listed before the database is read: a job records
 * its original before it stores files, so every file listed here belongs to a hash the read after
 * it still knows, unless that original is gone for good.
 * Only names of the service's own shape (`${sha256}-${width}.${ext}`, derive.ts) are ever deleted: a
 * store may share its folder or bucket prefix with other tools (docs/deploy.md, Images), whose files stay.
 */
export async function sweepImages(db: Db, store: ImageStore, now: number): Promise<SweepReport> {
  const names: string[] = [];
  for await (const name of store.list()) names.push(name);
  const rows = await sweepImageRows(db, now);
  const known = await knownHashes(db);
  let deleted = 0;
  let foreign = 0;
  for (const name of names) {
    if (derivativeFormat(name) === undefined) {
      foreign++;
      continue;
    }
    if (known.has(name.slice(0, 64))) continue;
    await store.delete(name);
    deleted++;
  }
  return { ...rows, deleted, foreign };
}
