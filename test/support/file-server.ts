import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A gallery's web server for feed tests: serves files set by the test, with an ETag (the body's hash)
 * and 304 for a matching If-None-Match, redirects, and counts what it was asked; `delayMs` holds every
 * answer that long (a slow server).
 */
export interface FileServer {
  url(path: string): string;
  set(path: string, body: Buffer | string, type?: string): void;
  redirect(path: string, location: string): void;
  /** Requests per path, and the If-None-Match each one sent. */
  requests: { path: string; ifNoneMatch: string | undefined }[];
  close(): Promise<void>;
}

export async function fileServer({ delayMs = 0 }: { delayMs?: number } = {}): Promise<FileServer> {
  const files = new Map<string, { body: Buffer; type: string } | { location: string }>();
  const requests: FileServer['requests'] = [];
  const answer = (request: http.IncomingMessage, response: http.ServerResponse) => {
    const path = request.url ?? '/';
    const file = files.get(path);
    if (!file) return response.writeHead(404).end('not found');
    if ('location' in file) return response.writeHead(302, { location: file.location }).end();
    const etag = `"${createHash('sha256').update(file.body).digest('hex').slice(0, 16)}"`;
    if (request.headers['if-none-match'] === etag) return response.writeHead(304, { etag }).end();
    response.writeHead(200, { 'content-type': file.type, etag, 'content-length': file.body.length }).end(file.body);
  };
  const server = http.createServer((request, response) => {
    requests.push({ path: request.url ?? '/', ifNoneMatch: request.headers['if-none-match'] });
    if (delayMs > 0) setTimeout(() => answer(request, response), delayMs);
    else answer(request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    set: (path, body, type = 'text/csv') => files.set(path, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), type }),
    redirect: (path, location) => files.set(path, { location }),
    requests,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

export const csv = (...lines: string[]): string => `${lines.join('\r\n')}\r\n`;
