import { nowIso } from '../clock.js';
import type { JobKind } from '../jobs/index.js';
import { FEED_RUN_JOB, feedIdOfJob, giveUpFeedRun, nextFeedJob } from '../store/feeds.js';
import { runFeed, type FeedRunDeps } from './run.js';

/** A run's time limit: a 10,000-row file's first run (10,000 creates) takes about 20 s on SQLite. */
export const FEED_RUN_TIMEOUT_MS = 15 * 60_000;

/**
 * Feed runs as jobs of the one queue (src/jobs/README.md): one job per feed (key `feed:<id>`, so one
 * lease per feed, taken fairly between entities), due at the feed's next run or at once for a queued
 * one. A run ends the job and, in the same transaction, queues the feed's next one; a process that
 * died mid-run leaves the job to be taken over, and the run (still `running`) is run again whole —
 * the rows it wrote before are then unchanged and write nothing.
 */
export function feedRunJob(deps: FeedRunDeps, concurrency: number): JobKind<null> {
  return {
    name: FEED_RUN_JOB,
    concurrency,
    timeoutMs: FEED_RUN_TIMEOUT_MS,
    async run(job, { signal }) {
      const feedId = feedIdOfJob(job.key);
      await runFeed(deps, feedId, signal);
      return { end: 'done', record: () => nextFeedJob(feedId, nowIso()) };
    },
    giveUp(job, reason) {
      const feedId = feedIdOfJob(job.key);
      return { end: 'done', record: () => giveUpFeedRun(deps.db, feedId, reason === 'took too long' ? 'took too long' : 'the run was interrupted too often', nowIso()) };
    },
  };
}
