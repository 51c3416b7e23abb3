import type { JobKind, RunnerLog } from './runner.js';

/** A chore that runs on a schedule: what it did, for the log. */
export type Sweep = (now: number) => Promise<object | number>;

/**
 * A recurring chore (a sweep) as a job kind of the one queue, `sweep_<name>` (docs/architecture.md,
 * Background jobs): one job, queued once by whichever process starts first (store/jobs.ts,
 * `ensureRecurring`) and due again `everyMs` after each round, so several processes never run one
 * sweep at once. A round that fails is a failed job (the gauges count it) and is tried again at the
 * next round.
 */
export function sweepKind(name: string, everyMs: number, sweep: Sweep, log: RunnerLog, now: () => number = Date.now): JobKind<null> {
  const kind = `sweep_${name}`;
  return {
    name: kind,
    concurrency: 1,
    // Due hourly: an idle slot need not look every second for another process's round.
    pollMs: Math.min(everyMs, 60_000),
    timeoutMs: 30 * 60_000,
    async run() {
      const started = now();
      try {
        const report = await sweep(started);
        log.info({ kind, ...(typeof report === 'number' ? { removed: report } : report) }, 'sweep done');
        return { end: 'again', at: started + everyMs };
      } catch (error) {
        log.warn({ err: error, kind }, 'sweep failed; it runs again at its next round');
        return { end: 'again', at: started + everyMs, failed: error instanceof Error ? error.message : String(error) };
      }
    },
    giveUp: () => ({ end: 'again', at: now() + everyMs }),
  };
}
