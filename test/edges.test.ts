import { connect as tcpConnect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from './helpers.js';

/** Opens a raw connection, writes `text`, and resolves with what came back once the server closes it. */
async function rawExchange(port: number, text: string, { keepOpenMs = 0 } = {}): Promise<{ answer: string; closedAfterMs: number }> {
  const socket: Socket = tcpConnect(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  const started = Date.now();
  let answer = '';
  socket.on('data', (chunk: Buffer) => { answer += chunk.toString(); });
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - started)));
  socket.on('error', () => undefined);
  socket.write(text);
  const closedAfterMs = await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), keepOpenMs))]);
  socket.destroy();
  return { answer, closedAfterMs };
}

describe('slow and oversized clients', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startApp({}, undefined, { timeouts: { headersMs: 400, requestMs: 800 } });
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  afterAll(async () => { await t.close(); });

  test('a client that never finishes its headers is cut off with 408 after the headers timeout', async () => {
    const { answer, closedAfterMs } = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ', { keepOpenMs: 5000 });
    expect(closedAfterMs).toBeGreaterThan(0);
    expect(closedAfterMs).toBeLessThan(3000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  test('a client that never finishes its body is cut off with 408 after the request timeout', async () => {
    const g = await tenant(t);
    const head = `POST /v1/artworks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${g.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`;
    const { answer, closedAfterMs } = await rawExchange(port, head, { keepOpenMs: 5000 });
    expect(closedAfterMs).toBeGreaterThan(0);
    expect(closedAfterMs).toBeLessThan(4000);
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect((await client(t, g.key).get('/v1/artworks')).body.total).toBe(0);
  });

  test('request headers over 16 KiB are refused with 431 before any handler runs', async () => {
    const { answer } = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, { keepOpenMs: 3000 });
    expect(answer).toMatch(/^HTTP\/1\.1 431/);
  });
});

describe('logs', () => {
  test('no log line ever contains an API key or the Authorization header, even at trace level', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(chunk.toString()); done(); } });
    const t = await startApp({ LOG_LEVEL: 'trace' }, undefined, { logStream: stream });
    try {
      const g: Tenant = await tenant(t);
      const unknown = `ak_live_${'Z'.repeat(32)}`;
      await client(t, g.key).post('/v1/artworks', { title: 'Logged Work' }, { 'idempotency-key': 'secret-idempotency-value' });
      await client(t, g.key).get('/v1/nope');
      await client(t, unknown).get('/v1/artworks');
      await client(t).get('/v1/artworks', { authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` });
      // Something was logged, so the absence below means something.
      expect(lines.filter((l) => l.includes('"msg":"request completed"')).length).toBeGreaterThanOrEqual(4);
      const all = lines.join('');
      expect(all).not.toContain(g.key.slice(16));
      expect(all).not.toContain('Z'.repeat(32));
      expect(all.toLowerCase()).not.toContain('bearer ');
      expect(all).not.toContain('dXNlcjpwYXNz');
      expect(all).not.toContain('secret-idempotency-value');
    } finally {
      await t.close();
    }
  });
});

describe('CORS', () => {
  let t: TestApp;
  let g: Tenant;
  beforeAll(async () => {
    t = await startApp();
    g = await tenant(t);
  });
  afterAll(async () => { await t.close(); });

  test('the API sends no CORS headers, so a browser page on another origin cannot use a key', async () => {
    const r = await client(t, g.key).get('/v1/artworks', { origin: 'https://evil.example' });
    expect(r.status).toBe(200);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    const preflight = await t.app.inject({ method: 'OPTIONS', url: '/v1/artworks', headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    // No OPTIONS route: a preflight is a method the path does not have (405 with Allow, no CORS grant).
    expect(preflight.statusCode).toBe(405);
    expect(preflight.headers.allow).toBe('GET, HEAD, POST');
  });

  test('public feeds and the OpenAPI document may be read from any origin', async () => {
    const feed = await client(t).get(`/profiles/${g.slug}/events.ics`, { origin: 'https://calendar.example' });
    expect(feed.status).toBe(200);
    expect(feed.headers['access-control-allow-origin']).toBe('*');
    const doc = await client(t).get('/v1/openapi.json', { origin: 'https://tools.example' });
    expect(doc.headers['access-control-allow-origin']).toBe('*');
  });
});
