import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type {
  Artwork, ArtworkList, ArtworkPostBody, ArtworkPostResult, ArtworkPutBody, Deleted,
} from '../schemas/artworks.js';
import type { BatchResponse } from '../schemas/batch.js';
import type { ChangelogPage } from '../schemas/changelog.js';
import type { ErrorBodyType } from '../schemas/common.js';
import type { Event, EventList, EventPostBody, EventPostResult, EventPutBody } from '../schemas/events.js';
import type { Feed, FeedList, FeedPostBody, FeedPreview, FeedPreviewPostBody, FeedPutBody, FeedRun, FeedRunList, RunList } from '../schemas/feeds.js';
import type { Me } from '../schemas/me.js';
import type { Profile, ProfilePutBody, ProfileUpdated } from '../schemas/profile.js';
import type { SyncStatus } from '../schemas/sync.js';
import type { TrashPage } from '../schemas/trash.js';
import type { Image } from '../schemas/images.js';
import type {
  WebhookEndpoint, WebhookEndpointWithSecret, WebhookList, WebhookMessage, WebhookMessagePage, WebhookPostBody, WebhookPutBody,
} from '../schemas/webhooks.js';
import { ApiClientError, NetworkError } from './errors.js';
import { EtagCache, type EtagCacheOptions } from './etag-cache.js';
import { DEFAULT_RETRY, shouldRetry, type Decision, type Outcome, type RetryPolicy } from './retry.js';

export { ApiClientError, NetworkError } from './errors.js';
export { shouldRetry, DEFAULT_RETRY, type RetryPolicy } from './retry.js';
export { EtagCache, type EtagCacheOptions, type KeptAnswer } from './etag-cache.js';

/** An image's state (docs/api.md, Images): every record with an image_url has one; `failed` carries its error line. */
export type ImageStatusFilter = Static<typeof Image>['status'];
export type { ImageType as Image } from '../schemas/images.js';

export interface RetryEvent {
  method: string;
  path: string;
  reason: Extract<Decision, { retry: true }>['reason'];
  delayMs: number;
  attempt: number;
  status?: number;
}

export interface ClientOptions {
  /** Where the service runs, e.g. http://127.0.0.1:3000. */
  baseUrl: string;
  /** An API key, `ak_live_…`. */
  key: string;
  retry?: Partial<RetryPolicy>;
  /** Told before each wait, e.g. to show "rate limited: waiting 2 s". */
  onRetry?: (event: RetryEvent) => void;
  /**
   * GET answers kept by URL with their ETag and asked again with If-None-Match: a 304 reuses the
   * body (no body sent, no rate-limit unit taken). An EtagCache to share or persist, its bounds, or
   * `false` for none. Default: 1,000 URLs, 16 MB.
   */
  etags?: EtagCache | EtagCacheOptions | false;
  /** Replaceable for tests. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
}

export interface WriteOptions {
  /** Sent as Idempotency-Key on every attempt; a random one is made when absent. */
  idempotencyKey?: string;
}

type Query = Record<string, string | number | boolean | undefined>;

/** A typed client of the v1 API. Every method returns the body of the success answer. */
export class ArtCatalogClient {
  private readonly baseUrl: string;
  private readonly policy: RetryPolicy;
  private readonly fetchImpl: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  /** The kept GET answers (undefined when the client keeps none). */
  readonly etags: EtagCache | undefined;
  /** Answers reused on a 304 since the client was made. */
  notModified = 0;

  constructor(private readonly options: ClientOptions) {
    this.etags = options.etags === false ? undefined : options.etags instanceof EtagCache ? options.etags : new EtagCache(options.etags);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.policy = { ...DEFAULT_RETRY, ...options.retry };
    this.fetchImpl = options.fetch ?? fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  me = () => this.request<Static<typeof Me>>('GET', '/v1/me');

  postArtwork = (body: ArtworkPostBody, o?: WriteOptions) => this.request<Static<typeof ArtworkPostResult>>('POST', '/v1/artworks', { body, ...o });
  postArtworks = (items: unknown[], o?: WriteOptions) => this.request<Static<typeof BatchResponse>>('POST', '/v1/artworks/batch', { body: { items }, ...o });
  /** `image_status`: only artworks whose image (the platform's copy of image_url) is pending, ready or failed. */
  listArtworks = (query: { page?: number; after?: number; limit?: number; availability?: string; image_status?: ImageStatusFilter } = {}) => this.request<Static<typeof ArtworkList>>('GET', '/v1/artworks', { query });
  getArtwork = (id: number) => this.request<Static<typeof Artwork>>('GET', `/v1/artworks/${id}`);
  updateArtwork = (id: number, body: ArtworkPutBody, o?: WriteOptions) => this.request<Static<typeof Artwork>>('PUT', `/v1/artworks/${id}`, { body, ...o });
  deleteArtwork = (id: number, o?: WriteOptions) => this.request<Static<typeof Deleted>>('DELETE', `/v1/artworks/${id}`, o);

  postEvent = (body: EventPostBody, o?: WriteOptions) => this.request<Static<typeof EventPostResult>>('POST', '/v1/events', { body, ...o });
  postEvents = (items: unknown[], o?: WriteOptions) => this.request<Static<typeof BatchResponse>>('POST', '/v1/events/batch', { body: { items }, ...o });
  listEvents = (query: { page?: number; after?: number; limit?: number; upcoming?: boolean; past?: boolean; image_status?: ImageStatusFilter } = {}) => this.request<Static<typeof EventList>>('GET', '/v1/events', { query });
  getEvent = (id: number) => this.request<Static<typeof Event>>('GET', `/v1/events/${id}`);
  updateEvent = (id: number, body: EventPutBody, o?: WriteOptions) => this.request<Static<typeof Event>>('PUT', `/v1/events/${id}`, { body, ...o });
  deleteEvent = (id: number, o?: WriteOptions) => this.request<Static<typeof Deleted>>('DELETE', `/v1/events/${id}`, o);

  getProfile = () => this.request<Static<typeof Profile>>('GET', '/v1/profile');
  updateProfile = (body: ProfilePutBody, o?: WriteOptions) => this.request<Static<typeof ProfileUpdated>>('PUT', '/v1/profile', { body, ...o });

  changelog = (query: { page?: number; after?: number; limit?: number; since?: string } = {}) => this.request<Static<typeof ChangelogPage>>('GET', '/v1/changelog', { query });
  syncStatus = () => this.request<Static<typeof SyncStatus>>('GET', '/v1/sync/status');

  /** Webhooks (docs/api.md, Webhooks): the secret is in the answers of create and roll only. */
  createWebhook = (body: WebhookPostBody, o?: WriteOptions) => this.request<Static<typeof WebhookEndpointWithSecret>>('POST', '/v1/webhooks', { body, ...o });
  listWebhooks = () => this.request<Static<typeof WebhookList>>('GET', '/v1/webhooks');
  getWebhook = (id: number) => this.request<Static<typeof WebhookEndpoint>>('GET', `/v1/webhooks/${id}`);
  updateWebhook = (id: number, body: WebhookPutBody, o?: WriteOptions) => this.request<Static<typeof WebhookEndpoint>>('PUT', `/v1/webhooks/${id}`, { body, ...o });
  deleteWebhook = (id: number, o?: WriteOptions) => this.request<Static<typeof Deleted>>('DELETE', `/v1/webhooks/${id}`, o);
  rollWebhookSecret = (id: number, body: { expire_old_in?: '1h' | '24h' | '7d' | 'now' } = {}, o?: WriteOptions) =>
    this.request<Static<typeof WebhookEndpointWithSecret>>('POST', `/v1/webhooks/${id}/roll-secret`, { body, ...o });
  testWebhook = (id: number, o?: WriteOptions) => this.request<Static<typeof WebhookMessage>>('POST', `/v1/webhooks/${id}/test`, o);
  listWebhookMessages = (id: number, query: { after?: number; limit?: number } = {}) =>
    this.request<Static<typeof WebhookMessagePage>>('GET', `/v1/webhooks/${id}/messages`, { query });
  retryWebhookMessage = (id: number, messageId: string, o?: WriteOptions) =>
    this.request<Static<typeof WebhookMessage>>('POST', `/v1/webhooks/${id}/messages/${messageId}/retry`, o);
  /** Feeds (docs/api.md, Feeds): a file at a URL applied on a schedule; its first run is queued at once. */
  postFeed = (body: FeedPostBody, o?: WriteOptions) => this.request<Static<typeof Feed>>('POST', '/v1/feeds', { body, ...o });
  listFeeds = () => this.request<Static<typeof FeedList>>('GET', '/v1/feeds');
  /** The file read once as a run would read it, compared with the catalog; nothing written (docs/api.md, Feed preview). */
  previewFeed = (body: FeedPreviewPostBody, o?: WriteOptions) => this.request<Static<typeof FeedPreview>>('POST', '/v1/feeds/preview', { body, ...o });
  getFeed = (id: number) => this.request<Static<typeof Feed>>('GET', `/v1/feeds/${id}`);
  putFeed = (id: number, body: FeedPutBody, o?: WriteOptions) => this.request<Static<typeof Feed>>('PUT', `/v1/feeds/${id}`, { body, ...o });
  deleteFeed = (id: number, o?: WriteOptions) => this.request<undefined>('DELETE', `/v1/feeds/${id}`, o);
  /** Run now (at most once a minute per feed). */
  runFeed = (id: number, o?: WriteOptions) => this.request<Static<typeof FeedRun>>('POST', `/v1/feeds/${id}/runs`, { body: {}, ...o });
  /** Deletes the records a mirror run listed in its `pending_deletes` (docs/api.md, Feeds: mass deletes). */
  confirmFeedDeletes = (id: number, runId: number, o?: WriteOptions) =>
    this.request<Static<typeof FeedRun>>('POST', `/v1/feeds/${id}/runs/${runId}/confirm-deletes`, { body: {}, ...o });
  listFeedRuns = (id: number, query: { after?: number; limit?: number } = {}) => this.request<Static<typeof FeedRunList>>('GET', `/v1/feeds/${id}/runs`, { query });
  getFeedRun = (id: number, runId: number) => this.request<Static<typeof FeedRun>>('GET', `/v1/feeds/${id}/runs/${runId}`);
  /** Runs (docs/api.md, Runs): feed runs, console imports, undos. */
  listRuns = (query: { after?: number; limit?: number } = {}) => this.request<Static<typeof RunList>>('GET', '/v1/runs', { query });
  getRun = (id: number) => this.request<Static<typeof FeedRun>>('GET', `/v1/runs/${id}`);
  /** Undoes a run (docs/api.md, Undo a run): 202 with the undo run, queued; follow it with getRun. */
  undoRun = (id: number, o?: WriteOptions) => this.request<Static<typeof FeedRun>>('POST', `/v1/runs/${id}/undo`, { body: {}, ...o });
  /** The trash (docs/api.md, Trash): deleted records, newest first, until the purge. */
  listTrash = (query: { kind?: 'artworks' | 'events'; after?: string; limit?: number } = {}) => this.request<Static<typeof TrashPage>>('GET', '/v1/trash', { query });
  restoreArtwork = (id: number, o?: WriteOptions) => this.request<Static<typeof Artwork>>('POST', `/v1/artworks/${id}/restore`, { body: {}, ...o });
  restoreEvent = (id: number, o?: WriteOptions) => this.request<Static<typeof Event>>('POST', `/v1/events/${id}/restore`, { body: {}, ...o });
  deleteFromTrash = (kind: 'artworks' | 'events', id: number, o?: WriteOptions) => this.request<undefined>('DELETE', `/v1/trash/${kind}/${id}`, o);

  /**
   * Every artwork (with the filter given), in id order, fetched page by page through the `after`
   * cursor: a page costs the same at any depth, and no record that exists throughout is skipped or
   * repeated. `after` starts past a known id; `limit` is the page size (default 100, the maximum).
   */
  iterateArtworks = (query: { after?: number; limit?: number; availability?: string; image_status?: ImageStatusFilter } = {}) =>
    this.walk((after) => this.listArtworks({ limit: 100, ...query, after }), (page) => page.artworks, query.after);

  /** Every event, in id order, by cursor (`upcoming`/`past` cannot be combined with a cursor). */
  iterateEvents = (query: { after?: number; limit?: number } = {}) =>
    this.walk((after) => this.listEvents({ limit: 100, ...query, after }), (page) => page.events, query.after);

  /**
   * The changelog from `since` (exclusive) or past the entry id `after`, to its current end, by cursor.
   * A poller starts once with `since`, remembers the `id` of the last entry it handled, and resumes with
   * `after` (docs/api.md, Pagination and polling): timestamps are shared by the entries of one millisecond, ids are not.
   */
  iterateChanges = (query: { since?: string; after?: number; limit?: number } = {}) =>
    this.walk((after) => this.changelog({ limit: 1000, ...query, after }), (page) => page.changes, query.after);

  private async *walk<P extends { has_more: boolean; next_after: number | null }, T>(
    fetchPage: (after: number) => Promise<P>, items: (page: P) => T[], start = 0,
  ): AsyncGenerator<T, void, undefined> {
    for (let after = start; ;) {
      const page = await fetchPage(after);
      yield* items(page);
      if (!page.has_more || page.next_after === null) return;
      after = page.next_after;
    }
  }

  /** One call: attempts until success, a final error, or the retry policy gives up. */
  async request<T>(method: string, path: string, { body, query, idempotencyKey }: { body?: unknown; query?: Query; idempotencyKey?: string } = {}): Promise<T> {
    const url = this.baseUrl + path + queryString(query);
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.key}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET') headers['idempotency-key'] = idempotencyKey ?? randomUUID();
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const kept = method === 'GET' ? this.etags?.get(url) : undefined;
    if (kept) headers['if-none-match'] = kept.etag;
    const attempts = { failures: 0, rateLimitWaits: 0 };
    for (;;) {
      let outcome: Outcome;
      let failure: Error;
      try {
        const response = await this.fetchImpl(url, { method, headers, ...(payload !== undefined ? { body: payload } : {}) });
        if (response.status === 304 && kept) {
          this.notModified++;
          return JSON.parse(kept.body) as T;
        }
        const text = await response.text();
        const parsed = parseJson(text);
        if (response.ok) {
          const etag = response.headers.get('etag');
          if (method === 'GET' && etag && this.etags) this.etags.set(url, { etag, body: text });
          return parsed as T;
        }
        const errorBody = parsed as Partial<ErrorBodyType> | undefined;
        failure = new ApiClientError(response.status, errorBody);
        outcome = { kind: 'status', status: response.status, error: errorBody?.error, retryAfterS: errorBody?.retry_after ?? headerSeconds(response.headers.get('retry-after')) };
      } catch (error) {
        if (error instanceof ApiClientError) throw error;
        failure = new NetworkError(error);
        outcome = { kind: 'network' };
      }
      const decision = shouldRetry(outcome, attempts, this.policy);
      if (!decision.retry) throw failure;
      if (decision.reason === 'rate_limited') attempts.rateLimitWaits++;
      else attempts.failures++;
      this.options.onRetry?.({
        method, path, reason: decision.reason, delayMs: decision.delayMs,
        attempt: attempts.failures + attempts.rateLimitWaits,
        ...(outcome.kind === 'status' ? { status: outcome.status } : {}),
      });
      await this.sleep(decision.delayMs);
    }
  }
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

function headerSeconds(value: string | null): number | undefined {
  const seconds = value === null ? NaN : Number(value);
  return Number.isFinite(seconds) ? seconds : undefined;
}
