import type { Db } from '../db/types.js';

/** A bounded set of entity ids this process keeps for one database (`entityMarks`). */
export interface EntityMarks {
  has(entityId: number): boolean;
  /**
   * Marks the entity, as the newest if it was not marked; a marked one keeps its place (unmark it
   * first to make it the newest). Past the bound, the oldest marks go.
   */
  mark(entityId: number): void;
  unmark(entityId: number): void;
}

/**
 * Entity ids this process marks, one set per database (its Kysely adapter is shared by the instance and
 * its transactions: two apps in one process may use two databases), as store/artists.ts keeps its
 * artists; at most `max` a database, the oldest mark going first. What a mark means is its owner's
 * (store/hooked-entities.ts, store/stored-artworks.ts): a guess that saves a statement, which the
 * statement itself checks.
 */
export function entityMarks(max: number): (db: Db) => EntityMarks {
  const byDatabase = new WeakMap<object, EntityMarks>();
  return (db) => {
    const database = db.getExecutor().adapter;
    let marks = byDatabase.get(database);
    if (!marks) byDatabase.set(database, (marks = boundedMarks(max)));
    return marks;
  };
}

function boundedMarks(max: number): EntityMarks {
  const marked = new Set<number>();
  return {
    has: (entityId) => marked.has(entityId),
    mark(entityId) {
      if (marked.has(entityId)) return;
      marked.add(entityId);
      // A set iterates in insertion order: the first is the oldest mark.
      for (const oldest of marked) {
        if (marked.size <= max) break;
        marked.delete(oldest);
      }
    },
    unmark: (entityId) => { marked.delete(entityId); },
  };
}
