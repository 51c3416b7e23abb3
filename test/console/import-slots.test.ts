import { describe, expect, test } from 'vitest';
import { HeldImports, PER_ENTITY, type HeldImport } from '../../src/console/held-imports.js';
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
