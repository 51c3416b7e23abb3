import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { FetchFailed, fetchImage } from '../../src/images/fetch.js';

/** Issue 34, item 5: a fetch's socket is closed when the fetch ends, whatever the source keeps sending. */

let server: Server;
let base: string;
const sockets = new Set<Socket>();
const closed = new Set<Socket>();

beforeAll(async () => {
  // Every path answers, then trickles a body that never ends: a status line, then a byte every 20 ms.
  server = createServer((request, response) => {
    const status = Number(request.url!.slice(1, 4));
    response.writeHead(status, status === 302 ? { location: '/500' } : { 'content-type': 'text/plain' });
    const timer = setInterval(() => response.write('x'), 20);
    response.on('close', () => clearInterval(timer));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => closed.add(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

const options = { maxBytes: 1_000_000, timeoutMs: 30_000, allowAddress: () => true };

test('an error answer that trickles an endless body ends the fetch with its status and closes the socket at once', async () => {
  const before = sockets.size;
  await expect(fetchImage(`${base}/500`, options)).rejects.toThrow(new FetchFailed('HTTP 500'));
  expect(sockets.size).toBe(before + 1);
  const socket = [...sockets].at(-1)!;
  expect(await until(() => closed.has(socket), 1000)).toBe(true);
});

test('a redirect whose body never ends is followed on a new connection, and its own socket is closed', async () => {
  const before = sockets.size;
  await expect(fetchImage(`${base}/302`, options)).rejects.toThrow(new FetchFailed('HTTP 500'));
  const mine = [...sockets].slice(before);
  expect(mine).toHaveLength(2);
  expect(await until(() => mine.every((socket) => closed.has(socket)), 1000)).toBe(true);
});
