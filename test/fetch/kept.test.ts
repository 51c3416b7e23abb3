import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { FetchFailed, fetchUrl, KeptConnections, publicAddress, type KeptLimits } from '../../src/fetch/index.js';
import { until } from '../support/until.js';

/**
 * Connections kept between fetches to one origin (src/fetch/kept.ts), as webhook deliveries use them:
 * reused for the same origin only, bounded, closed when idle, and never a way around the address
 * policy or the time limit. (DNS rebinding against a kept pool: test/fetch/rebinding.test.ts.)
 */

interface Receiver {
  server: Server;
  base: string;
  /** Connections accepted, and those still open. */
  accepted: Socket[];
  open: Set<Socket>;
}

const receivers: Receiver[] = [];

/** A receiver answering `ok` after `?ms=`; `/never` never answers; `/reset` resets a connection it already answered on. */
async function startReceiver(): Promise<Receiver> {
  const accepted: Socket[] = [];
  const open = new Set<Socket>();
  const answeredOn = new WeakSet<Socket>();
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const socket = request.socket;
      if (request.url === '/never') return;
      if (request.url === '/reset' && answeredOn.has(socket)) return socket.destroy();
      answeredOn.add(socket);
      if (request.url === '/big') return response.writeHead(200).end('y'.repeat(100_000));
      const ms = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('ms') ?? 0);
      setTimeout(() => response.writeHead(200).end('ok'), ms);
    });
  });
  server.on('connection', (socket) => {
    accepted.push(socket);
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver = { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, accepted, open };
  receivers.push(receiver);
  return receiver;
}

let receiver: Receiver;
beforeAll(async () => { receiver = await startReceiver(); });
afterAll(async () => {
  for (const { server } of receivers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const LIMITS: KeptLimits = { perOrigin: 4, idleMs: 4_000, origins: 8 };
const allowAll = () => true;
const post = (connections: KeptConnections, url: string, timeoutMs = 5_000) =>
  fetchUrl({ url, method: 'POST', body: '{}', maxRedirects: 0, maxBytes: 65_536, overflow: 'truncate', readErrorBody: true, timeoutMs, connections });

test('messages to one origin one after another go over one connection; another origin of the same server gets its own', async () => {
  const pool = new KeptConnections(allowAll, LIMITS);
  const before = receiver.accepted.length;
  for (let i = 0; i < 3; i++) expect((await post(pool, `${receiver.base}/hook`)).body.toString()).toBe('ok');
  expect(receiver.accepted.length - before).toBe(1);
  // localhost is another origin than 127.0.0.1, though the same server: never the same connection.
  await post(pool, `${receiver.base.replace('127.0.0.1', 'localhost')}/hook`);
  expect(receiver.accepted.length - before).toBe(2);
  pool.close();
  expect(await until(() => receiver.accepted.slice(before).every((socket) => !receiver.open.has(socket)), 5_000)).toBe(true);
});

test('a name that resolves to a private address is refused by a pool under the public-only policy, before any connection', async () => {
  const pool = new KeptConnections(publicAddress, LIMITS);
  const before = receiver.accepted.length;
  await expect(post(pool, `${receiver.base.replace('127.0.0.1', 'localhost')}/hook`)).rejects.toThrow(new FetchFailed('address not allowed'));
  await expect(post(pool, `${receiver.base}/hook`)).rejects.toThrow(new FetchFailed('address not allowed'));
  expect(receiver.accepted.length).toBe(before);
});

test('a receiver that never answers times out on a kept connection, and that connection is closed, not kept', async () => {
  const pool = new KeptConnections(allowAll, LIMITS);
  const before = receiver.accepted.length;
  await post(pool, `${receiver.base}/hook`);
  const started = Date.now();
  await expect(post(pool, `${receiver.base}/never`, 300)).rejects.toThrow(new FetchFailed('timed out'));
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(receiver.accepted.length - before).toBe(1);
  expect(await until(() => !receiver.open.has(receiver.accepted[before]!), 2_000)).toBe(true);
  pool.close();
});

test('an answer slower than the idle time is waited for: the idle time closes only connections not in use', async () => {
  const pool = new KeptConnections(allowAll, { ...LIMITS, idleMs: 100 });
  await post(pool, `${receiver.base}/hook`);
  expect((await post(pool, `${receiver.base}/hook?ms=400`)).body.toString()).toBe('ok');
  pool.close();
});

test('a receiver that closed a kept connection, or resets it when it is reused, still gets the message, on a new connection', async () => {
  const pool = new KeptConnections(allowAll, LIMITS);
  const before = receiver.accepted.length;
  await post(pool, `${receiver.base}/hook`);
  receiver.server.closeIdleConnections();
  expect(await until(() => receiver.open.size === 0, 2_000)).toBe(true);
  expect((await post(pool, `${receiver.base}/hook`)).status).toBe(200);
  // The kept connection is reset as the next message arrives on it: sent again on a new one.
  expect((await post(pool, `${receiver.base}/reset`)).body.toString()).toBe('ok');
  expect(receiver.accepted.length - before).toBe(3);
  pool.close();
});

test('kept connections are bounded: per origin, by idle time, by origins; an answer cut at the byte limit leaves none', async () => {
  const pool = new KeptConnections(allowAll, { perOrigin: 2, idleMs: 300, origins: 2 });
  const before = receiver.accepted.length;
  // Ten at once open ten connections; two are kept when they end, for 300 ms.
  await Promise.all(Array.from({ length: 10 }, () => post(pool, `${receiver.base}/hook?ms=100`)));
  const mine = () => receiver.accepted.slice(before).filter((socket) => receiver.open.has(socket)).length;
  expect(await until(() => mine() === 2, 2_000)).toBe(true);
  expect(await until(() => mine() === 0, 3_000)).toBe(true);
  // A third origin retires the least recently used one's connections.
  const others = [await startReceiver(), await startReceiver()];
  await post(pool, `${receiver.base}/hook`);
  const first = receiver.accepted.at(-1)!;
  for (const other of others) await post(pool, `${other.base}/hook`);
  expect(await until(() => !receiver.open.has(first), 2_000)).toBe(true);
  expect(others.every((other) => other.open.size === 1)).toBe(true);
  // An answer cut at maxBytes was not read to its end: its connection is closed.
  const cut = await post(pool, `${others[0]!.base}/big`);
  expect(cut.truncated).toBe(true);
  expect(await until(() => others[0]!.open.size === 0, 2_000)).toBe(true);
  pool.close();
  expect(await until(() => others[1]!.open.size === 0, 2_000)).toBe(true);
});
