import { describe, expect, test } from 'vitest';
import type { Db } from '../../src/db/types.js';
import { entityMarks } from '../../src/store/entity-marks.js';
import { mayHaveEndpoints, rememberEndpoints } from '../../src/store/hooked-entities.js';
import { rememberPosted, repostLikely } from '../../src/store/stored-artworks.js';

/**
 * The bounded per-database sets of entity ids (src/store/entity-marks.ts) and the two that use them:
 * the entities found with an enabled webhook endpoint (store/hooked-entities.ts, the least recently found
 * going first) and those whose last POST was a re-post (store/stored-artworks.ts, the earliest added going
 * first). A database is told apart by its Kysely adapter, which a transaction shares with its instance.
 */
const database = (adapter: object = {}): Db => ({ getExecutor: () => ({ adapter }) }) as unknown as Db;
const marked = (marks: { has(id: number): boolean }, ids: number[]) => ids.filter((id) => marks.has(id));

describe('entityMarks', () => {
  test('keeps at most its bound, the oldest mark going first', () => {
    const marks = entityMarks(3)(database());
    for (const id of [1, 2, 3, 4, 5]) marks.mark(id);
    expect(marked(marks, [1, 2, 3, 4, 5])).toEqual([3, 4, 5]);
  });

  test('a marked entity marked again keeps its place; unmarked and marked, it is the newest', () => {
    const marks = entityMarks(3)(database());
    for (const id of [1, 2, 3]) marks.mark(id);
    marks.mark(1);
    marks.mark(4);
    expect(marked(marks, [1, 2, 3, 4])).toEqual([2, 3, 4]);
    marks.unmark(2);
    marks.mark(2);
    marks.mark(5);
    expect(marked(marks, [1, 2, 3, 4, 5])).toEqual([2, 4, 5]);
  });

  test('an unmarked entity is forgotten and frees its place', () => {
    const marks = entityMarks(3)(database());
    for (const id of [1, 2, 3]) marks.mark(id);
    marks.unmark(2);
    marks.unmark(9);
    marks.mark(4);
    expect(marked(marks, [1, 2, 3, 4])).toEqual([1, 3, 4]);
  });

  test('one set per database, shared by the handles of one adapter, each bounded', () => {
    const of = entityMarks(2);
    const adapter = {};
    const one = of(database(adapter));
    const other = of(database());
    for (const id of [1, 2, 3]) one.mark(id);
    other.mark(1);
    expect(marked(of(database(adapter)), [1, 2, 3])).toEqual([2, 3]);
    expect(marked(other, [1, 2, 3])).toEqual([1]);
    expect(marked(entityMarks(2)(database(adapter)), [1, 2, 3])).toEqual([]);
  });
});

describe('the sets that use it', () => {
  const BOUND = 10_000;

  test('entities with an endpoint: at most 10,000, the least recently found going first, one found without forgotten', () => {
    const db = database();
    for (let id = 1; id <= BOUND; id++) rememberEndpoints(db, id, true);
    rememberEndpoints(db, 1, true);
    rememberEndpoints(db, BOUND + 1, true);
    expect(marked({ has: (id) => mayHaveEndpoints(db, id) }, [1, 2, 3, BOUND, BOUND + 1])).toEqual([1, 3, BOUND, BOUND + 1]);
    rememberEndpoints(db, 3, false);
    expect(mayHaveEndpoints(db, 3)).toBe(false);
  });

  test('entities re-posting: at most 10,000, the earliest added going first, one that posted a new work forgotten', () => {
    const db = database();
    for (let id = 1; id <= BOUND; id++) rememberPosted(db, id, true);
    rememberPosted(db, 1, true);
    rememberPosted(db, BOUND + 1, true);
    expect(marked({ has: (id) => repostLikely(db, id) }, [1, 2, 3, BOUND, BOUND + 1])).toEqual([2, 3, BOUND, BOUND + 1]);
    rememberPosted(db, 3, false);
    expect(repostLikely(db, 3)).toBe(false);
  });
});
