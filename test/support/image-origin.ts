import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A gallery's image host for tests of the image queue's limits: `/fast.jpg` is `photo` at once; any
 * other path announces `photo`'s length and then sends one byte every `dripMs`, so its image never
 * arrives within a job's time.
 */
export interface ImageOrigin {
  /** `http://127.0.0.1:PORT`. */
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
