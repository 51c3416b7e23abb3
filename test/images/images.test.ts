import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { fetchImage, publicAddress } from '../../src/images/fetch.js';
import { nextAttempt, RETRY_DELAYS_MS } from '../../src/images/worker.js';
import { sweepImages } from '../../src/images/sweep.js';
import { publicEntity } from '../../src/store/public.js';
import { client, startApp, tenant, type TestApp, type Tenant } from '../helpers.js';
import { BIN } from '../support/serve.js';

const run = promisify(execFile);

// Converting a 2000 px photo takes a second on a free core, many on the shared machines tests run on.
vi.setConfig({ testTimeout: 120_000 });

/** A gallery's server, inside the test: images made with sharp, and every way a fetch can fail. */
class Origin {
  server!: Server;
  base = '';
  hits = new Map<string, number>();
  routes = new Map<string, (request: IncomingMessage, response: ServerResponse) => void>();

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      const path = request.url ?? '/';
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const route = this.routes.get(path);
      if (route) route(request, response);
      else response.writeHead(404).end('not here');
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  serve(path: string, bytes: Buffer, type = 'image/jpeg'): string {
    this.routes.set(path, (_request, response) => response.writeHead(200, { 'content-type': type, 'content-length': bytes.length }).end(bytes));
    return this.base + path;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const jpeg = (width: number, height: number, color: { r: number; g: number; b: number }) =>
  sharp({ create: { width, height, channels: 3, background: color } }).jpeg({ quality: 90 }).toBuffer();

let origin: Origin;
let photo: Buffer;
let storeDir: string;
let t: TestApp;
let gallery: Tenant;
// The worker's clock runs ahead of the real one by `shift`: the retry test moves it.
let shift = 0;

beforeAll(async () => {
  origin = await new Origin().start();
  photo = await jpeg(2000, 1500, { r: 180, g: 40, b: 60 });
  storeDir = mkdtempSync(join(tmpdir(), 'art-catalog-images-'));
  t = await startApp({
    IMAGE_STORE: `file:${storeDir}`, IMAGE_FETCH_ALLOW_PRIVATE: 'true', IMAGE_MAX_MB: '1', IMAGE_FETCH_TIMEOUT_S: '1',
    PUBLIC_BASE_URL: 'https://art.example', RATE_LIMIT_SUBSCRIBER: '1000000',
  }, undefined, { imageWorker: { pollMs: 20, now: () => Date.now() + shift } });
  gallery = await tenant(t);
});

afterAll(async () => {
  await t?.close();
  await origin?.close();
  rmSync(storeDir, { recursive: true, force: true });
});

async function storedNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const name of t.app.imageStore.list()) names.push(name);
  return names;
}

async function storedBytes(name: string): Promise<Buffer> {
  const stored = await t.app.imageStore.get(name);
  const chunks: Buffer[] = [];
  for await (const chunk of stored!.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The artwork once its image has left `pending`. */
async function settled(api: ReturnType<typeof client>, path: string, from = 'pending') {
  const deadline = Date.now() + 90_000;
  for (;;) {
    const answer = await api.get(path);
    if (answer.body.image?.status !== from || Date.now() > deadline) return answer.body;
    t.app.jobs.nudge('image');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function postArtwork(title: string, image_url: string) {
  const api = client(t, gallery.key);
  const posted = await api.post('/v1/artworks', { title, image_url });
  expect(posted.status).toBe(201);
  return { api, id: posted.body.id as number, path: `/v1/artworks/${posted.body.id}` };
}

describe('a fetched image', () => {
  test('is pending right after the write, then ready with our derivatives in every format and the original left as sent', async () => {
    const url = origin.serve('/photo.jpg', photo);
    const { api, path } = await postArtwork('Red Study', url);
    expect((await api.get(path)).body.image).toMatchObject({ status: 'pending', src: null, error: null });
    const artwork = await settled(api, path);
    expect(artwork.image_url).toBe(url);
    const image = artwork.image;
    expect(image).toMatchObject({ status: 'ready', width: 2000, height: 1500, error: null });
    expect(image.src).toMatch(/^https:\/\/art\.example\/images\/[0-9a-f]{64}-960\.jpg$/);
    for (const format of ['avif', 'webp', 'jpeg'] as const) {
      const ext = format === 'jpeg' ? 'jpg' : format;
      expect(image.srcset[format]).toMatch(new RegExp(`-480\\.${ext} 480w, .*-960\\.${ext} 960w, .*-1600\\.${ext} 1600w$`));
    }
    expect(Math.abs(Date.parse(image.checked_at) - Date.now())).toBeLessThan(10_000);
    expect(await storedNames()).toHaveLength(9);
    const stored = await sharp(await storedBytes(image.src.split('/').at(-1))).metadata();
    expect(stored).toMatchObject({ width: 960, height: 720, format: 'jpeg' });
    expect(stored.exif).toBeUndefined();
  });

  test('shows in lists, which filter by image_status, and in the sync status counts', async () => {
    const { api, path } = await postArtwork('Never There', `${origin.base}/gone.jpg`);
    await settled(api, path);
    const ready = await api.get('/v1/artworks?image_status=ready');
    expect(ready.body.artworks.map((a: { title: string }) => a.title)).toEqual(['Red Study']);
    expect(ready.body.total).toBe(1);
    expect(ready.body.artworks[0].image.status).toBe('ready');
    const failing = await api.get('/v1/artworks?image_status=failed');
    expect(failing.body.artworks.map((a: { title: string; image: { error: string } }) => [a.title, a.image.error])).toEqual([['Never There', 'HTTP 404']]);
    expect((await api.get('/v1/artworks?image_status=broken')).status).toBe(400);
    const status = await api.get('/v1/sync/status');
    expect(status.body.images).toEqual({ pending: 0, ready: 1, failed: 1 });
  });

  test('of identical bytes under another URL is stored once: the second record shows the same copies', async () => {
    const before = (await storedNames()).length;
    const { api, path } = await postArtwork('Red Study, second print', origin.serve('/copy-of-photo.jpg', photo));
    const artwork = await settled(api, path);
    expect(artwork.image.status).toBe('ready');
    const first = (await api.get('/v1/artworks?image_status=ready')).body.artworks[0];
    expect(artwork.image.srcset).toEqual(first.image.srcset);
    expect(await storedNames()).toHaveLength(before);
  });

  test('state change is no API write but changes the entity\'s data version (ETags, public pages)', async () => {
    const api = client(t, gallery.key);
    const changes = (await api.get('/v1/changelog')).body.total;
    const version = (await publicEntity(t.handle.db, gallery.slug))!.version;
    const { path } = await postArtwork('Blue Study', origin.serve('/blue.jpg', await jpeg(600, 800, { r: 20, g: 40, b: 200 })));
    const afterWrite = (await publicEntity(t.handle.db, gallery.slug))!.version;
    expect(afterWrite).not.toBe(version);
    const artwork = await settled(api, path);
    expect(artwork.image).toMatchObject({ status: 'ready', width: 600, height: 800 });
    // A 600 px original is never enlarged: 480 and 600, and src is the largest JPEG.
    expect(artwork.image.src).toMatch(/-600\.jpg$/);
    expect((await publicEntity(t.handle.db, gallery.slug))!.version).not.toBe(afterWrite);
    expect((await api.get('/v1/changelog')).body.total).toBe(changes + 1);
  });

  test('a PUT with another image_url fetches the new one; a PUT clearing it leaves image null', async () => {
    const { api, path } = await postArtwork('Changing Study', origin.serve('/before.jpg', await jpeg(640, 480, { r: 9, g: 9, b: 90 })));
    const first = (await settled(api, path)).image;
    const changed = await api.put(path, { image_url: origin.serve('/after.jpg', await jpeg(800, 400, { r: 90, g: 9, b: 9 })) });
    expect(changed.status).toBe(200);
    expect(changed.body.image).toMatchObject({ status: 'pending', src: null });
    const second = (await settled(api, path)).image;
    expect(second).toMatchObject({ status: 'ready', width: 800, height: 400 });
    expect(second.src).not.toBe(first.src);
    expect((await api.put(path, { image_url: null })).body.image).toBeNull();
  });

  test('of an event is fetched too, and null without image_url', async () => {
    const api = client(t, gallery.key);
    const posted = await api.post('/v1/events', { title: 'Opening Night', image_url: origin.serve('/event.jpg', await jpeg(1200, 800, { r: 90, g: 90, b: 20 })) });
    const event = await settled(api, `/v1/events/${posted.body.id}`);
    expect(event.image).toMatchObject({ status: 'ready', width: 1200, height: 800 });
    const plain = await api.post('/v1/events', { title: 'No Picture Talk' });
    expect((await api.get(`/v1/events/${plain.body.id}`)).body.image).toBeNull();
    const list = await api.get('/v1/events?image_status=ready');
    expect(list.body.events.map((e: { title: string }) => e.title)).toEqual(['Opening Night']);
  });
});

describe('a fetch that fails', () => {
  const failures: Array<[string, (path: string) => void, string]> = [
    ['HTTP 404', () => undefined, 'HTTP 404'],
    ['not an image', (path) => origin.serve(path, Buffer.from('<html>hello</html>'), 'text/html'), 'not an image'],
    ['too large (streamed, no Content-Length)', (path) => origin.routes.set(path, (_q, response) => {
      response.writeHead(200, { 'content-type': 'image/jpeg' });
      const chunk = Buffer.alloc(64 * 1024, 1);
      let sent = 0;
      const write = () => {
        while (sent < 3 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return response.once('drain', write);
        }
        response.end();
      };
      write();
    }), 'too large: 2 MB'],
    ['timed out', (path) => origin.routes.set(path, () => undefined), 'timed out'],
    ['too many redirects', (path) => {
      for (let i = 0; i < 4; i++) origin.routes.set(`${path}${i}`, (_q, r) => r.writeHead(302, { location: `${path}${i + 1}` }).end());
      origin.routes.set(path, (_q, r) => r.writeHead(301, { location: `${path}0` }).end());
    }, 'too many redirects'],
  ];

  test.each(failures)('%s: the record shows the one-line error, and a retry is scheduled', async (name, setUp, line) => {
    const path = `/fail-${name.replace(/\W+/g, '-')}`;
    setUp(path);
    const { api, path: record } = await postArtwork(`Broken ${name}`, origin.base + path);
    const artwork = await settled(api, record);
    expect(artwork.image).toMatchObject({ status: 'failed', error: line, src: null, srcset: null });
  });

  test('three redirects are followed, each one checked', async () => {
    const target = origin.serve('/after-redirects.jpg', photo);
    origin.routes.set('/r1', (_q, r) => r.writeHead(302, { location: '/r2' }).end());
    origin.routes.set('/r2', (_q, r) => r.writeHead(307, { location: `${origin.base}/r3` }).end());
    origin.routes.set('/r3', (_q, r) => r.writeHead(308, { location: target }).end());
    const fetched = await fetchImage(`${origin.base}/r1`, { maxBytes: 1e7, timeoutMs: 5000, allowAddress: () => true });
    expect(fetched.bytes.equals(photo)).toBe(true);
    // Hashed while streaming: the same SHA-256 as the whole original's.
    expect(fetched.hash).toBe(createHash('sha256').update(photo).digest('hex'));
  });
});

describe('the fetcher', () => {
  test('never connects to a loopback, private, link-local or otherwise non-public address', async () => {
    const url = origin.serve('/private.jpg', photo);
    await expect(fetchImage(url, { maxBytes: 1e7, timeoutMs: 5000 })).rejects.toThrow('address not allowed');
    // A name is checked on the address it resolves to (localhost: 127.0.0.1 or ::1).
    await expect(fetchImage(url.replace('127.0.0.1', 'localhost'), { maxBytes: 1e7, timeoutMs: 5000 })).rejects.toThrow('address not allowed');
    await expect(fetchImage('http://[::ffff:127.0.0.1]/x.jpg', { maxBytes: 1e7, timeoutMs: 5000 })).rejects.toThrow('address not allowed');
    await expect(fetchImage('ftp://example.org/x.jpg', { maxBytes: 1e7, timeoutMs: 5000 })).rejects.toThrow('not http or https');
  });

  test('checks the address a redirect leads to, like the first', async () => {
    const onlyOrigin = (address: string) => address === '127.0.0.1';
    origin.serve('/fine.jpg', photo);
    origin.routes.set('/to-private', (_q, r) => r.writeHead(302, { location: `http://127.0.0.2:${new URL(origin.base).port}/fine.jpg` }).end());
    expect((await fetchImage(`${origin.base}/fine.jpg`, { maxBytes: 1e7, timeoutMs: 5000, allowAddress: onlyOrigin })).bytes.length).toBe(photo.length);
    await expect(fetchImage(`${origin.base}/to-private`, { maxBytes: 1e7, timeoutMs: 5000, allowAddress: onlyOrigin })).rejects.toThrow('address not allowed');
  });

  test('knows public addresses from every non-public range, IPv4, IPv6 and IPv4-mapped IPv6', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(publicAddress(address), address).toBe(true);
    for (const address of [
      '127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '240.0.0.1',
      '255.255.255.255', '198.18.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd00::1', 'ff02::1', '2001:db8::1', '::ffff:127.0.0.1',
      '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1',
    ]) expect(publicAddress(address), address).toBe(false);
  });
});

describe('the queue', () => {
  test('retries after 1 min, 10 min, 1 h, 6 h, then daily for 7 days, then leaves the image failed', () => {
    const minutes = RETRY_DELAYS_MS.map((ms) => ms / 60_000);
    expect(minutes).toEqual([1, 10, 60, 360, 1440, 1440, 1440, 1440, 1440, 1440, 1440]);
    expect(nextAttempt(1, 0)).toBe(60_000);
    expect(nextAttempt(11, 0)).toBe(7 * 1440 * 60_000 - 6 * 1440 * 60_000);
    expect(nextAttempt(12, 0)).toBeNull();
  });

  test('tries a failed image again when its retry is due, not before', async () => {
    let broken = true;
    origin.routes.set('/flaky.jpg', (_q, response) => {
      if (broken) response.writeHead(503).end();
      else response.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
    });
    const { api, path } = await postArtwork('Flaky Study', `${origin.base}/flaky.jpg`);
    expect((await settled(api, path)).image).toMatchObject({ status: 'failed', error: 'HTTP 503' });
    broken = false;
    shift += 59_000;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(origin.hits.get('/flaky.jpg')).toBe(1);
    shift += 1_000;
    const artwork = await settled(api, path, 'failed');
    expect(artwork.image).toMatchObject({ status: 'ready', error: null });
    expect(origin.hits.get('/flaky.jpg')).toBe(2);
  });
});

test('without IMAGE_FETCH_ALLOW_PRIVATE an image on a private address fails with "address not allowed"', async () => {
  const strict = await startApp({ IMAGE_STORE: `file:${storeDir}`, RATE_LIMIT_SUBSCRIBER: '1000000' }, undefined, { imageWorker: { pollMs: 20 } });
  try {
    const entity = await tenant(strict);
    const api = client(strict, entity.key);
    const posted = await api.post('/v1/artworks', { title: 'Inside Job', image_url: origin.serve('/inside.jpg', photo) });
    const deadline = Date.now() + 10_000;
    let image;
    do image = (await api.get(`/v1/artworks/${posted.body.id}`)).body.image;
    while (image.status === 'pending' && Date.now() < deadline && await new Promise((resolve) => setTimeout(resolve, 25, true)));
    expect(image).toMatchObject({ status: 'failed', error: 'address not allowed' });
  } finally {
    await strict.close();
  }
});

describe('the operator', () => {
  const cli = async (...args: string[]) => JSON.parse((await run(BIN, ['images', ...args, '--json'], {
    env: { ...process.env, DATABASE_URL: t.config.databaseUrl, IMAGE_STORE: `file:${storeDir}`, LOG_LEVEL: 'silent' },
  })).stdout);

  test('images status counts records by state and names each failed image with its error and records', async () => {
    const report = await cli('status', '--entity', String(gallery.entityId));
    expect(report.counts.ready).toBeGreaterThan(0);
    const gone = report.failed.find((f: { url: string }) => f.url === `${origin.base}/gone.jpg`);
    expect(gone).toMatchObject({ error: 'HTTP 404', records: [{ kind: 'artwork', entity_id: gallery.entityId }] });
    expect(Date.parse(gone.next_try)).toBeGreaterThan(Date.now());
    const everyone = await cli('status');
    expect(everyone.counts.failed).toBeGreaterThanOrEqual(report.counts.failed);
  });

  test('images retry --failed fetches failed images again now', async () => {
    const before = origin.hits.get('/gone.jpg') ?? 0;
    const { queued } = await cli('retry', '--entity', String(gallery.entityId), '--failed');
    expect(queued).toBeGreaterThan(0);
    const deadline = Date.now() + 10_000;
    while ((origin.hits.get('/gone.jpg') ?? 0) === before && Date.now() < deadline) {
      t.app.jobs.nudge('image');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(origin.hits.get('/gone.jpg')).toBe(before + 1);
  });

  test('a deleted record keeps its image in the trash; removed for good, the sweep removes the copies no record uses any more', async () => {
    const { api, id, path } = await postArtwork('Short-lived Study', origin.serve('/short-lived.jpg', await jpeg(700, 500, { r: 1, g: 200, b: 9 })));
    const hash = (await settled(api, path)).image.src.split('/').at(-1).slice(0, 64);
    const keep = (await api.get('/v1/artworks?image_status=ready')).body.artworks.map((a: { image: { src: string } }) => a.image.src.split('/').at(-1)!.slice(0, 64));
    expect((await storedNames()).filter((name) => name.startsWith(hash))).toHaveLength(6);
    expect((await api.delete(`/v1/artworks/${id}`)).status).toBe(200);
    // In the trash it keeps its image (docs/api.md, Trash): a restore shows it ready, and no sweep takes it.
    await sweepImages(t.handle.db, t.app.imageStore, Date.now() + 2 * 3600_000);
    expect((await storedNames()).filter((name) => name.startsWith(hash))).toHaveLength(6);
    expect((await api.post(`/v1/artworks/${id}/restore`, {})).body.image.status).toBe('ready');
    expect((await api.delete(`/v1/artworks/${id}`)).status).toBe(200);
    expect((await api.delete(`/v1/trash/artworks/${id}`)).status).toBe(204);
    // Within the grace hour nothing goes: a job may be storing an original's files right now.
    await sweepImages(t.handle.db, t.app.imageStore, Date.now());
    expect((await storedNames()).filter((name) => name.startsWith(hash))).toHaveLength(6);
    const report = await sweepImages(t.handle.db, t.app.imageStore, Date.now() + 2 * 3600_000);
    // This one's original, and those the PUT test let go.
    expect(report.originals).toBeGreaterThanOrEqual(1);
    expect(report.deleted).toBe(report.originals * 6);
    const names = await storedNames();
    expect(names.filter((name) => name.startsWith(hash))).toHaveLength(0);
    for (const used of keep.filter((h: string) => h !== hash)) expect(names.some((name) => name.startsWith(used)), used).toBe(true);
  });
});
