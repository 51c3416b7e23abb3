import { performance } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fairTurn } from '../../src/http/runtime/fair-turns.js';

// The budget is measured with performance.now(): a clock of the test's own, so a busy machine that
// deschedules the test between two lines cannot spend the budget for it.
let clock = 0;
const work = (ms: number) => { clock += ms; };
const nextTurn = () => new Promise((resolve) => { setImmediate(resolve); });
beforeEach(() => { vi.spyOn(performance, 'now').mockImplementation(() => clock); });
afterEach(() => { vi.restoreAllMocks(); });

describe('the shared turn budget of large answers', () => {
  it('lets work go on while the turn lasts, and sends work past the budget to a later turn', async () => {
    await nextTurn();
    expect(fairTurn()).toBeUndefined();
    work(2);
    expect(fairTurn()).toBeUndefined();
    work(10);
    const later = fairTurn();
    expect(later).toBeInstanceOf(Promise);
    let resumed = false;
    const waited = later!.then(() => { resumed = true; });
    // Promises settled meanwhile do not let it in: only a later turn of the event loop does.
    for (let i = 0; i < 10; i += 1) await Promise.resolve();
    expect(resumed).toBe(false);
    await waited;
    expect(resumed).toBe(true);
    // That turn has a budget of its own.
    expect(fairTurn()).toBeUndefined();
  });
});

describe('work that waited for a later turn', () => {
  it('asks again when it resumes: of two waiters, the second goes on only after the first spent that turn', async () => {
    await nextTurn();
    expect(fairTurn()).toBeUndefined();
    work(10);
    const first = fairTurn();
    const second = fairTurn();
    const order: string[] = [];
    const firstDone = first!.then(() => {
      work(10);
      order.push('first');
      setImmediate(() => order.push('next turn'));
    });
    const secondDone = second!.then(() => { order.push('second'); });
    await Promise.all([firstDone, secondDone]);
    expect(order).toEqual(['first', 'next turn', 'second']);
  });
});
