/**
 * At most `size` tasks at a time; the others wait in arrival order. A task's slot is handed straight
 * to the next waiter when it ends, so a task arriving meanwhile cannot overtake those already waiting.
 */
export class Slots {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {
    if (!(size >= 1)) throw new RangeError(`slots: a size of at least 1, not ${size}`);
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running < this.size) this.running += 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
