import { FetchFailed, fetchImage, type FetchOptions } from '../images/fetch.js';

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
 * The fetcher as it stands in src/images/fetch.ts: the same address rules, redirects and limits,
 * without validators (it sends no `If-None-Match`), so an unchanged file is recognised by its hash.
 */
export const feedFetcher = (allowAddress: FetchOptions['allowAddress']): FeedFetcher => async (url, _previous, signal) => {
  const { bytes, hash } = await fetchImage(url, { maxBytes: FEED_MAX_BYTES, timeoutMs: FEED_TIMEOUT_MS, ...(allowAddress ? { allowAddress } : {}) }, signal);
  return { notModified: false, status: 200, bytes, hash, etag: null, lastModified: null };
};
