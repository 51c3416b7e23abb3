import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';

/** A photo a gallery's host serves: its path's name, width, height and one colour. */
export type Photo = [name: string, width: number, height: number, background: { r: number; g: number; b: number }];

/**
 * A gallery's image host serving `photos` as JPEGs (404 for any other path), on `host`: its own
 * address (127.0.0.2 in the browser files), so any request a page makes to it is told apart.
 */
export async function photoOrigin(photos: readonly Photo[], host = '127.0.0.1'): Promise<ImageOrigin> {
  const files = new Map<string, Buffer>();
  for (const [name, width, height, background] of photos) {
    files.set(`/${name}`, await sharp({ create: { width, height, channels: 3, background } }).jpeg({ quality: 85 }).toBuffer());
  }
  const server = createServer((request, response) => {
    const bytes = files.get(request.url ?? '');
    if (!bytes) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'image/jpeg' }).end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    base: `http://${host}:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * A gallery's image host for tests of the image queue's limits: `/fast.jpg` is `photo` at once; any
 * other path announces `photo`'s length and then sends one byte every `dripMs`, so its image never
 * arrives within a job's time.
 */
export interface ImageOrigin {
  /** `http://HOST:PORT`. */
  base: string;
  close(): Promise<void>;
}

export async function tricklingImageOrigin(photo: Buffer, dripMs: number): Promise<ImageOrigin> {
  const drips = new Set<NodeJS.Timeout>();
  const server = createServer((request, response) => {
    if (request.url === '/fast.jpg') return response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length }).end(photo);
    response.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': photo.length });
    let sent = 0;
    const drip = setInterval(() => { if (sent < photo.length && !response.destroyed) response.write(photo.subarray(sent, ++sent)); }, dripMs);
    drips.add(drip);
    response.on('close', () => { clearInterval(drip); drips.delete(drip); });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const drip of drips) clearInterval(drip);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
