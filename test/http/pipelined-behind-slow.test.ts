import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { buildApp } from '../../src/http/app.js';
import { migratedDatabase, type FreshDatabase } from '../helpers.js';
import { openRaw, parseResponses, type RawConnection } from '../support/raw-http.js';

/**
 * The send timeout is for answers a client does not read (docs/performance.md, Pipelined requests
 * behind a watched answer). With HTTP/1.1 pipelining, Node holds an answer that is ready while an
 * earlier request on its connection is still being answered: that answer waits for its turn, it is not
 * on the socket, and the client cannot be slow to read what was not sent. These tests hold one request
 * on the server (a route of their own, added before the app is ready) and pipeline others behind it.
 */
const SEND_TIMEOUT_MS = 400;
/** An answer of 1 MiB, read whole by a client that reads. */
const BIG = 'x'.repeat(1024 * 1024);

let database: FreshDatabase;
let handle: DatabaseHandle;
let app: FastifyInstance;
let port: number;
let release: () => void = () => undefined;
let held = Promise.resolve();
const opened: RawConnection[] = [];

beforeAll(async () => {
  database = await migratedDatabase();
  const config = loadConfig({
    DATABASE_URL: database.url, LOG_LEVEL: 'silent', REDIS_URL: process.env.REDIS_URL ?? '', REDIS_KEY_PREFIX: `test:${randomUUID()}:`,
    SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
  });
  handle = connect(config.databaseUrl);
  app = await buildApp({ config, database: handle, imageWorker: false, logger: false });
  // Answered once the test lets it: the server's own slowness (a long query, a busy pool).
  app.get('/test/slow', async () => {
    await held;
    return { slow: true };
  });
  app.get('/test/big', async (_request, reply) => reply.type('text/plain').send(BIG));
  // Its first part at once, the rest once the test lets it: a streamed page whose next slice is late.
  app.get('/test/parts', async (_request, reply) => reply.type('text/plain').send(Readable.from((async function* parts() {
    yield 'first part;';
    await held;
    yield 'last part';
  })())));
  await app.ready();
  port = Number(new URL(await app.listen({ port: 0, host: '127.0.0.1' })).port);
});

afterEach(() => {
  release();
  for (const connection of opened.splice(0)) connection.destroy();
});

afterAll(async () => {
  await app?.close();
  await handle?.close();
  await database?.drop();
});

/** Holds /test/slow until `release()`. */
function hold() {
  held = new Promise<void>((resolve) => { release = resolve; });
}

async function metric(name: string): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
}

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000) {
  for (const started = Date.now(); !(await condition());) {
    if (Date.now() - started > timeoutMs) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pipeline(paths: string[], options: { reading: boolean }): Promise<RawConnection> {
  const connection = await openRaw(port);
  opened.push(connection);
  if (!options.reading) connection.socket.pause();
  await connection.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`).join(''));
  return connection;
}

describe('answers queued behind a slow one on a pipelined connection', () => {
  test.each([
    ['first', ['/test/slow', '/test/big', '/healthz', '/test/big']],
    ['after a watched answer the client read', ['/healthz', '/test/slow', '/test/big', '/healthz']],
  ])('a client that reads is not dropped while the server takes longer than the send timeout to answer a request (the slow one %s); every answer arrives whole, in order', async (_case, paths) => {
    const dropped = await metric('art_catalog_http_send_timeouts_total');
    hold();
    const connection = await pipeline(paths, { reading: true });
    // The answers behind the slow one are ready and held by the process: they count against the ceiling.
    await until(async () => await metric('art_catalog_http_unsent_bytes') >= BIG.length);
    // Several send timeouts while the server works on the slow request and the client waits for it.
    await sleep(3 * SEND_TIMEOUT_MS);
    expect(connection.socket.destroyed).toBe(false);
    release();

    await connection.waitFor((received) => parseResponses(received).length === paths.length, 10_000);
    const answers = parseResponses(connection.received());
    expect(answers.map((answer) => answer.status)).toEqual(paths.map(() => 200));
    paths.forEach((path, i) => {
      if (path === '/test/big') expect(answers[i]!.body).toBe(BIG);
      if (path === '/test/slow') expect(JSON.parse(answers[i]!.body)).toEqual({ slow: true });
      if (path === '/healthz') expect(JSON.parse(answers[i]!.body)).toMatchObject({ status: 'ok' });
    });
    expect(await metric('art_catalog_http_send_timeouts_total')).toBe(dropped);
    await until(async () => await metric('art_catalog_http_unsent_bytes') === 0);
    // The connection is still open and answers the next request.
    await connection.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await connection.waitFor((received) => parseResponses(received).length === paths.length + 1);
    expect(connection.socket.destroyed).toBe(false);
  });

  test('a client that pipelines many requests behind a slow one and reads nothing is still dropped once the answers reach its socket, counted once; what they held is released', async () => {
    const dropped = await metric('art_catalog_http_send_timeouts_total');
    hold();
    // 40 MiB of answers: more than the system's socket buffers take.
    const stuck = await pipeline(['/test/slow', ...Array.from({ length: 40 }, () => '/test/big')], { reading: false });
    await until(async () => await metric('art_catalog_http_unsent_bytes') >= 20 * BIG.length);
    await sleep(3 * SEND_TIMEOUT_MS);
    expect(await metric('art_catalog_http_send_timeouts_total')).toBe(dropped);
    release();

    await until(async () => await metric('art_catalog_http_send_timeouts_total') > dropped);
    await until(async () => await metric('art_catalog_http_unsent_bytes') === 0);
    stuck.socket.resume();
    await stuck.closed;
    expect(stuck.received().length).toBeLessThan(40 * BIG.length);
    expect(await metric('art_catalog_http_send_timeouts_total')).toBe(dropped + 1);
  });
});

describe('the connection\'s current answer', () => {
  test('an answer the server writes in parts, with a pause longer than the send timeout between them, reaches a client that reads: nothing was queued on its socket meanwhile', async () => {
    const dropped = await metric('art_catalog_http_send_timeouts_total');
    hold();
    const connection = await pipeline(['/test/parts', '/healthz'], { reading: true });
    await connection.waitFor(/first part;/);
    await sleep(3 * SEND_TIMEOUT_MS);
    expect(connection.socket.destroyed).toBe(false);
    release();
    // Chunked: the first part, the last, the end of the body, then the answer pipelined behind it.
    await connection.waitFor(/first part;\r\n[0-9a-f]+\r\nlast part\r\n0\r\n\r\nHTTP\/1\.1 200[^]*"status":"ok"/);
    expect(connection.received()).toMatch(/^HTTP\/1\.1 200/);
    expect(await metric('art_catalog_http_send_timeouts_total')).toBe(dropped);
    expect(connection.socket.destroyed).toBe(false);
  });
});
