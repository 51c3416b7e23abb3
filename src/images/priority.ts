import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';

/**
 * The threads that decode and encode images: libuv's pool, where sharp's calls run (and the threads
 * libvips starts from them, which inherit their priority), and libvips' own workers.
 */
const IMAGE_THREADS = /^(libuv-worker|libvips worker)/;

/** How much lower than the event loop's their scheduling priority is (nice 0 → 10). */
export const IMAGE_THREAD_NICE = 10;

/**
 * Lets the event loop have a core whenever it has work (docs/architecture.md, The event-loop budget). On a machine
 * whose cores image work keeps busy — two libvips threads on two cores during an import — the event
 * loop's thread waited its turn among them: a 20 ms task took 50–80 ms of wall time, though nothing
 * blocked the loop (docs/performance.md, Images). At nice 10 those threads get about a
 * tenth of a core's share against the loop's thread while it runs, and every idle cycle as before, so
 * images go as fast on an idle server. Linux gives each thread its own nice value, and `setpriority`
 * takes a thread id; elsewhere this does nothing. Threads started since the last call are found by
 * their name, so it is called before each image (a few system calls).
 */
export function lowerImageThreadsPriority(): void {
  if (process.platform !== 'linux') return;
  let threads: string[];
  try {
    threads = readdirSync('/proc/self/task');
  } catch {
    return;
  }
  for (const thread of threads) {
    try {
      if (!IMAGE_THREADS.test(readFileSync(`/proc/self/task/${thread}/comm`, 'utf8'))) continue;
      setPriority(Number(thread), IMAGE_THREAD_NICE);
    } catch {
      // The thread has ended, or the system refuses: it keeps the priority it had.
    }
  }
}
