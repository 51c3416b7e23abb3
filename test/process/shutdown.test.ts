import { Agent, request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { FreshDatabase } from '../helpers.js';
import { openRaw, parseResponses } from '../support/raw-http.js';
import { databaseWithKey, spawnServe, type ServeProcess } from '../support/serve.js';

/** Whether a new TCP connection to `port` is refused (the server no longer listens). */
const refused = (port: number) => new Promise<boolean>((resolve) => {
  const socket = connect(port, '127.0.0.1');
  socket.once('connect', () => { socket.destroy(); resolve(false); });
  socket.once('error', () => resolve(true));
});

const ARTWORK = JSON.stringify({ title: 'Sent While Stopping' });

// Runs on both dialects (and with Redis in the PostgreSQL pass): closing the pools is part of stopping.
describe('serve stops gracefully on SIGTERM', () => {
  let database: FreshDatabase;
  let key: string;
  let serve: ServeProcess | undefined;
  beforeEach(async () => {
    ({ database, key } = await databaseWithKey());
  });
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
    await database.drop();
  });

  test('a request in flight is answered with Connection: close, one arriving meanwhile gets 503, idle keep-alive sockets are closed, and the process exits 0', async () => {
    serve = spawnServe({ DATABASE_URL: database.url });
    const port = Number(new URL(await serve.url).port);

    // An idle keep-alive socket, as a client pool leaves it between requests.
    const agent = new Agent({ keepAlive: true });
    const { idleClosed } = await new Promise<{ idleClosed: Promise<void> }>((resolve, reject) => {
      request({ port, path: '/healthz', agent }, (res: IncomingMessage) => {
        const closed = new Promise<void>((done) => res.socket.once('close', () => done()));
        res.resume();
        res.once('end', () => resolve({ idleClosed: closed }));
      }).once('error', reject).end();
    });

    // In flight: the headers are in, the server has said 100 Continue, the body has not arrived yet.
    const inFlight = await openRaw(port);
    await inFlight.write(`POST /v1/artworks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${ARTWORK.length}\r\nExpect: 100-continue\r\n\r\n`);
    await inFlight.waitFor(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    // Arriving meanwhile: a connection whose request has begun but whose headers are not complete (a
    // load balancer's health check, say). The server must have read that much before the signal.
    const meanwhile = await openRaw(port);
    await meanwhile.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
    await meanwhile.readByServer();

    serve.child.kill('SIGTERM');
    await expect.poll(() => refused(port), { timeout: 5000, interval: 20 }).toBe(true);
    await idleClosed;

    await meanwhile.write('\r\n');
    await meanwhile.waitFor(/\r\n\r\n\{.*\}$/s);
    const [unavailable] = parseResponses(meanwhile.received());
    expect(unavailable!.status).toBe(503);
    expect(unavailable!.headers.connection).toBe('close');
    expect(unavailable!.headers['retry-after']).toBe('1');
    expect(JSON.parse(unavailable!.body)).toEqual({ error: 'service_unavailable', message: expect.any(String), retry_after: 1 });
    expect((await meanwhile.closed).error).toBeNull();

    await inFlight.write(ARTWORK);
    await inFlight.closed;
    const [created] = parseResponses(inFlight.received().replace(/^HTTP\/1\.1 100 Continue\r\n\r\n/, ''));
    expect(created).toMatchObject({ status: 201, headers: { connection: 'close' } });

    expect(await serve.exited).toBe(0);
    agent.destroy();
  });

  test('a keep-alive client\'s batch in flight during SIGTERM is answered 200 with Connection: close and written; the process exits 0', async () => {
    serve = spawnServe({ DATABASE_URL: database.url });
    const port = Number(new URL(await serve.url).port);
    const agent = new Agent({ keepAlive: true });
    const body = JSON.stringify({ items: Array.from({ length: 100 }, (_, i) => ({ title: `Batch Work ${i}` })) });
    const answer = await new Promise<{ status: number; connection: string | undefined; text: string }>((resolve, reject) => {
      const req = request({
        port, path: '/v1/artworks/batch', method: 'POST', agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk; });
        res.once('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, text }));
      });
      req.once('error', reject);
      // The server has begun the request: stop it now, then send the body.
      req.once('continue', () => {
        serve!.child.kill('SIGTERM');
        void expect.poll(() => refused(port), { timeout: 5000, interval: 20 }).toBe(true).then(() => req.end(body), reject);
      });
      req.flushHeaders();
    });
    expect(answer.status).toBe(200);
    expect(answer.connection).toBe('close');
    const { results } = JSON.parse(answer.text) as { results: Array<{ status: number }> };
    expect(results.filter((r) => r.status === 201)).toHaveLength(100);
    expect(await serve.exited).toBe(0);
    agent.destroy();
  });

  test('a request that does not finish within SHUTDOWN_TIMEOUT_MS makes the process exit 1 with a log line', async () => {
    serve = spawnServe({ DATABASE_URL: database.url, SHUTDOWN_TIMEOUT_MS: '300', LOG_LEVEL: 'error' });
    const port = Number(new URL(await serve.url).port);
    let out = '';
    serve.child.stdout!.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    const stuck = await openRaw(port);
    await stuck.write(`POST /v1/artworks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`);
    await stuck.waitFor(/100 Continue/);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(1);
    expect(out).toMatch(/"level":50.*shutdown deadline passed/);
    stuck.destroy();
  });
});
