import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { addressPolicy, FetchFailed, fetchUrl } from '../../src/fetch/index.js';

/** The one outgoing fetcher (src/fetch): what feeds and webhooks need of it, under one address policy. */

let server: Server;
let base: string;
const received: Array<{ method: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ method: request.method!, headers: request.headers, body: Buffer.concat(chunks).toString() });
      const path = request.url!;
      if (path === '/feed.csv') {
        if (request.headers['if-none-match'] === '"v1"') return response.writeHead(304, { etag: '"v1"' }).end();
        return response.writeHead(200, { etag: '"v1"', 'last-modified': 'Wed, 21 Oct 2026 07:28:00 GMT' }).end('a,b\n1,2\n');
      }
      if (path === '/moved') return response.writeHead(301, { location: '/feed.csv' }).end();
      if (path === '/loop') return response.writeHead(302, { location: '/loop' }).end();
      if (path === '/big-error') return response.writeHead(500).end(Buffer.alloc(200_000, 'e'));
      if (path === '/big') return response.writeHead(200, { 'content-length': '3000000' }).end(Buffer.alloc(3_000_000, 'b'));
      if (path === '/big-undeclared') return response.writeHead(200).end(Buffer.alloc(3_000_000, 'b'));
      if (path === '/slow') return setTimeout(() => response.end('late'), 5_000);
      if (path === '/hook') return response.writeHead(202).end('ok');
      response.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const open = { allowAddress: addressPolicy(true) };
const feed = { maxRedirects: 3, maxBytes: 20 * 1024 * 1024, timeoutMs: 60_000, ...open };
const webhook = { maxRedirects: 0, maxBytes: 64 * 1024, overflow: 'truncate' as const, readErrorBody: true, timeoutMs: 10_000, ...open };

test('a conditional GET answers its status and headers: 200 with the validators, then 304 with no body', async () => {
  const first = await fetchUrl({ url: `${base}/feed.csv`, ...feed });
  expect(first).toMatchObject({ status: 200, url: `${base}/feed.csv`, truncated: false });
  expect(first.headers).toMatchObject({ etag: '"v1"', 'last-modified': 'Wed, 21 Oct 2026 07:28:00 GMT' });
  expect(first.body.toString()).toBe('a,b\n1,2\n');
  const again = await fetchUrl({ url: `${base}/feed.csv`, headers: { 'if-none-match': '"v1"' }, ...feed });
  expect(again.status).toBe(304);
  expect(again.body.length).toBe(0);
});

test('redirects are followed up to the limit (then "too many redirects"); with none allowed a redirect is a failure', async () => {
  expect((await fetchUrl({ url: `${base}/moved`, ...feed })).url).toBe(`${base}/feed.csv`);
  await expect(fetchUrl({ url: `${base}/loop`, ...feed })).rejects.toThrow(new FetchFailed('too many redirects'));
  await expect(fetchUrl({ url: `${base}/moved`, method: 'POST', body: '{}', ...webhook })).rejects.toThrow(new FetchFailed('redirected (HTTP 301)', 301));
});

test('a POST sends its body and headers; an error answer\'s body is read to the limit and cut there', async () => {
  const answer = await fetchUrl({ url: `${base}/hook`, method: 'POST', body: '{"type":"webhook.test"}', headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1' }, ...webhook });
  expect(answer).toMatchObject({ status: 202, truncated: false });
  expect(answer.body.toString()).toBe('ok');
  expect(received.at(-1)).toMatchObject({ method: 'POST', body: '{"type":"webhook.test"}', headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'content-length': '23' } });
  const error = await fetchUrl({ url: `${base}/big-error`, method: 'POST', body: '{}', ...webhook });
  expect(error).toMatchObject({ status: 500, truncated: true });
  expect(error.body.length).toBe(64 * 1024);
});

test('a body past the limit fails with its size; a fetch past its time fails as timed out', async () => {
  await expect(fetchUrl({ url: `${base}/big`, ...feed, maxBytes: 1024 * 1024 })).rejects.toThrow(new FetchFailed('too large: 3 MB'));
  // Undeclared, it is counted as it arrives, and the fetch stops a read past the limit.
  await expect(fetchUrl({ url: `${base}/big-undeclared`, ...feed, maxBytes: 1024 * 1024 })).rejects.toThrow(new FetchFailed('too large: 2 MB'));
  await expect(fetchUrl({ url: `${base}/slow`, ...feed, timeoutMs: 200 })).rejects.toThrow(new FetchFailed('timed out'));
});

test('private addresses are refused unless FETCH_ALLOW_PRIVATE is true; IMAGE_FETCH_ALLOW_PRIVATE opens images only', async () => {
  await expect(fetchUrl({ ...feed, url: `${base}/feed.csv`, allowAddress: addressPolicy(false) })).rejects.toThrow(new FetchFailed('address not allowed'));
  await expect(fetchUrl({ ...feed, url: 'http://localhost:1/', allowAddress: addressPolicy(false) })).rejects.toThrow(new FetchFailed('address not allowed'));
  const env = { DATABASE_URL: 'sqlite::memory:' };
  expect(loadConfig(env).fetchAllowPrivate).toBe(false);
  expect(loadConfig({ ...env, FETCH_ALLOW_PRIVATE: 'true' }).fetchAllowPrivate).toBe(true);
  expect(loadConfig({ ...env, FETCH_ALLOW_PRIVATE: 'true' }).imageFetchAllowPrivate).toBe(true);
  expect(loadConfig({ ...env, IMAGE_FETCH_ALLOW_PRIVATE: 'true' }).fetchAllowPrivate).toBe(false);
  expect(loadConfig({ ...env, IMAGE_FETCH_ALLOW_PRIVATE: 'true' }).imageFetchAllowPrivate).toBe(true);
});
