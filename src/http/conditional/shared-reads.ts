/**
 * One read shared by the requests that arrive together and ask the same thing (an entity's data
 * version): reads are started at the end of the event loop's turn, one per key, and a request that
 * arrives while its key's read is running gets a read of its own turn too, up to `runningPerKey` of a
 * key at once; past that it waits for the next, which starts once one of them has ended. Every read
 * starts after each request it answers has arrived, so it sees every write committed before that
 * request came — what a read of its own would see — and nothing is kept after it: a write in any
 * process is seen by the next read, with no message between processes. Under load this takes one query
 * per key per turn (SQLite answers within the turn) instead of one per request; on PostgreSQL a request
 * waits one round trip, not the rest of a read that started before it and then a whole one.
 */
interface Waiting<V> {
  promise: Promise<V>;
  resolve: (value: V) => void;
  reject: (error: unknown) => void;
}

function waiting<V>(): Waiting<V> {
  let resolve!: (value: V) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<V>((yes, no) => { resolve = yes; reject = no; });
  return { promise, resolve, reject };
}

export class SharedReads<K, V> {
  /** The requests waiting for a read that has not started yet, by key. */
  private readonly waiting = new Map<K, Waiting<V>>();
  /** How many reads of each key are running; bounded by the keys asked for at once. */
  private readonly running = new Map<K, number>();
  private scheduled = false;

  constructor(private readonly readOne: (key: K) => Promise<V>, private readonly runningPerKey = 1) {}

  read(key: K): Promise<V> {
    let next = this.waiting.get(key);
    if (next === undefined) {
      next = waiting<V>();
      this.waiting.set(key, next);
      if (this.runningOf(key) < this.runningPerKey) this.schedule();
    }
    return next.promise;
  }

  private runningOf(key: K): number {
    return this.running.get(key) ?? 0;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.startWaiting);
  }

  private readonly startWaiting = (): void => {
    this.scheduled = false;
    for (const [key, next] of this.waiting) {
      const running = this.runningOf(key);
      if (running >= this.runningPerKey) continue;
      this.waiting.delete(key);
      this.running.set(key, running + 1);
      // A read that throws before its promise is made fails its requests, as one that rejects does.
      void Promise.resolve().then(() => this.readOne(key)).then(next.resolve, next.reject).finally(() => {
        const left = this.runningOf(key) - 1;
        if (left === 0) this.running.delete(key);
        else this.running.set(key, left);
        if (this.waiting.has(key)) this.schedule();
      });
    }
  };
}
