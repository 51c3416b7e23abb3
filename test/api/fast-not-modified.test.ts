import { request } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { leaseSize } from '../../src/coordination/rate-limiter.js';
import type { Tier } from '../../src/domain/keys.js';
import { revokeKey } from '../../src/store/keys.js';
import { setPaused } from '../../src/store/entities.js';
import { client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';
import { openRaw, parseResponses } from '../support/raw-http.js';

/**
 * Answers before the framework (src/http/early/fast-not-modified.ts) — 304s, and kept answers —
 * through real HTTP: the server's request listener is what sends them, so `inject` would never reach
 * it. Whether an answer came early is read from `art_catalog_http_early_not_modified_total` and
 * `art_catalog_http_early_kept_answers_total`.
 */

interface Answer {
  status: number;
  /** Names and values as they came on the wire, in order. */
  raw: string[];
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(base: string, path: string, headers: Record<string, string>, method = 'GET'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    request(`${base}${path}`, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, raw: response.rawHeaders, headers: response.headers, body: Buffer.concat(chunks).toString() }));
    }).on('error', reject).end();
  });
}

async function listening(env: Record<string, string> = {}, logStream?: NodeJS.WritableStream) {
  const t = await startApp(env, undefined, logStream ? { logStream } : {});
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  return { t, base };
}

/** A metric's value (the first series matching `labels`), or undefined when the app has no such series. */
async function metric(t: TestApp, name: string, labels = ''): Promise<number | undefined> {
  const text = (await client(t).get('/metrics')).body as string;
  const line = text.split('\n').find((l) => l.startsWith(name) && !l.startsWith(`${name}_`) && l.includes(labels));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
const earlyAnswers = async (t: TestApp) => (await metric(t, 'art_catalog_http_early_not_modified_total')) ?? 0;
const earlyKept = async (t: TestApp) => (await metric(t, 'art_catalog_http_early_kept_answers_total')) ?? 0;

/** The raw headers without the two that differ between any two answers: Date, and the request id's value. */
const comparable = (raw: string[]) => raw.flatMap((value, i) => (i % 2 === 0
  ? [] : /^date$/i.test(raw[i - 1]!) ? [] : [raw[i - 1]!, raw[i - 1] === 'x-request-id' ? 'ID' : value]));
const names = (raw: string[]) => raw.filter((_, i) => i % 2 === 0);

const artwork = (title: string) => ({ title, artist_name: 'Hilma af Klint', creation_year: 1907, medium: 'Tempera' });

let t: TestApp;
let base: string;
beforeAll(async () => ({ t, base } = await listening({ RATE_LIMIT_SUBSCRIBER: '8', RATE_LIMIT_WINDOW_S: '600' })));
afterAll(async () => { await t?.close(); });

/** A gallery with one artwork; its key has polled `path` once through the framework (200, then 304). */
async function polling(path = '/v1/artworks', options: Parameters<typeof tenant>[1] = {}) {
  const g = await tenant(t, { tier: 'partner', ...options });
  const created = await client(t, g.key).post('/v1/artworks', artwork('Primordial Chaos'));
  const url = path.replace('ID', String(created.body.id));
  const auth = { authorization: `Bearer ${g.key}` };
  const first = await send(base, url, auth);
  expect(first.status).toBe(200);
  const poll = { ...auth, 'if-none-match': String(first.headers.etag) };
  const before = await earlyAnswers(t);
  const framework = await send(base, url, poll);
  expect(framework.status).toBe(304);
  expect(await earlyAnswers(t)).toBe(before);
  return { g, url, auth, poll, framework, id: created.body.id as number };
}

describe('a poll that Fastify answered 304 once', () => {
  test.each(['/v1/artworks', '/v1/artworks/ID', '/v1/artworks?limit=1&after=0', '/v1/changelog', '/v1/profile', '/v1/sync/status'])(
    '%s is answered early next time, with the framework\'s headers in its order (only Date and the request id differ)', async (path) => {
      const { url, poll, framework } = await polling(path);
      const before = await earlyAnswers(t);
      const early = await send(base, url, poll);
      expect(early.status).toBe(304);
      expect(await earlyAnswers(t)).toBe(before + 1);
      expect(comparable(early.raw)).toEqual(comparable(framework.raw));
      expect(early.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(early.headers['x-request-id']).not.toBe(framework.headers['x-request-id']);
    });

  test.each(['/v1/events', '/v1/me'])('%s, whose tag depends on more than the data and the URL (the date, the key\'s rate-limit state), is left to the framework', async (path) => {
    const { url, poll } = await polling(path);
    const before = await earlyAnswers(t);
    expect((await send(base, url, poll)).status).toBe(304);
    expect(await earlyAnswers(t)).toBe(before);
  });

  test('keeps a request id the client chose, as the framework does', async () => {
    const { url, poll } = await polling();
    const early = await send(base, url, { ...poll, 'x-request-id': 'mirror-poll-7' });
    expect(early.status).toBe(304);
    expect(early.headers['x-request-id']).toBe('mirror-poll-7');
  });

  test('with NOT_MODIFIED_MEMO_KB=0 every 304 comes from the framework, with the same headers as an early one', async () => {
    const off = await listening({ NOT_MODIFIED_MEMO_KB: '0' });
    try {
      const g = await tenant(off.t, { tier: 'partner' });
      const auth = { authorization: `Bearer ${g.key}` };
      const first = await send(off.base, '/v1/artworks', auth);
      const polls = [];
      for (let i = 0; i < 3; i++) polls.push(await send(off.base, '/v1/artworks', { ...auth, 'if-none-match': String(first.headers.etag) }));
      expect(polls.map((p) => p.status)).toEqual([304, 304, 304]);
      expect(await metric(off.t, 'art_catalog_http_early_not_modified_total')).toBeUndefined();
      const { url, poll } = await polling();
      const early = await send(base, url, poll);
      expect(names(early.raw)).toEqual(names(polls[2]!.raw));
      for (const name of ['x-content-type-options', 'x-ratelimit-limit', 'cache-control', 'vary']) expect(early.headers[name], name).toBe(polls[2]!.headers[name]);
    } finally {
      await off.t.close();
    }
  });

  test('a HEAD is left to the framework: its 304 carries Content-Length: 0, which the early one does not', async () => {
    const { url, poll } = await polling();
    const before = await earlyAnswers(t);
    const heads = [await send(base, url, poll, 'HEAD'), await send(base, url, poll, 'HEAD'), await send(base, url, poll, 'HEAD')];
    expect(heads.map((h) => h.status)).toEqual([304, 304, 304]);
    expect(heads.map((h) => h.headers['content-length'])).toEqual(['0', '0', '0']);
    expect(await earlyAnswers(t)).toBe(before);
  });
});

describe('the early 304 is never sent when the framework would answer otherwise', () => {
  test('a write in this process makes the next poll a 200 at once', async () => {
    const { g, url, poll, id } = await polling();
    expect((await send(base, url, poll)).status).toBe(304);
    await client(t, g.key).put(`/v1/artworks/${id}`, { price: 4500 });
    const after = await send(base, url, poll);
    expect(after.status).toBe(200);
    expect(after.headers.etag).not.toBe(poll['if-none-match']);
  });

  test('a write through another app on the same database makes the next poll a 200 at once', async () => {
    const { g, url, poll, id } = await polling();
    expect((await send(base, url, poll)).status).toBe(304);
    const other = await startApp({}, t.config.databaseUrl);
    try {
      expect((await client(other, g.key).put(`/v1/artworks/${id}`, artwork('The Ten Largest'))).status).toBe(200);
    } finally {
      await other.close();
    }
    expect((await send(base, url, poll)).status).toBe(200);
  });

  test('a key revoked in this process gets 401 at once', async () => {
    const { g, url, poll } = await polling();
    expect((await send(base, url, poll)).status).toBe(304);
    await revokeKey(t.handle.db, g.prefix);
    const refused = await send(base, url, poll);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toContain('invalid_token');
  });

  test('a paused account gets 403 at once', async () => {
    const { g, url, poll } = await polling();
    expect((await send(base, url, poll)).status).toBe(304);
    await setPaused(t.handle.db, g.entityId, true);
    const refused = await send(base, url, poll);
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toMatch(/json/);
  });

  test('an expired key gets 401 once its time has passed', async () => {
    const expires = Date.now() + 1500;
    const g = await tenant(t, { tier: 'partner', expiresAt: new Date(expires).toISOString() });
    const auth = { authorization: `Bearer ${g.key}` };
    const first = await send(base, '/v1/profile', auth);
    const poll = { ...auth, 'if-none-match': String(first.headers.etag) };
    expect((await send(base, '/v1/profile', poll)).status).toBe(304);
    expect((await send(base, '/v1/profile', poll)).status).toBe(304);
    while (Date.now() <= expires) await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await send(base, '/v1/profile', poll)).status).toBe(401);
  });

  test('a key of the same entity without the route\'s scope gets 403 for the very tag another key polls with', async () => {
    const { g, url, poll } = await polling();
    expect((await send(base, url, poll)).status).toBe(304);
    const events = await keyFor(t, g.entityId, { scopes: ['events:read'] });
    const before = await earlyAnswers(t);
    for (let i = 0; i < 3; i++) {
      const refused = await send(base, url, { ...poll, authorization: `Bearer ${events.key}` });
      expect(refused.status).toBe(403);
      expect(refused.headers['www-authenticate']).toContain('insufficient_scope');
    }
    expect(await earlyAnswers(t)).toBe(before);
  });

  test('another key of the same entity is answered by the framework first: the memo is per key', async () => {
    const { g, url, poll } = await polling();
    const second = await keyFor(t, g.entityId, { tier: 'partner' });
    expect((await send(base, url, { authorization: `Bearer ${second.key}` })).status).toBe(200);
    const before = await earlyAnswers(t);
    expect((await send(base, url, { ...poll, authorization: `Bearer ${second.key}` })).status).toBe(304);
    expect(await earlyAnswers(t)).toBe(before);
  });

  test.each(['Authorization', 'Host'])('a repeated %s header gets 400, as without the early 304', async (header) => {
    const { url, poll } = await polling();
    expect((await send(base, url, poll)).status).toBe(304);
    const raw = await openRaw(Number(new URL(base).port));
    try {
      const repeated = header === 'Authorization' ? `Authorization: ${poll.authorization}\r\n` : 'Host: elsewhere.example\r\n';
      await raw.write(`GET ${url} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${poll.authorization}\r\n${repeated}If-None-Match: ${poll['if-none-match']}\r\n\r\n`);
      const [answer] = parseResponses(await raw.waitFor((text) => parseResponses(text).length === 1));
      expect(answer!.status).toBe(400);
      expect(JSON.parse(answer!.body).details).toEqual([{ field: header, message: 'sent more than once' }]);
    } finally {
      raw.destroy();
    }
  });

  test('a poll that arrives once close() has begun gets the framework\'s 503', async () => {
    const closing = await listening();
    let closed: Promise<void> | undefined;
    try {
      const g = await tenant(closing.t, { tier: 'partner' });
      const auth = { authorization: `Bearer ${g.key}` };
      const first = await send(closing.base, '/v1/artworks', auth);
      const poll = { ...auth, 'if-none-match': String(first.headers.etag) };
      expect((await send(closing.base, '/v1/artworks', poll)).status).toBe(304);
      expect((await send(closing.base, '/v1/artworks', poll)).status).toBe(304);
      expect(await earlyAnswers(closing.t)).toBe(1);
      // A request under way (its headers half sent) keeps its connection open through close().
      const raw = await openRaw(Number(new URL(closing.base).port));
      await raw.write(`GET /v1/artworks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${poll.authorization}\r\n`);
      await raw.readByServer();
      closed = closing.t.app.close();
      while (!closing.t.app.isClosing()) await new Promise((resolve) => setTimeout(resolve, 5));
      await raw.write(`If-None-Match: ${poll['if-none-match']}\r\n\r\n`);
      const [answer] = parseResponses(await raw.waitFor((text) => parseResponses(text).length === 1));
      expect(answer!.status).toBe(503);
      expect(answer!.headers.connection).toBe('close');
      raw.destroy();
    } finally {
      await closed;
      await closing.t.close();
    }
  });

  test('a tag that does not match gets the 200 and takes its unit', async () => {
    const { url, auth } = await polling();
    const stale = await send(base, url, { ...auth, 'if-none-match': '"1-0.0-AAAAAAAAAAAAAAAA"' });
    expect(stale.status).toBe(200);
  });
});

test('304s answered early take no rate-limit unit and carry the window\'s state', async () => {
  const g = await tenant(t);
  const auth = { authorization: `Bearer ${g.key}` };
  const first = await send(base, '/v1/artworks', auth);
  expect(first.headers['x-ratelimit-remaining']).toBe('7');
  const poll = { ...auth, 'if-none-match': String(first.headers.etag) };
  const before = await earlyAnswers(t);
  for (let i = 0; i < 12; i++) {
    const polled = await send(base, '/v1/artworks', poll);
    expect(polled.status).toBe(304);
    expect(polled.headers['x-ratelimit-remaining']).toBe('7');
    expect(polled.headers['x-ratelimit-reset']).toBe(first.headers['x-ratelimit-reset']);
  }
  expect(await earlyAnswers(t)).toBe(before + 11);
  expect((await send(base, '/v1/artworks', auth)).headers['x-ratelimit-remaining']).toBe('6');
});

test('the memo stays within NOT_MODIFIED_MEMO_KB: the pair used least recently is forgotten first', async () => {
  const small = await listening({ NOT_MODIFIED_MEMO_KB: '1' });
  try {
    const g = await tenant(small.t, { tier: 'partner' });
    const auth = { authorization: `Bearer ${g.key}` };
    const urls = Array.from({ length: 8 }, (_, i) => `/v1/artworks?limit=${i + 1}`);
    const polls = new Map<string, Record<string, string>>();
    for (const url of urls) {
      const first = await send(small.base, url, auth);
      polls.set(url, { ...auth, 'if-none-match': String(first.headers.etag) });
      expect((await send(small.base, url, polls.get(url)!)).status).toBe(304);
    }
    expect(await metric(small.t, 'art_catalog_http_not_modified_memo_bytes')).toBeLessThanOrEqual(1024);
    const early = async (url: string) => {
      const before = await earlyAnswers(small.t);
      expect((await send(small.base, url, polls.get(url)!)).status).toBe(304);
      return (await earlyAnswers(small.t)) - before;
    };
    expect(await early(urls[7]!)).toBe(1);
    expect(await early(urls[0]!)).toBe(0);
  } finally {
    await small.t.close();
  }
});

test.each([
  ['', {}, '127.0.0.1'],
  // The peer is trusted, 2001:db8::42 is not: the client. With every hop trusted: the first address.
  [' behind a trusted proxy', { TRUST_PROXY: '127.0.0.1' }, '2001:db8::42'],
  [' behind TRUST_PROXY=true', { TRUST_PROXY: 'true' }, '203.0.113.1'],
])('an early 304 is counted in the duration histogram and logged like the framework\'s%s', async (_name, env: Record<string, string>, client) => {
  const forwarded = Object.keys(env).length > 0;
  const lines: string[] = [];
  const stream = new Writable({ write(chunk, _encoding, done) { lines.push(chunk.toString()); done(); } });
  const logged = await listening({ LOG_LEVEL: 'info', ...env }, stream);
  try {
    const g = await tenant(logged.t, { tier: 'partner' });
    const auth = { authorization: `Bearer ${g.key}`, ...(forwarded ? { 'x-forwarded-for': '203.0.113.1, 2001:db8::42' } : {}) };
    const first = await send(logged.base, '/v1/artworks', auth);
    const poll = { ...auth, 'if-none-match': String(first.headers.etag) };
    const framework = await send(logged.base, '/v1/artworks', poll);
    const early = await send(logged.base, '/v1/artworks', poll);
    expect(await earlyAnswers(logged.t)).toBe(1);
    expect(await metric(logged.t, 'art_catalog_http_request_duration_seconds_count', 'method="GET",route="/v1/artworks",status_code="304"')).toBe(2);
    const lineOf = (answer: Answer) => {
      const mine = lines.map((line) => JSON.parse(line)).filter((line) => line.reqId === answer.headers['x-request-id']);
      expect(mine).toHaveLength(1);
      return mine[0];
    };
    const [fromFramework, fromEarly] = [lineOf(framework), lineOf(early)];
    expect(Object.keys(fromEarly)).toEqual(Object.keys(fromFramework));
    const varying = ['time', 'reqId', 'duration_ms'];
    for (const field of Object.keys(fromFramework).filter((name) => !varying.includes(name))) expect(fromEarly[field], field).toEqual(fromFramework[field]);
    expect(fromEarly).toMatchObject({ msg: 'request completed', status: 304, entity_id: g.entityId, level: 30, client });
    expect(typeof fromEarly.duration_ms).toBe('number');
  } finally {
    await logged.t.close();
  }
});

/**
 * Kept answers go out early where the rate limiter counts the unit at once: in process memory, or with
 * REDIS_URL (the PostgreSQL run) from the lease a process holds of the key's units — none when the
 * key's lease is a single unit (a small limit: every request asks Redis), and then every answer is the
 * framework's, and must read the same.
 */
const earlyKeptCount = (tier: Tier, n: number) =>
  (t.app.config.redisUrl && leaseSize(t.app.config.rateLimits[tier], t.app.config.rateLimitLease) === 1 ? 0 : n);

/** A gallery with one artwork whose key read `path` twice through the framework: built, then kept. */
async function reading(path: string, options: Parameters<typeof tenant>[1] = { tier: 'partner' }, description?: string) {
  const g = await tenant(t, options);
  const created = await client(t, g.key).post('/v1/artworks', { ...artwork('Primordial Chaos'), ...(description ? { description } : {}) });
  const url = path.replace('ID', String(created.body.id));
  const auth = { authorization: `Bearer ${g.key}` };
  expect((await send(base, url, auth)).status).toBe(200);
  const before = await earlyKept(t);
  const kept = await send(base, url, auth);
  expect(kept.status).toBe(200);
  expect(await earlyKept(t)).toBe(before);
  return { g, url, auth, kept, id: created.body.id as number };
}

/** A description that makes an answer larger than 1 KiB: one a client may take compressed. */
const LONG = 'Tempera on paper, mounted on canvas. '.repeat(40);

/** The raw headers as `comparable` gives them, the remaining units left out too (each answer takes one). */
const sameButUnits = (raw: string[]) => comparable(raw).map((value, i, all) => (all[i - 1] === 'x-ratelimit-remaining' ? 'N' : value));

describe('a kept answer that Fastify sent once', () => {
  test.each(['/v1/artworks/ID', '/v1/profile'])('%s is sent early next time: the same body, the same headers in order, one unit taken', async (path) => {
    const { url, auth, kept } = await reading(path);
    const before = await earlyKept(t);
    const early = await send(base, url, auth);
    expect(early.status).toBe(200);
    expect(await earlyKept(t)).toBe(before + 1);
    expect(early.body).toBe(kept.body);
    expect(sameButUnits(early.raw)).toEqual(sameButUnits(kept.raw));
    expect(Number(early.headers['x-ratelimit-remaining'])).toBe(Number(kept.headers['x-ratelimit-remaining']) - 1);
    expect(early.headers['x-request-id']).not.toBe(kept.headers['x-request-id']);
  });

  test.each([
    ['/v1/artworks?limit=5&page=1', true], ['/v1/artworks', false], ['/v1/changelog?after=0&limit=1', true], ['/v1/changelog', false],
  ])('the page %s (a large answer, with a Link: %s) is sent early next time to a client that takes no coding: the framework\'s bytes and headers, one unit taken', async (url, linked) => {
    const g = await tenant(t, { tier: 'partner' });
    const auth = { authorization: `Bearer ${g.key}` };
    // Six artworks: a list page of five is over 1 KiB, and has a next page.
    for (let i = 1; i <= 6; i++) await client(t, g.key).post('/v1/artworks', { ...artwork(`Primordial Chaos No. ${i}`), description: LONG });
    const built = await send(base, url, auth);
    expect(built.status).toBe(200);
    const kept = await send(base, url, auth);
    const before = await earlyKept(t);
    const early = await send(base, url, auth);
    expect(early.status).toBe(200);
    expect(await earlyKept(t)).toBe(before + earlyKeptCount('partner', 1));
    expect(early.body.length).toBeGreaterThan(1024);
    // Built, then sent from the answer cache by the framework, then early: each says it varies by coding.
    expect([built.headers.vary, kept.headers.vary, early.headers.vary]).toEqual(['accept-encoding', 'accept-encoding', 'accept-encoding']);
    expect(early.headers.link !== undefined).toBe(linked);
    expect(early.body).toBe(kept.body);
    expect(sameButUnits(early.raw)).toEqual(sameButUnits(kept.raw));
    expect(Number(early.headers['x-ratelimit-remaining'])).toBe(Number(kept.headers['x-ratelimit-remaining']) - 1);
  });

  test('many reads at once are all sent early, each taking its own unit: with Redis those over the lease wait for its answer instead of going to the framework', async () => {
    const { url, auth } = await reading('/v1/artworks/ID');
    const before = await earlyKept(t);
    const reads = await Promise.all(Array.from({ length: 100 }, () => send(base, url, auth)));
    expect(reads.map((read) => read.status)).toEqual(reads.map(() => 200));
    expect(await earlyKept(t)).toBe(before + earlyKeptCount('partner', 100));
    expect(new Set(reads.map((read) => read.headers['x-ratelimit-remaining'])).size).toBe(100);
  });

  test('the units run out as through the framework: the key at its limit gets the framework\'s 429', async () => {
    // The subscriber tier here: 8 a window. One for the POST, two for the reads through the framework.
    const { url, auth } = await reading('/v1/artworks/ID', { tier: 'subscriber' });
    const before = await earlyKept(t);
    const remaining = [];
    for (let i = 0; i < 5; i++) {
      const read = await send(base, url, auth);
      expect(read.status).toBe(200);
      remaining.push(read.headers['x-ratelimit-remaining']);
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    expect(await earlyKept(t)).toBe(before + earlyKeptCount('subscriber', 5));
    const refused = await send(base, url, auth);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body).error).toBe('rate_limited');
    expect(refused.headers['retry-after']).toBeDefined();
    expect(await earlyKept(t)).toBe(before + earlyKeptCount('subscriber', 5));
  });

  test('a write makes the next read the new answer at once', async () => {
    const { g, url, auth, id } = await reading('/v1/artworks/ID');
    expect((await send(base, url, auth)).status).toBe(200);
    await client(t, g.key).put(`/v1/artworks/${id}`, { price: 4500 });
    const after = await send(base, url, auth);
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body).price).toBe(4500);
  });

  test('a key revoked in this process gets 401 at once', async () => {
    const { g, url, auth } = await reading('/v1/artworks/ID');
    expect((await send(base, url, auth)).status).toBe(200);
    await revokeKey(t.handle.db, g.prefix);
    expect((await send(base, url, auth)).status).toBe(401);
  });

  test('HEADs, and answers of 1 KiB or more to a client that takes a coding of them, are the framework\'s; the next plain read is early again', async () => {
    const long = await reading('/v1/artworks/ID', { tier: 'partner' }, LONG);
    expect(long.kept.body.length).toBeGreaterThan(1024);
    const before = await earlyKept(t);
    for (let i = 0; i < 3; i++) {
      expect((await send(base, long.url, long.auth, 'HEAD')).status).toBe(200);
      const read = await send(base, long.url, { ...long.auth, 'accept-encoding': 'br' });
      expect(read.headers['content-encoding']).toBe('br');
    }
    expect(await earlyKept(t)).toBe(before);
    expect((await send(base, long.url, long.auth)).body).toBe(long.kept.body);
    expect(await earlyKept(t)).toBe(before + earlyKeptCount('partner', 1));
  });

  test('an early answer is counted in the duration histogram and logged like the framework\'s', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(chunk.toString()); done(); } });
    const logged = await listening({ LOG_LEVEL: 'info' }, stream);
    try {
      const g = await tenant(logged.t, { tier: 'partner' });
      const auth = { authorization: `Bearer ${g.key}` };
      const framework = [await send(logged.base, '/v1/profile', auth), await send(logged.base, '/v1/profile', auth)];
      const early = await send(logged.base, '/v1/profile', auth);
      expect(await earlyKept(logged.t)).toBe(1);
      expect(await metric(logged.t, 'art_catalog_http_request_duration_seconds_count', 'method="GET",route="/v1/profile",status_code="200"')).toBe(3);
      const lineOf = (answer: Answer) => lines.map((line) => JSON.parse(line)).find((line) => line.reqId === answer.headers['x-request-id']);
      const [fromFramework, fromEarly] = [lineOf(framework[1]!), lineOf(early)];
      expect(Object.keys(fromEarly)).toEqual(Object.keys(fromFramework));
      expect(fromEarly).toMatchObject({ msg: 'request completed', status: 200, entity_id: g.entityId, url: '/v1/profile' });
    } finally {
      await logged.t.close();
    }
  });
});
