import type { FeedRunType, FeedType } from '../schemas/feeds.js';
import { nextRunOf, type FeedRunRow, type FeedWithRun } from '../store/feeds.js';

/** A feed and a run as the API shows them (docs/api.md, Feeds). */

export const runJson = (run: FeedRunRow): FeedRunType => ({
  id: run.id,
  status: run.status,
  started_at: run.started_at,
  finished_at: run.finished_at,
  http_status: run.http_status,
  counts: run.counts === null ? null : JSON.parse(run.counts) as FeedRunType['counts'],
  problems: run.problems === null ? [] : JSON.parse(run.problems) as FeedRunType['problems'],
  error: run.error,
  new_columns: run.new_columns === null ? [] : JSON.parse(run.new_columns) as string[],
});

export const feedJson = (found: FeedWithRun): FeedType => {
  const { feed, lastRun } = found;
  return {
    id: feed.id,
    url: feed.url,
    kind: feed.kind,
    mapping: JSON.parse(feed.mapping) as FeedType['mapping'],
    encoding: feed.encoding,
    sheet: feed.sheet,
    mode: feed.mode,
    interval_minutes: feed.interval_minutes,
    paused: feed.paused === 1,
    paused_reason: feed.paused_reason,
    created_at: feed.created_at,
    next_run_at: nextRunOf(found),
    last_run: lastRun ? runJson(lastRun) : null,
  };
};
