import { describe, expect, test } from 'vitest';
import { CELL_BUDGET, HeldImports, MAX_READS, PER_ENTITY, type HeldImport } from '../../src/console/held-imports.js';
import type { ApplyJob } from '../../src/importer/index.js';

/**
 * Import slots per gallery (docs/console.md, Import): at most 2 held or running uploads per gallery,
 * each counting against its own gallery, so editors of one gallery cannot take the slots of others.
 */

const upload = (entityId: number, userId: number): Omit<HeldImport, 'id' | 'touched'> => ({
  userId, entityId, session: `s${userId}`, name: 'works.csv', kind: 'artworks', bytes: Buffer.from('title\nA\n'),
  encoding: 'utf8', map: new Map(), mirror: { prune: false, force: false },
});
const applying = (held: HeldImport) => Object.assign(held, { job: { finished: false } as ApplyJob });

describe('import slots per gallery', () => {
  test('two running imports of one gallery refuse its third, and another gallery still uploads', () => {
    const slots = new HeldImports();
    applying(slots.hold(upload(1, 11))!);
    applying(slots.hold(upload(1, 12))!);
    expect(PER_ENTITY).toBe(2);
    expect(slots.hold(upload(1, 13))).toBeUndefined();
    expect(slots.hold(upload(2, 21))).toBeDefined();
  });

  test('a gallery\'s third upload makes room by letting go of its own oldest idle one, never another gallery\'s', () => {
    const slots = new HeldImports();
    const theirs = slots.hold(upload(2, 21))!;
    const first = slots.hold(upload(1, 11))!;
    const second = slots.hold(upload(1, 12))!;
    const third = slots.hold(upload(1, 13))!;
    expect(third).toBeDefined();
    expect(slots.get(first.id, 11, 's11')).toBeUndefined();
    expect(slots.get(second.id, 12, 's12')).toBeDefined();
    expect(slots.get(theirs.id, 21, 's21')).toBeDefined();
  });

  test('eight galleries applying two imports each fill the process\'s 16 slots; a ninth gallery\'s idle uploads never evict them', () => {
    const slots = new HeldImports();
    for (let entity = 1; entity <= 8; entity++) for (let user = 0; user < 2; user++) applying(slots.hold(upload(entity, entity * 10 + user))!);
    expect(slots.hold(upload(9, 91))).toBeUndefined();
  });

  test('a file still being read holds its slot: one editor\'s parallel Connects parse at most two files at once', () => {
    const slots = new HeldImports();
    const reading = (held: HeldImport) => Object.assign(held, { reading: new Promise(() => undefined) });
    // Each Connect replaces the same editor's idle upload; one whose file is being read is not idle.
    reading(slots.hold(upload(1, 11))!);
    reading(slots.hold(upload(1, 11))!);
    expect(slots.hold(upload(1, 11))).toBeUndefined();
    expect(slots.hold(upload(1, 12))).toBeUndefined();
    expect(slots.hold(upload(2, 21))).toBeDefined();
  });
});

/**
 * Held tables' memory per process (docs/console.md, Import; docs/performance.md): at most two files read at
 * once across galleries, and a budget of held cells, past which the oldest idle uploads of any gallery go.
 */
describe('reads and held cells per process', () => {
  // A table of `rows` rows of one column: rows × 2 cells (a row counts one more for itself).
  const withRows = (held: HeldImport, rows: number) => Object.assign(held, {
    bytes: null, table: { format: 'csv', columns: ['title'], rows: Array.from({ length: rows }, (_, i) => ({ label: `row ${i + 2}`, cells: ['A'] })) },
  });

  test('two galleries\' reads take both turns; a third gallery\'s read waits, then gets the turn an ending read lets go', async () => {
    const slots = new HeldImports();
    expect(MAX_READS).toBe(2);
    const first = (await slots.readTurn())!;
    const second = (await slots.readTurn())!;
    expect(await slots.readTurn(20)).toBeUndefined();
    const third = slots.readTurn(5_000);
    first();
    expect(await third).toBeDefined();
    second();
    (await third)!();
    expect(await slots.readTurn(20)).toBeDefined();
  });

  test('past the budget the oldest idle held table of any gallery is let go, and the new one is kept', () => {
    const slots = new HeldImports();
    const half = Math.floor(CELL_BUDGET / 4);
    const oldest = withRows(slots.hold(upload(1, 11))!, half);
    oldest.touched -= 1_000;
    const other = withRows(slots.hold(upload(2, 21))!, half);
    const fresh = withRows(slots.hold(upload(3, 31))!, half);
    expect(slots.admit(fresh)).toBe(true);
    expect(slots.get(oldest.id, 11, 's11')).toBeUndefined();
    expect(slots.get(other.id, 21, 's21')).toBeDefined();
    expect(slots.get(fresh.id, 31, 's31')).toBeDefined();
  });

  test('a new table past the budget when the others are being applied is let go as busy', () => {
    const slots = new HeldImports();
    applying(withRows(slots.hold(upload(1, 11))!, Math.floor(CELL_BUDGET / 2)));
    const fresh = withRows(slots.hold(upload(2, 21))!, Math.floor(CELL_BUDGET / 2) + 1);
    expect(slots.admit(fresh)).toBe(false);
    expect(slots.get(fresh.id, 21, 's21')).toBeUndefined();
  });
});
