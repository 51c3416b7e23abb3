import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECT, startApp, tenant, type FreshDatabase, type TestApp } from '../helpers.js';
import { openRaw, parseResponses, type RawResponse } from '../support/raw-http.js';
import { databaseWithKey, spawnServe, type ServeProcess } from '../support/serve.js';

const BODY_BYTES = 1_200_000;
const ROUNDS = 10;

/**
 * Sends `head` and then `body` as fast as the connection takes them, and returns the first answer once the
 * server has closed the connection (or, with `keepAlive`, once the answer is complete).
 */
async function exchange(port: number, head: string, body: Buffer[] = [], { keepAlive = false } = {}): Promise<{ response: RawResponse | undefined; error: string | null }> {
  const connection = await openRaw(port);
  // Not awaited: a server that stops reading must not stall the client's writes here; the answer tells.
  for (const part of [head, ...body]) connection.socket.write(part);
  if (keepAlive) await connection.waitFor((text) => parseResponses(text).length > 0).catch(() => undefined);
  else await connection.closed;
  connection.destroy();
  return { response: parseResponses(connection.received())[0], error: keepAlive ? null : (await connection.closed).error };
}

function chunked(body: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += 64 * 1024) {
    const chunk = body.subarray(at, at + 64 * 1024);
    parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  }
  return [...parts, Buffer.from('0\r\n\r\n')];
}

// How the server treats the connection does not depend on the database: one pass.
describe.skipIf(DIALECT !== 'sqlite')('a body over 1 MiB on the running server', () => {
  let database: FreshDatabase;
  let key: string;
  let serve: ServeProcess;
  let port: number;
  beforeAll(async () => {
    ({ database, key } = await databaseWithKey());
    serve = spawnServe({ DATABASE_URL: database.url });
    port = Number(new URL(await serve.url).port);
  });
  afterAll(async () => {
    await serve?.stop();
    await database?.drop();
  });

  const body = Buffer.alloc(BODY_BYTES, 'a');
  body.write('{"title":"');
  const head = (extra: string) => `POST /v1/artworks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}\r\n`;

  test.each([
    ['with Content-Length, keep-alive', () => head(`Content-Length: ${BODY_BYTES}\r\n`), [body]],
    ['with Content-Length and Connection: close', () => head(`Content-Length: ${BODY_BYTES}\r\nConnection: close\r\n`), [body]],
    ['chunked', () => head('Transfer-Encoding: chunked\r\n'), chunked(body)],
  ] as const)(`a client sending 1.2 MB %s reads the 413 payload_too_large answer, ${ROUNDS} times out of ${ROUNDS}`, async (_how, makeHead, parts) => {
    for (let round = 0; round < ROUNDS; round++) {
      const { response, error } = await exchange(port, makeHead(), [...parts]);
      expect(error).toBeNull();
      expect(response?.status).toBe(413);
      expect(JSON.parse(response!.body)).toEqual({ error: 'payload_too_large', message: expect.any(String) });
    }
  });

  test('a client with a wrong key sending 1.2 MB reads the 401 answer', async () => {
    const { response } = await exchange(port, head(`Content-Length: ${BODY_BYTES}\r\n`).replace(key, `ak_live_${'x'.repeat(32)}`), [body], { keepAlive: true });
    expect(response?.status).toBe(401);
  });
});

describe('low-level client errors in the contract\'s error shape', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startApp({}, undefined, { timeouts: { headersMs: 400, requestMs: 800 } });
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(async () => { await t.close(); });

  const expectError = (response: RawResponse | undefined, status: number, error: string) => {
    expect(response?.status).toBe(status);
    expect(response?.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response?.headers.connection).toBe('close');
    expect(JSON.parse(response!.body)).toEqual({ error, message: expect.any(String) });
  };

  test.each([
    ['a request line that is not HTTP', 'HELLO THERE\r\n\r\n'],
    ['a header line without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n'],
    ['an invalid Content-Length', 'POST /v1/artworks HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    ['both Content-Length and Transfer-Encoding', 'POST /v1/artworks HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
  ])('%s gets 400 bad_request', async (_what, text) => {
    const { response } = await exchange(port, text);
    expectError(response, 400, 'bad_request');
  });

  test('request headers over 16 KiB get 431 headers_too_large, read in full by a client that sent them all', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { response, error } = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
      expect(error).toBeNull();
      expectError(response, 431, 'headers_too_large');
    }
  });

  test('a client that does not finish its headers in time gets 408 request_timeout', async () => {
    const { response } = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expectError(response, 408, 'request_timeout');
  });

  test('a client that does not finish its body in time gets 408 request_timeout, and nothing is written', async () => {
    const g = await tenant(t);
    const { response } = await exchange(port, `POST /v1/artworks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${g.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`);
    expect(response?.status).toBe(408);
    const list = await t.app.inject({ method: 'GET', url: '/v1/artworks', headers: { authorization: `Bearer ${g.key}` } });
    expect(list.json<{ total: number }>().total).toBe(0);
  });
});
