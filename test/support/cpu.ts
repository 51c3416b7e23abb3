/**
 * The CPU time (user and system, milliseconds) this test process spends while `work` runs. A bound on work
 * that must not blow up (an unbounded reader took 88 s) is asserted in CPU time, not wall-clock time:
 * other processes on a loaded machine stretch the clock, not this process's CPU. Vitest runs each test file
 * in a process of its own at a time (forks), so the figure is the test's.
 */
export async function cpuMs<T>(work: () => T | Promise<T>): Promise<{ value: T; ms: number }> {
  const before = process.cpuUsage();
  const value = await work();
  const used = process.cpuUsage(before);
  return { value, ms: (used.user + used.system) / 1000 };
}
