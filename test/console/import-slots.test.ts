import { describe, expect, test } from 'vitest';
import { HELD_BUDGET_BYTES, HeldImports, MAX_READS, PER_ENTITY, type HeldImport } from '../../src/console/held-imports.js';
import type { ApplyJob } from '../../src/apply/index.js';

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
 * once across galleries, their turns fair between galleries, and a budget of held bytes, past which idle
 * uploads go from the gallery holding the most.
 */
describe('reads and held tables per process', () => {
  // A table of rows held as objects: 118 bytes a cell, a row of one column counting two.
  const withBytes = (held: HeldImport, bytes: number) => Object.assign(held, {
    bytes: null, table: { format: 'csv', columns: ['title'], rows: Array.from({ length: Math.ceil(bytes / 236) }, (_, i) => ({ label: `row ${i + 2}`, cells: ['A'] })) },
  });

  test('two galleries\' reads take both turns; a third gallery\'s read waits, then gets the turn an ending read lets go', async () => {
    const slots = new HeldImports();
    expect(MAX_READS).toBe(2);
    const first = (await slots.readTurn(1))!;
    const second = (await slots.readTurn(2))!;
    expect(await slots.readTurn(3, 20)).toBeUndefined();
    const third = slots.readTurn(3, 5_000);
    first();
    expect(await third).toBeDefined();
    second();
    (await third)!();
    expect(await slots.readTurn(3, 20)).toBeDefined();
  });

  test('a gallery reading both turns waits behind another gallery for the next: waiting galleries are served in turn, not in order of asking', async () => {
    const slots = new HeldImports();
    const ends = new Map<string, () => void>([['A0', (await slots.readTurn(1))!], ['A1', (await slots.readTurn(1))!]]);
    const served: string[] = [];
    const ask = (entityId: number, name: string) => slots.readTurn(entityId, 5_000).then((end) => {
      served.push(name);
      ends.set(name, end!);
    });
    const asked = [ask(1, 'A2'), ask(1, 'A3'), ask(2, 'B1'), ask(2, 'B2'), ask(3, 'C1')];
    expect(slots.waitingReads()).toBe(5);
    const end = async (name: string) => {
      ends.get(name)!();
      await new Promise((resolve) => setImmediate(resolve));
    };
    // Gallery 1 still reads a file: gallery 2, reading none, goes first though gallery 1 asked first.
    await end('A0');
    expect(served).toEqual(['B1']);
    // Gallery 1 reads none now and has waited longest; then 3 before 2 (2 was just served), then 1 again.
    await end('A1');
    expect(served).toEqual(['B1', 'A2']);
    await end('B1');
    expect(served).toEqual(['B1', 'A2', 'C1']);
    await end('A2');
    expect(served).toEqual(['B1', 'A2', 'C1', 'B2']);
    await end('C1');
    expect(served).toEqual(['B1', 'A2', 'C1', 'B2', 'A3']);
    await Promise.all(asked);
    expect(slots.waitingReads()).toBe(0);
  });

  test('past the budget an idle held table of the gallery holding the most is let go first, its oldest, and the new one is kept', () => {
    const slots = new HeldImports();
    const quarter = Math.floor(HELD_BUDGET_BYTES / 4);
    const theirs = withBytes(slots.hold(upload(2, 21))!, quarter);
    theirs.touched -= 10_000;
    const oldest = withBytes(slots.hold(upload(1, 11))!, quarter);
    oldest.touched -= 1_000;
    const second = withBytes(slots.hold(upload(1, 12))!, quarter);
    const fresh = withBytes(slots.hold(upload(3, 31))!, quarter + 10_000);
    expect(slots.admit(fresh)).toBe(true);
    expect(slots.get(oldest.id, 11, 's11')).toBeUndefined();
    expect(slots.get(theirs.id, 21, 's21')).toBeDefined();
    expect(slots.get(second.id, 12, 's12')).toBeDefined();
    expect(slots.get(fresh.id, 31, 's31')).toBeDefined();
  });

  test('a new table past the budget when the others are being applied is let go as busy', () => {
    const slots = new HeldImports();
    applying(withBytes(slots.hold(upload(1, 11))!, Math.floor(HELD_BUDGET_BYTES / 2)));
    const fresh = withBytes(slots.hold(upload(2, 21))!, Math.floor(HELD_BUDGET_BYTES / 2) + 1_000);
    expect(slots.admit(fresh)).toBe(false);
    expect(slots.get(fresh.id, 21, 's21')).toBeUndefined();
  });
});
