import { FetchFailed, fetchUrl } from '../fetch/index.js';

/**
 * What a feed's run needs from the service's one outgoing fetcher (docs/api.md, Feeds): the file at a
 * URL under the fetcher's address rules, redirects and limits, asked conditionally with the last
 * file's `ETag` / `Last-Modified`. A failure is a `FetchFailed` whose message is the run's one line.
 */
export type FeedFetcher = (url: string, previous: Validators, signal?: AbortSignal) => Promise<FetchedFeed>;

export interface Validators {
  etag: string | null;
  lastModified: string | null;
}

export type FetchedFeed =
  | { notModified: true; status: 304 }
  | { notModified: false; status: number; bytes: Buffer; hash: string; etag: string | null; lastModified: string | null };

export { FetchFailed };

/** A feed file is at most 20 MB, read within 60 s (docs/api.md, Feeds). */
export const FEED_MAX_BYTES = 20 * 1024 * 1024;
export const FEED_TIMEOUT_MS = 60_000;

/**
 * The one outgoing fetcher (src/fetch) as feeds use it: 3 redirects, 20 MB, 60 s, the address policy,
 * and the last file's `ETag` / `Last-Modified` sent as `If-None-Match` / `If-Modified-Since`: a 304
 * costs one request and no body.
 */
export const feedFetcher = (allowAddress: (address: string) => boolean): FeedFetcher => async (url, previous, signal) => {
  const headers: Record<string, string> = { accept: 'text/csv,application/json,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet;q=0.9,*/*;q=0.5', 'user-agent': 'ArtCatalogService-Feeds/1' };
  if (previous.etag) headers['if-none-match'] = previous.etag;
  if (previous.lastModified) headers['if-modified-since'] = previous.lastModified;
  const answer = await fetchUrl({
    url, headers, maxRedirects: 3, maxBytes: FEED_MAX_BYTES, timeoutMs: FEED_TIMEOUT_MS, hash: true, allowAddress, ...(signal ? { signal } : {}),
  });
  if (answer.status === 304) return { notModified: true, status: 304 };
  if (answer.status < 200 || answer.status > 299) throw new FetchFailed(`HTTP ${answer.status}`);
  const header = (name: string) => {
    const value = answer.headers[name];
    return typeof value === 'string' && value.length <= 1000 ? value : null;
  };
  return { notModified: false, status: answer.status, bytes: answer.body, hash: answer.sha256!, etag: header('etag'), lastModified: header('last-modified') };
};

/**
 * A fetch error as a run or preview says it: a private or local address names the setting that allows
 * it in development (README.md, Configuration).
 */
export const explainFetchError = (message: string): string =>
  (message === 'address not allowed' ? 'address not allowed: a private or local address (FETCH_ALLOW_PRIVATE=true allows it in development)' : message);
