import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CHANGELOG_PAGE_BYTES } from '../../src/schemas/changelog.js';
import { freshDatabase, startApp, tenant, type FreshDatabase, type TestApp, type Tenant } from '../helpers.js';
import { openRaw, parseResponses, type RawConnection } from '../support/raw-http.js';

// Issue #24: no answer holds the service hostage. A catalog whose changelog is ~8 MB (200 artworks with
// 20,000-character descriptions, most characters two bytes in UTF-8): larger than the system's socket buffers take from a client that does
// not read, so such a client makes the process hold part of its answer.
const ARTWORKS = 200;
const PER_BATCH = 20;
const DESCRIPTION = 20_000;

let database: FreshDatabase;
let shedding: TestApp;
let dropping: TestApp;
let gallery: Tenant;
const base: Record<string, string> = {};
const opened: RawConnection[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  // One server with a long send timeout and a 1 MiB ceiling, one with a short send timeout.
  shedding = await startApp({ UNSENT_MAX_MB: '1' }, database.url);
  dropping = await startApp({ SEND_TIMEOUT_MS: '800' }, database.url);
  base.shedding = await shedding.app.listen({ port: 0, host: '127.0.0.1' });
  base.dropping = await dropping.app.listen({ port: 0, host: '127.0.0.1' });
  gallery = await tenant(shedding, { tier: 'partner' });
  for (let start = 0; start < ARTWORKS; start += PER_BATCH) {
    const items = Array.from({ length: PER_BATCH }, (_, i) => ({
      title: `Heavy ${start + i}`, artist_name: 'Heavy Artist', description: `${start + i} `.padEnd(DESCRIPTION, 'ü'),
    }));
    const response = await fetch(`${base.shedding}/v1/artworks/batch`, { method: 'POST', headers: headers({ 'content-type': 'application/json' }), body: JSON.stringify({ items }) });
    expect(response.status).toBe(200);
  }
});

afterAll(async () => {
  for (const connection of opened) connection.destroy();
  await shedding?.close();
  await dropping?.close();
  await database?.drop();
});

const headers = (extra: Record<string, string> = {}) => ({ authorization: `Bearer ${gallery.key}`, ...extra });

async function get(server: string, path: string) {
  const response = await fetch(`${base[server]}${path}`, { headers: headers() });
  const text = await response.text();
  return { status: response.status, headers: response.headers, bytes: Buffer.byteLength(text), body: JSON.parse(text) };
}

async function metric(server: string, name: string): Promise<number> {
  const text = await new Promise<string>((resolve, reject) => {
    request(`${base[server]}/metrics`, { agent: false }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => { body += chunk.toString(); });
      response.on('end', () => resolve(body));
    }).on('error', reject).end();
  });
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
}

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000) {
  for (const started = Date.now(); !(await condition());) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A read by a client that takes no coding (fetch asks for gzip): the answer the early path may send. On a connection of its own. */
function plainGet(server: string, path: string, extra: Record<string, string> = {}): Promise<{ status: number; bytes: number; etag?: string }> {
  return new Promise((resolve, reject) => {
    request(`${base[server]}${path}`, { headers: headers(extra), agent: false }, (response) => {
      let bytes = 0;
      response.on('data', (chunk: Buffer) => { bytes += chunk.length; });
      response.on('end', () => resolve({ status: response.statusCode!, bytes, etag: response.headers.etag }));
    }).on('error', reject).end();
  });
}

/** A client that sends a request (or several, one after another on its connection) and never reads the answers. */
async function stuckClient(server: string, path: string, requests = 1): Promise<RawConnection> {
  const connection = await openRaw(Number(new URL(base[server]!).port));
  opened.push(connection);
  connection.socket.pause();
  await connection.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${gallery.key}\r\n\r\n`.repeat(requests));
  return connection;
}

describe('answers of any size', () => {
  test('a reader following next_after gets every entry exactly once, in pages cut at about 1 MiB although limit allows 1,000 entries', async () => {
    const ids: number[] = [];
    let after = 0;
    let pages = 0;
    for (let more = true; more; pages += 1) {
      const page = await get('shedding', `/v1/changelog?after=${after}&limit=1000`);
      expect(page.status).toBe(200);
      expect(page.bytes).toBeLessThanOrEqual(CHANGELOG_PAGE_BYTES + 4096);
      expect(page.body.limit).toBe(1000);
      ids.push(...page.body.changes.map((change: { id: number }) => change.id));
      more = page.body.has_more;
      expect(page.body.next_after).toBe(ids.at(-1));
      expect(page.headers.get('link') !== null).toBe(more);
      after = page.body.next_after;
    }
    const { body: { total } } = await get('shedding', '/v1/changelog?limit=1');
    expect(pages).toBeGreaterThanOrEqual(7);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
  });

  test('a numbered page is not cut by bytes: page=1&limit=1000 holds every entry, the same as the cursor pages', async () => {
    const numbered = await get('shedding', '/v1/changelog?page=1&limit=1000');
    expect(numbered.status).toBe(200);
    expect(numbered.bytes).toBeGreaterThan(7 * CHANGELOG_PAGE_BYTES);
    expect(numbered.body.changes).toHaveLength(numbered.body.total);
    expect(numbered.body).toMatchObject({ page: 1, limit: 1000, has_more: false, next_after: numbered.body.changes.at(-1).id });
    const first = await get('shedding', '/v1/changelog?after=0&limit=1000');
    expect(numbered.body.changes.slice(0, first.body.changes.length)).toEqual(first.body.changes);
    const update = numbered.body.changes.find((change: { entity_type: string }) => change.entity_type === 'artwork');
    expect(update.field_changes.description.new).toHaveLength(DESCRIPTION);
  });
});

describe('clients that do not read', () => {
  test('a client that stops reading is dropped after the send timeout and the memory of its answer is released', async () => {
    // Timed from before the request: the send timeout cannot have run out before the answer was sent.
    const started = Date.now();
    const stuck = await stuckClient('dropping', '/v1/changelog?page=1&limit=1000');
    await until(async () => await metric('dropping', 'art_catalog_http_unsent_bytes') > 0);
    await until(async () => await metric('dropping', 'art_catalog_http_send_timeouts_total') === 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await metric('dropping', 'art_catalog_http_unsent_bytes')).toBe(0);
    // What the system had buffered still arrives, then the connection ends: the answer is cut short.
    stuck.socket.resume();
    await stuck.closed;
    expect(stuck.received().length).toBeLessThan(ARTWORKS * DESCRIPTION * 2);
    expect(stuck.received()).toMatch(/^HTTP\/1\.1 200/);
  });

  test('past the ceiling of unread answers, list requests get 503 with Retry-After while other requests are answered; below it again, lists are answered', async () => {
    const stuck = await Promise.all(Array.from({ length: 6 }, () => stuckClient('shedding', '/v1/changelog?page=1&limit=1000')));
    await until(async () => await metric('shedding', 'art_catalog_http_unsent_bytes') > 1024 * 1024);

    const refused = await fetch(`${base.shedding}/v1/changelog?after=0&limit=1000`, { headers: headers() });
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: 'service_unavailable', retry_after: Number(refused.headers.get('retry-after')) });
    expect((await fetch(`${base.shedding}/v1/artworks?limit=100`, { headers: headers() })).status).toBe(503);
    expect((await fetch(`${base.shedding}/v1/me`, { headers: headers() })).status).toBe(200);
    expect((await fetch(`${base.shedding}/healthz`)).status).toBe(200);
    expect(await metric('shedding', 'art_catalog_http_unsent_shed_total')).toBe(2);

    for (const connection of stuck) connection.destroy();
    await until(async () => await metric('shedding', 'art_catalog_http_unsent_bytes') === 0);
    expect((await get('shedding', '/v1/changelog?after=0&limit=10')).status).toBe(200);
  });

  test('a client that pipelines many requests and reads none of the answers is dropped once after the send timeout, counted once, without a MaxListenersExceededWarning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => { warnings.push(`${warning.name}: ${warning.message}`); };
    process.on('warning', onWarning);
    try {
      const dropped = await metric('dropping', 'art_catalog_http_send_timeouts_total');
      // About 160 KB each, a hundred on one connection: more than the system's socket buffers take.
      const stuck = await stuckClient('dropping', '/v1/changelog?after=0&limit=4', 100);
      await until(async () => await metric('dropping', 'art_catalog_http_unsent_bytes') > 0);
      await until(async () => await metric('dropping', 'art_catalog_http_send_timeouts_total') > dropped);
      await until(async () => await metric('dropping', 'art_catalog_http_unsent_bytes') === 0);
      stuck.socket.resume();
      await stuck.closed;
      expect(await metric('dropping', 'art_catalog_http_send_timeouts_total')).toBe(dropped + 1);
      expect(warnings.filter((warning) => warning.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  test('a request pipelined behind a read answer is answered though the server takes longer than the send timeout to answer it: the send timeout is for answers a client does not read', async () => {
    const dropped = await metric('dropping', 'art_catalog_http_send_timeouts_total');
    const connection = await openRaw(Number(new URL(base.dropping!).port));
    opened.push(connection);
    const body = JSON.stringify({ title: 'Late body', artist_name: 'Pipelined Artist' });
    // The second request's body comes well after the first answer has been read: its answer is late.
    await connection.write(`GET /v1/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${gallery.key}\r\n\r\n`
      + `POST /v1/artworks HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${gallery.key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
    await connection.waitFor((received) => parseResponses(received).length === 1);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await connection.write(body);
    await connection.waitFor((received) => parseResponses(received).length === 2);
    expect(parseResponses(connection.received()).map((response) => response.status)).toEqual([200, 201]);
    expect(await metric('dropping', 'art_catalog_http_send_timeouts_total')).toBe(dropped);
    connection.destroy();
  });

  // On both dialects: when the key's cache entry runs out during the flood, the pipelined requests share
  // one look-up of the key (docs/performance.md, API key cache), not one each.
  test('304s sent before the framework are watched as the framework\'s: a client that pipelines them and reads none is dropped after the send timeout', async () => {
    const page = '/v1/changelog?after=0&limit=1';
    const tag = (await plainGet('dropping', page)).etag!;
    // Answered 304 once by the framework, right before: the next ones are sent before it.
    expect((await plainGet('dropping', page, { 'if-none-match': tag })).status).toBe(304);
    const dropped = await metric('dropping', 'art_catalog_http_send_timeouts_total');
    const sentEarly = await metric('dropping', 'art_catalog_http_early_not_modified_total');
    const connection = await openRaw(Number(new URL(base.dropping!).port));
    opened.push(connection);
    connection.socket.pause();
    // Some 400 bytes each, 60,000 of them: more than the system's socket buffers take (~8 MB here).
    void connection.write(`GET ${page} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${gallery.key}\r\nIf-None-Match: ${tag}\r\n\r\n`.repeat(60_000)).catch(() => undefined);
    await until(async () => await metric('dropping', 'art_catalog_http_send_timeouts_total') > dropped, 50_000);
    expect(await metric('dropping', 'art_catalog_http_early_not_modified_total')).toBeGreaterThan(sentEarly + 1000);
    connection.socket.resume();
    await connection.closed;
  }, 60_000);

  test('a page sent before the framework from the kept answers is watched as the framework\'s: a client that stops reading is dropped after the send timeout, and past the ceiling the page gets 503', async () => {
    // About 160 KB (four entries of 20,000 two-byte characters): kept once streamed.
    const page = '/v1/changelog?after=0&limit=4';
    const early = (server: string) => metric(server, 'art_catalog_http_early_kept_answers_total');
    // Read twice through the framework (built, then kept), right before: the key's check is cached for a few seconds.
    const readTwice = async (server: string) => {
      for (let i = 0; i < 2; i++) expect((await plainGet(server, page)).status).toBe(200);
    };

    await readTwice('dropping');
    const [sentEarly, dropped] = [await early('dropping'), await metric('dropping', 'art_catalog_http_send_timeouts_total')];
    // A hundred at once on one connection: more than the system's socket buffers take.
    await stuckClient('dropping', page, 100);
    await until(async () => await metric('dropping', 'art_catalog_http_unsent_bytes') > 0);
    await until(async () => await metric('dropping', 'art_catalog_http_send_timeouts_total') > dropped);
    expect(await early('dropping')).toBeGreaterThan(sentEarly);
    await until(async () => await metric('dropping', 'art_catalog_http_unsent_bytes') === 0);

    await readTwice('shedding');
    const before = await early('shedding');
    const read = await plainGet('shedding', page);
    expect(read.status).toBe(200);
    expect(read.bytes).toBeGreaterThan(4 * DESCRIPTION);
    expect(await early('shedding')).toBe(before + 1);
    const stuck = await Promise.all(Array.from({ length: 6 }, () => stuckClient('shedding', '/v1/changelog?page=1&limit=1000')));
    await until(async () => await metric('shedding', 'art_catalog_http_unsent_bytes') > 1024 * 1024);
    expect((await plainGet('shedding', page)).status).toBe(503);
    expect(await early('shedding')).toBe(before + 1);
    for (const connection of stuck) connection.destroy();
    await until(async () => await metric('shedding', 'art_catalog_http_unsent_bytes') === 0);
    await readTwice('shedding');
    expect(await early('shedding')).toBeGreaterThan(before + 1);
  });
});
