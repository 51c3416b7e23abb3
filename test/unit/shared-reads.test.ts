import { describe, expect, test } from 'vitest';
import { SharedReads } from '../../src/http/conditional/shared-reads.js';

/** A store whose reads are counted and answered when the test says, with the value current when they started. */
function store(runningPerKey?: number) {
  let value = 0;
  const started: { at: number; answer: () => void }[] = [];
  const reads = new SharedReads((key: string) => new Promise<string>((resolve) => {
    const at = value;
    started.push({ at, answer: () => resolve(`${key}@${at}`) });
  }), runningPerKey);
  return { reads, started, write: () => { value += 1; } };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
/** A few turns of the event loop: a read waiting for another starts within them. */
const turns = async () => { for (let i = 0; i < 3; i++) await turn(); };

describe('shared reads (entity versions)', () => {
  test('requests that arrive together share one read per key', async () => {
    const { reads, started } = store();
    const answers = Promise.all([reads.read('a'), reads.read('a'), reads.read('b'), reads.read('a')]);
    await turns();
    expect(started).toHaveLength(2);
    for (const read of started) read.answer();
    expect(await answers).toEqual(['a@0', 'a@0', 'b@0', 'a@0']);
  });

  test('a request that arrives while its key is being read gets a read started after it, at the end of its turn, and sees a write committed before it came', async () => {
    const { reads, started, write } = store(2);
    const first = reads.read('a');
    await turns();
    write();
    const second = reads.read('a');
    await turns();
    // Not held back until the first read ends: on PostgreSQL that is one round trip instead of two.
    expect(started).toHaveLength(2);
    started[1]!.answer();
    expect(await second).toBe('a@1');
    started[0]!.answer();
    expect(await first).toBe('a@0');
  });

  test('past the reads of a key allowed at once, a request waits for a read that starts once one has ended', async () => {
    const { reads, started, write } = store(2);
    const answers = [reads.read('a')];
    await turns();
    answers.push(reads.read('a'));
    await turns();
    write();
    answers.push(reads.read('a'), reads.read('a'));
    await turns();
    expect(started).toHaveLength(2);
    started[0]!.answer();
    await turns();
    expect(started).toHaveLength(3);
    for (const read of started.slice(1)) read.answer();
    expect(await Promise.all(answers)).toEqual(['a@0', 'a@0', 'a@1', 'a@1']);
  });

  test('keeps nothing: the next request reads again', async () => {
    const { reads, started, write } = store();
    const first = reads.read('a');
    await turns();
    started[0]!.answer();
    await first;
    write();
    const second = reads.read('a');
    await turns();
    started[1]!.answer();
    expect(await second).toBe('a@1');
  });

  test('a failed read fails every request waiting for it, and the next request reads again', async () => {
    let calls = 0;
    const reads = new SharedReads((key: string) => {
      calls += 1;
      if (calls === 1) throw new Error('database unavailable');
      return Promise.resolve(key);
    });
    const failed = [reads.read('a'), reads.read('a')];
    for (const answer of failed) await expect(answer).rejects.toThrow('database unavailable');
    expect(await reads.read('a')).toBe('a');
  });
});
