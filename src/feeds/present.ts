import type { FeedType } from '../schemas/feeds.js';
import { nextRunOf, runJson, type FeedWithRun } from '../store/feeds.js';

export { runJson };

/**
 * A feed's URL as a reader who may not change the feed sees it (docs/api.md, Feeds): a token in its
 * query string (or fragment) is the gallery's, so that part is shown as `?…`.
 */
export function withoutQuery(url: string): string {
  const at = url.search(/[?#]/);
  return at === -1 ? url : `${url.slice(0, at)}?…`;
}

/** A feed and a run as the API shows them (docs/api.md, Feeds); `fullUrl: false`: the URL without its query. */

export const feedJson = (found: FeedWithRun, { fullUrl = true }: { fullUrl?: boolean } = {}): FeedType => {
  const { feed, lastRun } = found;
  const mapping = JSON.parse(feed.mapping) as FeedType['mapping'];
  return {
    id: feed.id,
    url: fullUrl ? feed.url : withoutQuery(feed.url),
    kind: feed.kind,
    mapping,
    encoding: feed.encoding,
    sheet: feed.sheet,
    mode: feed.mode,
    interval_minutes: feed.interval_minutes,
    paused: feed.paused === 1,
    paused_reason: feed.paused_reason,
    // Once read, the mapping names every column of the file: those left out are null.
    unmapped_columns: feed.mapping_frozen ? Object.keys(mapping).filter((column) => mapping[column] === null) : null,
    created_at: feed.created_at,
    next_run_at: nextRunOf(found),
    last_run: lastRun ? runJson(lastRun) : null,
  };
};
