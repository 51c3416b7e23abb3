import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openImageStore } from '../../src/images/store/index.js';
import type { FreshDatabase } from '../helpers.js';
import { startS3, type LocalS3 } from '../support/s3.js';
import { databaseWithKey, spawnServe, type ServeProcess } from '../support/serve.js';

/** The real server processes on one database: the image queue across crashes and processes. */

// Server processes start and convert slowly on the shared machines tests run on.
vi.setConfig({ testTimeout: 180_000 });

let origin: Server;
let base: string;
const hits = new Map<string, number>();
const held: ServerResponse[] = [];
let holdSlow = true;
const images = new Map<string, Buffer>();
let database: FreshDatabase;
let key: string;
let s3: LocalS3;
let folder: string;
const servers: ServeProcess[] = [];

beforeAll(async () => {
  for (let i = 0; i < 13; i++) {
    const image = await sharp({ create: { width: 800, height: 600, channels: 3, background: { r: i * 19, g: 255 - i * 19, b: 128 } } }).jpeg().toBuffer();
    images.set(`/work-${i}.jpg`, image);
  }
  origin = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === '/slow.jpg' && holdSlow) {
      held.push(response);
      return;
    }
    const bytes = images.get(path === '/slow.jpg' ? '/work-12.jpg' : path);
    if (!bytes) return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'image/jpeg' }).end(bytes);
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  ({ database, key } = await databaseWithKey());
  s3 = await startS3();
  folder = mkdtempSync(join(tmpdir(), 'art-catalog-images-'));
});

afterAll(async () => {
  for (const server of servers) server.child.kill('SIGKILL');
  for (const response of held) response.destroy();
  origin?.closeAllConnections();
  await new Promise((resolve) => origin?.close(resolve));
  await s3?.close();
  await database?.drop();
  rmSync(folder, { recursive: true, force: true });
});

function serve(env: Record<string, string>): ServeProcess {
  const server = spawnServe({
    DATABASE_URL: database.url, IMAGE_FETCH_ALLOW_PRIVATE: 'true', IMAGE_JOB_LEASE_S: '2', RATE_LIMIT_PARTNER: '1000000', REDIS_URL: '', ...env,
  });
  servers.push(server);
  // A server killed before it listened has no URL; a test that needs one fails on its own.
  server.url.catch(() => undefined);
  return server;
}

async function call(server: ServeProcess, method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${await server.url}${path}`, {
    method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return response.json();
}

async function until<T>(check: () => Promise<T | undefined>, what: string, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a server killed (kill -9) while it fetches an image leaves the job to the next process, which finishes it', async () => {
  const first = serve({ IMAGE_STORE: `file:${folder}` });
  const posted = await call(first, 'POST', '/v1/artworks', { title: 'Interrupted Study', image_url: `${base}/slow.jpg` });
  await until(async () => (hits.get('/slow.jpg') ? true : undefined), 'the first fetch');
  first.child.kill('SIGKILL');
  await first.exited;
  holdSlow = false;
  const second = serve({ IMAGE_STORE: `file:${folder}` });
  const image = await until(async () => {
    const artwork = await call(second, 'GET', `/v1/artworks/${posted.id}`);
    return artwork.image.status === 'pending' ? undefined : artwork.image;
  }, 'the image after the restart');
  expect(image).toMatchObject({ status: 'ready', width: 800, height: 600, error: null });
  expect(hits.get('/slow.jpg')).toBe(2);
  await second.stop();
});

test('two processes on one database and one S3 bucket process each image once', async () => {
  // A lease long enough that a renewal delayed by a busy machine cannot hand a running job to the other
  // process: this test is about claims, not about reclaiming a dead process's jobs (the test above).
  const env = { ...s3.env('shared'), IMAGE_JOB_LEASE_S: '60' };
  const [a, b] = [serve(env), serve(env)];
  const items = Array.from({ length: 12 }, (_, i) => ({ title: `Shared Work ${i}`, image_url: `${base}/work-${i}.jpg` }));
  const batch = await call(a, 'POST', '/v1/artworks/batch', { items });
  const ids: number[] = batch.results.map((result: { id: number }) => result.id);
  expect(ids).toHaveLength(12);
  // Waits for these 12 records themselves: the sync status counts every record of the entity, the
  // first test's artwork too, so "12 ready" came while the last image still stored its files (69 of 72).
  await until(async () => {
    const listed = await call(b, 'GET', '/v1/artworks?image_status=ready&limit=100');
    const ready = listed.artworks.filter((artwork: { id: number }) => ids.includes(artwork.id));
    return ready.length === 12 ? true : undefined;
  }, 'every image ready', 150_000);
  for (let i = 0; i < 12; i++) expect(hits.get(`/work-${i}.jpg`), `work-${i}`).toBe(1);
  const store = openImageStore(loadConfig(s3.env('shared')));
  const names: string[] = [];
  for await (const name of store.list()) names.push(name);
  await store.close();
  // 800 px originals: widths 480 and 800, three formats each.
  expect(names).toHaveLength(12 * 2 * 3);
  await Promise.all([a.stop(), b.stop()]);
});
