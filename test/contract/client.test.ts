import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiClientError, ArtCatalogClient, NetworkError, type RetryEvent } from '../../src/client/index.js';
import { DEFAULT_RETRY, shouldRetry, type RetryPolicy } from '../../src/client/retry.js';
import type { ArtworkPostBody } from '../../src/schemas/artworks.js';
import { client as inject, startApp, tenant, type TestApp } from '../helpers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** The typed client (src/client): its retry policy as a pure function, then against a real server. */

const POLICY: RetryPolicy = { maxAttempts: 5, maxRateLimitWaits: 3, baseDelayMs: 250, maxDelayMs: 20_000 };
const noWaits = { failures: 0, rateLimitWaits: 0 };
const always = (value: number) => () => value;

describe('shouldRetry', () => {
  test('a 429 waits exactly retry_after seconds', () => {
    expect(shouldRetry({ kind: 'status', status: 429, error: 'rate_limited', retryAfterS: 7 }, noWaits, POLICY, always(0.5)))
      .toEqual({ retry: true, delayMs: 7000, reason: 'rate_limited' });
    expect(shouldRetry({ kind: 'status', status: 429, retryAfterS: 1 }, noWaits, POLICY, always(0)))
      .toEqual({ retry: true, delayMs: 1000, reason: 'rate_limited' });
  });

  test('a 429 without retry_after waits 1 second, and so does a retry_after below 1', () => {
    expect(shouldRetry({ kind: 'status', status: 429 }, noWaits, POLICY, always(0.9))).toEqual({ retry: true, delayMs: 1000, reason: 'rate_limited' });
    expect(shouldRetry({ kind: 'status', status: 429, retryAfterS: 0 }, noWaits, POLICY, always(0.9))).toEqual({ retry: true, delayMs: 1000, reason: 'rate_limited' });
  });

  test('a 429 gives up after maxRateLimitWaits waits, and 429 waits do not use up maxAttempts', () => {
    const outcome = { kind: 'status', status: 429, retryAfterS: 2 } as const;
    expect(shouldRetry(outcome, { failures: 0, rateLimitWaits: POLICY.maxRateLimitWaits - 1 }, POLICY).retry).toBe(true);
    expect(shouldRetry(outcome, { failures: 0, rateLimitWaits: POLICY.maxRateLimitWaits }, POLICY)).toEqual({ retry: false });
    expect(shouldRetry(outcome, { failures: 0, rateLimitWaits: 0 }, { ...POLICY, maxRateLimitWaits: 0 })).toEqual({ retry: false });
    expect(shouldRetry(outcome, { failures: POLICY.maxAttempts, rateLimitWaits: 0 }, POLICY))
      .toEqual({ retry: true, delayMs: 2000, reason: 'rate_limited' });
  });

  test.each([500, 502, 503])('a %i is retried with a delay of random() times baseDelayMs * 2^failures', (status) => {
    for (const failures of [0, 1, 2, 3]) {
      const ceiling = POLICY.baseDelayMs * 2 ** failures;
      expect(shouldRetry({ kind: 'status', status }, { failures, rateLimitWaits: 0 }, POLICY, always(1)))
        .toEqual({ retry: true, delayMs: ceiling, reason: 'server_error' });
      expect(shouldRetry({ kind: 'status', status }, { failures, rateLimitWaits: 0 }, POLICY, always(0.5)))
        .toEqual({ retry: true, delayMs: ceiling / 2, reason: 'server_error' });
      const almost = shouldRetry({ kind: 'status', status }, { failures, rateLimitWaits: 0 }, POLICY, always(0.999_999));
      expect(almost).toEqual({ retry: true, delayMs: expect.any(Number), reason: 'server_error' });
      expect(almost.retry ? almost.delayMs : Infinity).toBeLessThanOrEqual(ceiling);
      expect(shouldRetry({ kind: 'status', status }, { failures, rateLimitWaits: 0 }, POLICY, always(0)))
        .toEqual({ retry: true, delayMs: 0, reason: 'server_error' });
    }
  });

  test('a network failure is retried with the same backoff, reason network', () => {
    expect(shouldRetry({ kind: 'network' }, noWaits, POLICY, always(1))).toEqual({ retry: true, delayMs: 250, reason: 'network' });
    expect(shouldRetry({ kind: 'network' }, { failures: 2, rateLimitWaits: 0 }, POLICY, always(0.25))).toEqual({ retry: true, delayMs: 250, reason: 'network' });
  });

  test('the backoff is capped at maxDelayMs', () => {
    const policy: RetryPolicy = { maxAttempts: 20, maxRateLimitWaits: 1, baseDelayMs: 1000, maxDelayMs: 3000 };
    expect(shouldRetry({ kind: 'status', status: 503 }, { failures: 1, rateLimitWaits: 0 }, policy, always(1))).toEqual({ retry: true, delayMs: 2000, reason: 'server_error' });
    expect(shouldRetry({ kind: 'status', status: 503 }, { failures: 2, rateLimitWaits: 0 }, policy, always(1))).toEqual({ retry: true, delayMs: 3000, reason: 'server_error' });
    expect(shouldRetry({ kind: 'network' }, { failures: 10, rateLimitWaits: 0 }, policy, always(1))).toEqual({ retry: true, delayMs: 3000, reason: 'network' });
    expect(shouldRetry({ kind: 'network' }, { failures: 10, rateLimitWaits: 0 }, policy, always(0.5))).toEqual({ retry: true, delayMs: 1500, reason: 'network' });
  });

  test('5xx and network failures give up when failures + 1 reaches maxAttempts', () => {
    for (const outcome of [{ kind: 'status', status: 500 }, { kind: 'status', status: 503 }, { kind: 'network' }] as const) {
      expect(shouldRetry(outcome, { failures: POLICY.maxAttempts - 2, rateLimitWaits: 0 }, POLICY, always(1)).retry).toBe(true);
      expect(shouldRetry(outcome, { failures: POLICY.maxAttempts - 1, rateLimitWaits: 0 }, POLICY, always(1))).toEqual({ retry: false });
      expect(shouldRetry(outcome, { failures: 0, rateLimitWaits: 0 }, { ...POLICY, maxAttempts: 1 }, always(1))).toEqual({ retry: false });
    }
  });

  test.each([
    [400, 'bad_request'], [401, 'unauthorized'], [403, 'forbidden'], [404, 'not_found'], [413, 'payload_too_large'],
    [415, 'unsupported_media_type'], [422, 'idempotency_key_reused'],
  ])('a %i %s is not retried', (status, error) => {
    expect(shouldRetry({ kind: 'status', status, error }, noWaits, POLICY, always(1))).toEqual({ retry: false });
  });

  test('a 409 idempotency_conflict is retried with backoff (reason conflict); a 409 duplicate is not', () => {
    expect(shouldRetry({ kind: 'status', status: 409, error: 'idempotency_conflict' }, { failures: 1, rateLimitWaits: 0 }, POLICY, always(1)))
      .toEqual({ retry: true, delayMs: 500, reason: 'conflict' });
    expect(shouldRetry({ kind: 'status', status: 409, error: 'idempotency_conflict' }, { failures: 4, rateLimitWaits: 0 }, POLICY, always(1)))
      .toEqual({ retry: false });
    expect(shouldRetry({ kind: 'status', status: 409, error: 'duplicate' }, noWaits, POLICY, always(1))).toEqual({ retry: false });
    expect(shouldRetry({ kind: 'status', status: 409 }, noWaits, POLICY, always(1))).toEqual({ retry: false });
  });

  test('the default policy is 5 attempts, 50 rate-limit waits, 250 ms base and 20 s maximum', () => {
    expect(DEFAULT_RETRY).toEqual({ maxAttempts: 5, maxRateLimitWaits: 50, baseDelayMs: 250, maxDelayMs: 20_000 });
  });
});

/** A fetch that records every call and can replace chosen attempts with a failure. */
function recordingFetch(fail: Record<number, 'network-before' | 'network-after' | 503> = {}) {
  const calls: { method: string; url: string; headers: Headers }[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    const attempt = calls.length + 1;
    calls.push({ method: init?.method ?? 'GET', url: input instanceof Request ? input.url : input.toString(), headers: new Headers(init?.headers) });
    const mode = fail[attempt];
    if (mode === 'network-before') throw new TypeError('fetch failed: connection reset');
    if (mode === 503) {
      return new Response(JSON.stringify({ error: 'service_unavailable', message: 'try later' }), { status: 503, headers: { 'content-type': 'application/json' } });
    }
    const response = await fetch(input, init);
    if (mode === 'network-after') {
      await response.text();
      throw new TypeError('fetch failed: socket hang up');
    }
    return response;
  };
  return { fetcher, calls };
}

describe('ArtCatalogClient against a real server', () => {
  let t: TestApp;
  let baseUrl: string;
  let limited: TestApp;
  let limitedUrl: string;
  const noSleep = async () => {};

  beforeAll(async () => {
    [t, limited] = await Promise.all([
      startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }),
      startApp({ RATE_LIMIT_FREE: '2', RATE_LIMIT_WINDOW_S: '2' }),
    ]);
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
    limitedUrl = await limited.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => { await Promise.all([t?.close(), limited?.close()]); });

  async function gallery(options: Parameters<typeof tenant>[1] = {}, extra: Partial<ConstructorParameters<typeof ArtCatalogClient>[0]> = {}) {
    const g = await tenant(t, options);
    return { ...g, api: new ArtCatalogClient({ baseUrl, key: g.key, sleep: noSleep, ...extra }) };
  }

  test('me, artworks, events, profile, changelog and sync status return the typed bodies of the service', async () => {
    const g = await gallery();
    const { api } = g;

    const me = await api.me();
    expect(me.entity).toEqual({ id: g.entityId, type: 'gallery', name: expect.any(String), slug: g.slug, default_currency: null });
    expect(me.key.prefix).toBe(g.prefix);
    expect(me.key.tier).toBe('subscriber');
    expect(me.key.scopes).toContain('artworks:write');
    expect(me.rate_limit.limit).toBe(100000);

    const posted = await api.postArtwork({ title: 'Client Work', artist_name: 'Client Painter', creation_year: 2000, price: 100, availability: 'available' });
    expect(posted.created).toBe(true);
    expect(posted.title).toBe('Client Work');
    expect(posted.source_fingerprint).toMatch(/^[0-9a-f]{64}$/);

    const batch = await api.postArtworks([{ title: 'Client Batch A', availability: 'sold' }, { title: 'Client Batch B' }, { creation_year: 1 }]);
    expect(batch.results.map((r) => r.status)).toEqual([201, 201, 400]);
    expect(batch.results[2]!.error).toBe('bad_request');

    const page = await api.listArtworks({ limit: 2, page: 1 });
    expect(page).toMatchObject({ total: 3, page: 1, limit: 2 });
    expect(page.artworks.map((a) => a.title)).toEqual(['Client Work', 'Client Batch A']);
    const sold = await api.listArtworks({ availability: 'sold' });
    expect(sold.artworks.map((a) => a.title)).toEqual(['Client Batch A']);

    const one = await api.getArtwork(posted.id);
    expect(one).toMatchObject({ id: posted.id, title: 'Client Work', artist_name: 'Client Painter', price: 100, source_fingerprint: posted.source_fingerprint });

    const updated = await api.updateArtwork(posted.id, { price: 250, availability: 'reserved' });
    expect(updated).toMatchObject({ id: posted.id, price: 250, availability: 'reserved', title: 'Client Work' });

    const removed = await api.deleteArtwork(batch.results[1]!.id!);
    expect(removed).toEqual({ deleted: true, id: batch.results[1]!.id });
    expect((await api.listArtworks()).total).toBe(2);

    const event = await api.postEvent({ title: 'Client Opening', event_type: 'opening', start_date: '2031-05-01' });
    expect(event.created).toBe(true);
    expect(event.slug).toBe(`${g.slug}-client-opening`);
    const events = await api.postEvents([{ title: 'Client Talk', start_date: '2031-05-02' }, { title: 'Client Past', start_date: '2001-01-01' }, { title: 'Bad', start_date: '2031-05-02', end_date: '2031-05-01' }]);
    expect(events.results.map((r) => r.status)).toEqual([201, 201, 400]);
    expect((await api.listEvents()).total).toBe(3);
    const upcoming = await api.listEvents({ upcoming: true });
    expect(upcoming.events.map((e) => e.title)).toEqual(['Client Opening', 'Client Talk']);
    const past = await api.listEvents({ past: true });
    expect(past.events.map((e) => e.title)).toEqual(['Client Past']);
    expect(await api.getEvent(event.id)).toMatchObject({ id: event.id, title: 'Client Opening', event_type: 'opening', start_date: '2031-05-01' });
    expect(await api.deleteEvent(event.id)).toEqual({ deleted: true, id: event.id });
    expect((await api.listEvents()).total).toBe(2);

    const profile = await api.getProfile();
    expect(profile).toMatchObject({ id: g.entityId, slug: g.slug, type: 'gallery' });
    const profileUpdate = await api.updateProfile({ description: 'Set by the client', social_photo: 'https://photos.example/client' });
    expect(profileUpdate).toMatchObject({ updated: true, description: 'Set by the client', social_instagram: 'https://photos.example/client', social_photo: 'https://photos.example/client' });
    expect((await api.getProfile()).description).toBe('Set by the client');

    const log = await api.changelog({ limit: 1000 });
    expect(log.total).toBe(log.changes.length);
    expect(log.changes.filter((c) => c.entity_type === 'artwork' && c.action === 'create').map((c) => c.entity_id))
      .toEqual([posted.id, batch.results[0]!.id, batch.results[1]!.id]);
    expect(log.changes.filter((c) => c.action === 'delete')).toHaveLength(2);
    expect(log.changes.every((c) => c.source === `api:${g.prefix}`)).toBe(true);
    const last = log.changes[log.changes.length - 1]!;
    expect(last.entity_type).toBe('profile');
    expect((await api.changelog({ since: last.created_at })).changes).toEqual([]);

    const status = await api.syncStatus();
    expect(status.artworks.count).toBe(2);
    expect(status.events.count).toBe(2);
    expect(status.artists.count).toBe(1);
    expect(status.artworks.last_synced).toEqual(expect.any(String));
  });

  test('an error answer throws ApiClientError with status, error, message and the details of a 400', async () => {
    const recorder = recordingFetch();
    const { api } = await gallery({}, { fetch: recorder.fetcher });
    const failure = await api.postArtwork({ price: 5 } as unknown as ArtworkPostBody).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiClientError);
    const e = failure as ApiClientError;
    expect(e.status).toBe(400);
    expect(e.error).toBe('bad_request');
    expect(e.message.length).toBeGreaterThan(0);
    expect(e.details?.map((d) => d.field)).toContain('title');
    expect(recorder.calls).toHaveLength(1);

    const missing = await api.getArtwork(999_999).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(ApiClientError);
    expect((missing as ApiClientError).status).toBe(404);
    expect((missing as ApiClientError).error).toBe('not_found');
    expect(recorder.calls).toHaveLength(2);
  });

  test('a 409 duplicate from updateArtwork throws ApiClientError with existingId, without a retry', async () => {
    const recorder = recordingFetch();
    const { api } = await gallery({}, { fetch: recorder.fetcher });
    const a = await api.postArtwork({ title: 'Duplicate Target', creation_year: 1970 });
    const b = await api.postArtwork({ title: 'Duplicate Mover', creation_year: 1970 });
    const before = recorder.calls.length;
    const failure = await api.updateArtwork(b.id, { title: 'duplicate target' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiClientError);
    expect((failure as ApiClientError).status).toBe(409);
    expect((failure as ApiClientError).error).toBe('duplicate');
    expect((failure as ApiClientError).existingId).toBe(a.id);
    expect(recorder.calls.length - before).toBe(1);
    expect((await api.getArtwork(b.id)).title).toBe('Duplicate Mover');
  });

  test('401 and 403 throw ApiClientError without retrying', async () => {
    const recorder = recordingFetch();
    const bad = new ArtCatalogClient({ baseUrl, key: 'ak_live_' + 'x'.repeat(32), fetch: recorder.fetcher, sleep: noSleep });
    const unauthorized = await bad.me().catch((error: unknown) => error);
    expect(unauthorized).toBeInstanceOf(ApiClientError);
    expect((unauthorized as ApiClientError).status).toBe(401);
    expect((unauthorized as ApiClientError).error).toBe('unauthorized');

    const free = await tenant(t, { tier: 'free' });
    const reader = new ArtCatalogClient({ baseUrl, key: free.key, fetch: recorder.fetcher, sleep: noSleep });
    const forbidden = await reader.postArtwork({ title: 'Not Allowed' }).catch((error: unknown) => error);
    expect((forbidden as ApiClientError).status).toBe(403);
    expect((forbidden as ApiClientError).error).toBe('forbidden');
    expect(recorder.calls).toHaveLength(2);
  });

  test('an answer lost to a network error after the server wrote is retried with the same Idempotency-Key; the write happens once and the replayed answer is returned', async () => {
    const recorder = recordingFetch({ 1: 'network-after' });
    const retries: RetryEvent[] = [];
    const sleeps: number[] = [];
    const { api } = await gallery({}, {
      fetch: recorder.fetcher, onRetry: (e) => retries.push(e), sleep: async (ms) => { sleeps.push(ms); },
    });
    const result = await api.postArtwork({ title: 'Lost Answer Work' });
    // A second run (not a replay) would have answered created false.
    expect(result.created).toBe(true);
    expect(recorder.calls).toHaveLength(2);
    const [first, second] = recorder.calls as [typeof recorder.calls[0], typeof recorder.calls[0]];
    expect(first.method).toBe('POST');
    expect(first.headers.get('idempotency-key')).toMatch(/\S/);
    expect(second.headers.get('idempotency-key')).toBe(first.headers.get('idempotency-key'));
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ method: 'POST', path: '/v1/artworks', reason: 'network', attempt: 1 });
    expect(retries[0]!.status).toBeUndefined();
    expect(sleeps).toEqual([retries[0]!.delayMs]);

    const list = await api.listArtworks();
    expect(list.artworks.map((a) => a.title)).toEqual(['Lost Answer Work']);
    const log = await api.changelog();
    expect(log.changes.filter((c) => c.entity_type === 'artwork')).toHaveLength(1);
  });

  test('a connection failure and a 503 are retried with the same Idempotency-Key given by the caller, and onRetry receives each reason', async () => {
    const recorder = recordingFetch({ 1: 'network-before', 2: 503 });
    const retries: RetryEvent[] = [];
    const { api } = await gallery({}, { fetch: recorder.fetcher, onRetry: (e) => retries.push(e) });
    const result = await api.postArtworks([{ title: 'Retried Batch A' }, { title: 'Retried Batch B' }], { idempotencyKey: 'caller-chosen-1' });
    expect(result.results.map((r) => [r.status, r.created])).toEqual([[201, true], [201, true]]);
    expect(recorder.calls.map((c) => c.headers.get('idempotency-key'))).toEqual(['caller-chosen-1', 'caller-chosen-1', 'caller-chosen-1']);
    expect(retries.map((r) => [r.reason, r.attempt, r.status])).toEqual([['network', 1, undefined], ['server_error', 2, 503]]);
    expect((await api.listArtworks()).total).toBe(2);
  });

  test('when every attempt fails the client gives up after maxAttempts with the last failure', async () => {
    const recorder = recordingFetch({ 1: 503, 2: 503, 3: 'network-before' });
    const { api } = await gallery({}, { fetch: recorder.fetcher, retry: { maxAttempts: 3 } });
    const failure = await api.postArtwork({ title: 'Never Written' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NetworkError);
    expect(recorder.calls).toHaveLength(3);
    expect((await api.listArtworks()).total).toBe(0);

    const fiveOhThree = recordingFetch({ 1: 503, 2: 503 });
    const other = new ArtCatalogClient({ baseUrl, key: (await tenant(t)).key, fetch: fiveOhThree.fetcher, sleep: noSleep, retry: { maxAttempts: 2 } });
    const serverError = await other.me().catch((error: unknown) => error);
    expect(serverError).toBeInstanceOf(ApiClientError);
    expect((serverError as ApiClientError).status).toBe(503);
    expect(fiveOhThree.calls).toHaveLength(2);
  });

  test('GET requests send no Idempotency-Key; each write call without one gets a fresh key', async () => {
    const recorder = recordingFetch();
    const { api } = await gallery({}, { fetch: recorder.fetcher });
    await api.listArtworks();
    await api.postArtwork({ title: 'Fresh Key One' });
    await api.postArtwork({ title: 'Fresh Key Two' });
    const keys = recorder.calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys[0]).toBeNull();
    expect(keys[1]).toMatch(/\S/);
    expect(keys[2]).toMatch(/\S/);
    expect(keys[1]).not.toBe(keys[2]);
  });

  test('keeps answers by URL with their ETag: an unchanged read is a 304 that reuses the body and takes no unit; a write makes it read again', async () => {
    const g = await tenant(t);
    const sent: (string | null)[] = [];
    const fetcher: typeof fetch = async (input, init) => {
      sent.push(new Headers(init?.headers).get('if-none-match'));
      return fetch(input, init);
    };
    const api = new ArtCatalogClient({ baseUrl, key: g.key, fetch: fetcher, etags: { maxEntries: 2 } });
    const { id } = await api.postArtwork({ title: 'Kept', artist_name: 'Hilma af Klint', creation_year: 1907 });
    const first = await api.listArtworks({ limit: 10 });
    const again = await api.listArtworks({ limit: 10 });
    expect(again).toEqual(first);
    expect(api.notModified).toBe(1);
    expect(sent.at(-1)).toMatch(/^"/);
    const { rate_limit: before } = await api.me();
    await api.listArtworks({ limit: 10 });
    // Nothing counted since: /v1/me itself is still true, and a 304.
    expect((await api.me()).rate_limit.remaining).toBe(before.remaining);
    expect(api.notModified).toBe(3);
    await api.updateArtwork(id, { price: 5 });
    const changed = await api.listArtworks({ limit: 10 });
    expect(changed.artworks[0]!.price).toBe(5);
    expect(api.notModified).toBe(3);
    // Bounded: two URLs kept, the least recently used goes first.
    await api.getArtwork(id);
    await api.syncStatus();
    expect(api.etags!.size).toBe(2);
  });

  test('a 429 from the server makes the client wait the retry_after it announced, then succeed', async () => {
    const g = await tenant(limited, { tier: 'free' });
    const announced: number[] = [];
    const sleeps: number[] = [];
    const retries: RetryEvent[] = [];
    const fetcher: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 429) announced.push(((await response.clone().json()) as { retry_after: number }).retry_after);
      return response;
    };
    // Without kept answers: a conditional /v1/me that still holds is a 304, which takes no unit.
    const api = new ArtCatalogClient({
      baseUrl: limitedUrl, key: g.key, fetch: fetcher, onRetry: (e) => retries.push(e), etags: false,
      // Waits as told: until the window the server announced has ended.
      sleep: async (ms) => { sleeps.push(ms); await new Promise((resolve) => setTimeout(resolve, ms)); },
    });
    await api.me();
    await api.me();
    const list = await api.listArtworks();
    expect(list).toMatchObject({ artworks: [], total: 0 });
    expect(announced).toHaveLength(1);
    expect(Number.isInteger(announced[0])).toBe(true);
    expect(announced[0]).toBeGreaterThanOrEqual(1);
    expect(sleeps).toEqual([announced[0]! * 1000]);
    expect(retries).toEqual([expect.objectContaining({ reason: 'rate_limited', status: 429, delayMs: announced[0]! * 1000, attempt: 1 })]);
  });

  test('with maxRateLimitWaits 0 a 429 throws ApiClientError carrying retryAfter, without waiting', async () => {
    const g = await tenant(limited, { tier: 'free' });
    const sleeps: number[] = [];
    const api = new ArtCatalogClient({ baseUrl: limitedUrl, key: g.key, etags: false, retry: { maxRateLimitWaits: 0 }, sleep: async (ms) => { sleeps.push(ms); } });
    await api.me();
    await api.me();
    const failure = await api.me().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApiClientError);
    expect((failure as ApiClientError).status).toBe(429);
    expect((failure as ApiClientError).error).toBe('rate_limited');
    expect(Number.isInteger((failure as ApiClientError).retryAfter)).toBe(true);
    expect((failure as ApiClientError).retryAfter).toBeGreaterThanOrEqual(1);
    expect(sleeps).toEqual([]);
  });

  test('iterateArtworks, iterateEvents and iterateChanges walk a whole list by cursor, page by page, each record once', async () => {
    const recorder = recordingFetch();
    const { api } = await gallery({}, { fetch: recorder.fetcher });
    const items = Array.from({ length: 25 }, (_, i) => ({ title: `Walked ${i + 1}`, creation_year: 1900 + i }));
    await api.postArtworks(items);
    await api.postEvents(Array.from({ length: 7 }, (_, i) => ({ title: `Walked Event ${i + 1}` })));
    await api.deleteArtwork((await api.listArtworks({ limit: 1 })).artworks[0]!.id);
    recorder.calls.length = 0;

    const walked = [];
    for await (const artwork of api.iterateArtworks({ limit: 10 })) walked.push(artwork.title);
    expect(walked).toEqual(items.slice(1).map((i) => i.title));
    expect(recorder.calls.map((c) => new URL(c.url).searchParams.get('after'))).toEqual(['0', expect.any(String), expect.any(String)]);

    const events = [];
    for await (const event of api.iterateEvents({ limit: 3 })) events.push(event.title);
    expect(events).toHaveLength(7);

    const changes = [];
    for await (const change of api.iterateChanges({ limit: 7 })) changes.push(change.id);
    const total = (await api.changelog({ limit: 1 })).total;
    expect(changes).toHaveLength(total);
    expect(new Set(changes).size).toBe(total);
    // Resuming after the last id seen gives exactly the entries written since.
    await api.postArtwork({ title: 'Written Later' });
    const later = [];
    for await (const change of api.iterateChanges({ after: changes.at(-1)! })) later.push([change.entity_type, change.action]);
    expect(later).toEqual([['artwork', 'create']]);
  });
});

describe('the client as a gallery\'s own code uses it', () => {
  let t: TestApp;
  let baseUrl: string;
  let dir: string;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
    dir = mkdtempSync(join(tmpdir(), 'art-catalog-consumer-'));
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  test('a project outside the repository imports art-catalog-service/client with its types, compiles and runs', async () => {
    const g = await tenant(t);
    // As `npm install <this package>` leaves it: the package under node_modules, resolved through `exports`.
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(ROOT, join(dir, 'node_modules', 'art-catalog-service'), 'dir');
    writeFileSync(join(dir, 'package.json'), '{"name": "gallery-sync", "type": "module", "private": true}\n');
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')], outDir: 'out', skipLibCheck: true },
      include: ['sync.ts'],
    }));
    writeFileSync(join(dir, 'sync.ts'), [
      "import { ArtCatalogClient, ApiClientError } from 'art-catalog-service/client';",
      'const client = new ArtCatalogClient({ baseUrl: process.env.ART_CATALOG_URL!, key: process.env.ART_CATALOG_KEY! });',
      "const posted = await client.postArtwork({ title: 'From Outside', creation_year: 2020 });",
      'const year: number | null = (await client.getArtwork(posted.id)).creation_year;',
      'let count = 0;',
      'for await (const artwork of client.iterateArtworks()) count += artwork.title.length > 0 ? 1 : 0;',
      'try { await client.getArtwork(999999); } catch (error) { if (error instanceof ApiClientError) console.log(`error ${error.status} ${error.error}`); }',
      'console.log(`created ${posted.created} year ${year} count ${count}`);',
      '',
    ].join('\n'));
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    await run(process.execPath, [tsc, '--project', 'tsconfig.json'], { cwd: dir });
    // The types are the service's: a title that is not a string does not compile.
    writeFileSync(join(dir, 'sync.ts'), "import { ArtCatalogClient } from 'art-catalog-service/client';\nawait new ArtCatalogClient({ baseUrl: '', key: '' }).postArtwork({ title: 1 });\n");
    const refused = await run(process.execPath, [tsc, '--project', 'tsconfig.json', '--noEmit'], { cwd: dir }).then(() => '', (error: { stdout: string }) => error.stdout);
    expect(refused).toMatch(/sync\.ts\(2,.*error TS2322/);

    const { stdout } = await run(process.execPath, ['out/sync.js'], { cwd: dir, env: { ...process.env, ART_CATALOG_URL: baseUrl, ART_CATALOG_KEY: g.key } });
    expect(stdout).toBe('error 404 not_found\ncreated true year 2020 count 1\n');
  }, 60_000);

  test('examples/client-sync.mjs reads the catalog once, then only the changes written since its last run', async () => {
    const g = await tenant(t);
    const api = inject(t, g.key);
    await api.post('/v1/artworks/batch', { items: [{ title: 'Synced A' }, { title: 'Synced B' }] });
    await api.post('/v1/events', { title: 'Synced Opening' });
    const state = join(dir, 'state.json');
    const env = { ...process.env, ART_CATALOG_URL: baseUrl, ART_CATALOG_KEY: g.key };
    const sync = async () => (await run(process.execPath, [join(ROOT, 'examples', 'client-sync.mjs'), state], { cwd: dir, env })).stdout;

    const first = await sync();
    expect(first).toMatch(/^read 2 artworks and 1 events\n/);
    expect(first).toMatch(/\d+ changes; the next run continues from \{"after":\d+\}\n$/);

    const posted = (await api.post('/v1/artworks', { title: 'Synced C', price: 5 })).body;
    await api.put(`/v1/artworks/${posted.id}`, { price: 6 });
    const second = await sync();
    expect(second.split('\n').filter((line) => line.startsWith('change '))).toEqual([
      expect.stringMatching(new RegExp(`^change \\d+: create artwork ${posted.id} \\(title, `)),
      expect.stringMatching(new RegExp(`^change \\d+: update artwork ${posted.id} \\(price\\)$`)),
    ]);
    expect(second).not.toMatch(/^read /);
    expect(await sync()).toMatch(/^0 changes; /);
  });
});
