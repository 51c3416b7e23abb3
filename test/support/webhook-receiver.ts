import { createServer, request as httpRequest, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Post } from '../../src/webhooks/deliver.js';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers one request: a status and body, or never (the request hangs). */
export type Answer = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'never';

/**
 * A webhook receiver a test starts: it records every request and answers each as `answer` says
 * (by default 200 after `delayMs`).
 */
export async function startReceiver(answer: (received: Received, index: number) => Answer = () => ({ status: 200 })) {
  const received: Received[] = [];
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const got = { path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(got);
      const reply = answer(got, received.length - 1);
      if (reply === 'never') {
        hanging.add(response);
        return;
      }
      setTimeout(() => response.writeHead(reply.status, reply.headers ?? {}).end(reply.body ?? ''), reply.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A plain POST for tests of the delivery step alone: no redirect followed, a time limit, the answer
 * read to `maxBytes`. (The service's own deliveries go through its outgoing fetcher.)
 */
export const plainPost: Post = ({ url, headers, body, timeoutMs, maxBytes }) => new Promise((resolve, reject) => {
  const request = httpRequest(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, timeout: timeoutMs }, (response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      if (size < maxBytes) chunks.push(chunk.subarray(0, maxBytes - size));
      size += chunk.length;
      if (size >= maxBytes) response.destroy();
    });
    const done = () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) });
    response.on('end', done);
    response.on('close', done);
  });
  request.on('timeout', () => request.destroy(new Error('timed out')));
  request.on('error', (error) => reject(error));
  request.end(body);
});
