import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { photoJpeg } from '../../bench/photos.mjs';
import { deriveImage, type DerivedImage } from '../../src/images/derive.js';
import { startApp, type TestApp } from '../helpers.js';
import { startS3, type LocalS3 } from '../support/s3.js';

/** GET and HEAD /images/:name (docs/api.md, Images), served from the file store and from an S3 bucket. */

let s3: LocalS3;
let folder: string;
let derived: DerivedImage;
beforeAll(async () => {
  [s3, derived] = await Promise.all([startS3(), photoJpeg(11, { width: 1200, height: 800 }).then(deriveImage)]);
  folder = mkdtempSync(join(tmpdir(), 'art-catalog-route-'));
});
afterAll(async () => {
  await s3?.close();
  rmSync(folder, { recursive: true, force: true });
});

const stores = {
  file: () => ({ IMAGE_STORE: `file:${folder}/${Math.random().toString(36).slice(2)}` }),
  s3: () => s3.env(`route-${Math.random().toString(36).slice(2)}`),
};

describe.each(Object.entries(stores))('images from the %s store', (_kind, env) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ ...env(), PUBLIC_RATE_LIMIT: '100000' });
    for (const d of derived.derivatives) await t.app.imageStore.put(d.name, d.bytes, d.contentType);
  });
  afterAll(async () => { await t.close(); });

  const get = (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => t.app.inject({ method, url, headers });

  it('serves each derivative with its type, length, ETag and a year of immutable caching, uncompressed', async () => {
    for (const d of derived.derivatives) {
      const r = await get(`/images/${d.name}`, { 'accept-encoding': 'gzip, br' });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-type']).toBe(d.contentType);
      expect(r.headers['content-length']).toBe(String(d.bytes.length));
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(r.headers.etag).toBe(`"${d.name}"`);
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.rawPayload.equals(d.bytes)).toBe(true);
    }
  });

  it('answers 304 without a body to an If-None-Match naming the image, and 200 to another', async () => {
    const d = derived.derivatives[0]!;
    const fresh = await get(`/images/${d.name}`, { 'if-none-match': `"${d.name}"` });
    expect(fresh.statusCode).toBe(304);
    expect(fresh.body).toBe('');
    expect(fresh.headers.etag).toBe(`"${d.name}"`);
    expect(fresh.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const other = await get(`/images/${d.name}`, { 'if-none-match': `"${derived.derivatives[1]!.name}"` });
    expect(other.statusCode).toBe(200);
  });

  it('answers If-None-Match: * with 304 for an image that exists and 404 for one that does not', async () => {
    const d = derived.derivatives[2]!;
    expect((await get(`/images/${d.name}`, { 'if-none-match': '*' })).statusCode).toBe(304);
    const missing = await get(`/images/${'1'.repeat(64)}-960.webp`, { 'if-none-match': '*' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'not_found' });
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const d = derived.derivatives.find((each) => each.format === 'avif')!;
    const r = await get(`/images/${d.name}`, {}, 'HEAD');
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('image/avif');
    expect(r.headers['content-length']).toBe(String(d.bytes.length));
    expect(r.headers.etag).toBe(`"${d.name}"`);
    expect(r.body).toBe('');
  });

  it('reads no image bytes for HEAD or If-None-Match: * (on S3 a HeadObject, not a GET of the whole object)', async () => {
    const d = derived.derivatives.find((each) => each.format === 'jpeg')!;
    const reads = vi.spyOn(t.app.imageStore, 'get');
    try {
      const head = await get(`/images/${d.name}`, {}, 'HEAD');
      expect(head.statusCode).toBe(200);
      expect(head.headers['content-length']).toBe(String(d.bytes.length));
      expect(head.headers['content-type']).toBe('image/jpeg');
      expect((await get(`/images/${d.name}`, { 'if-none-match': '*' })).statusCode).toBe(304);
      expect((await get(`/images/${'2'.repeat(64)}-480.jpg`, {}, 'HEAD')).statusCode).toBe(404);
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('answers 404 in the error shape for unknown and malformed names, on GET and HEAD', async () => {
    const unknown = `${'0'.repeat(64)}-480.jpg`;
    for (const name of [unknown, `${derived.hash}-480.png`, `${derived.hash}-480.JPG`, 'x.jpg', '..%2F..%2Fetc%2Fpasswd', `${derived.hash}-0480.webp`]) {
      const r = await get(`/images/${name}`);
      expect(r.statusCode, name).toBe(404);
      expect(r.json()).toEqual({ error: 'not_found', message: 'Image not found.' });
      expect(r.headers.etag).toBeUndefined();
      expect((await get(`/images/${name}`, {}, 'HEAD')).statusCode).toBe(404);
    }
  });
});

describe('images over a real connection', () => {
  let t: TestApp;
  let base: string;
  let store: string;
  beforeAll(async () => {
    store = mkdtempSync(join(tmpdir(), 'art-catalog-route-'));
    // Each test its own client address (X-Forwarded-For, trusted here), so their counts do not mix.
    t = await startApp({ IMAGE_STORE: `file:${store}`, PUBLIC_RATE_LIMIT: '3', TRUST_PROXY: 'true' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t.close();
    rmSync(store, { recursive: true, force: true });
  });

  it('streams a large image in pieces with its length known up front', async () => {
    const name = `${'b'.repeat(64)}-1600.jpg`;
    const bytes = Buffer.alloc(8 * 1024 * 1024, 0x5a);
    await t.app.imageStore.put(name, bytes, 'image/jpeg');
    const { headers, chunks, body } = await new Promise<{ headers: Record<string, unknown>; chunks: number; body: Buffer }>((resolve, reject) => {
      httpRequest(`${base}/images/${name}`, { headers: { 'accept-encoding': 'gzip' } }, (response) => {
        const parts: Buffer[] = [];
        response.on('data', (chunk: Buffer) => parts.push(chunk));
        response.on('end', () => resolve({ headers: response.headers, chunks: parts.length, body: Buffer.concat(parts) }));
      }).on('error', reject).end();
    });
    expect(headers['content-length']).toBe(String(bytes.length));
    expect(headers['transfer-encoding']).toBeUndefined();
    expect(headers['content-encoding']).toBeUndefined();
    expect(chunks).toBeGreaterThan(1);
    expect(body.equals(bytes)).toBe(true);
  });

  it('limits images per client address, counted apart from the public pages', async () => {
    const name = `${'c'.repeat(64)}-480.webp`;
    await t.app.imageStore.put(name, Buffer.from('webp'), 'image/webp');
    const visitor = { 'x-forwarded-for': '203.0.113.7' };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await fetch(`${base}/images/${name}`, { headers: visitor })).status);
    const refused = await fetch(`${base}/images/${name}`, { headers: visitor });
    expect([...statuses, refused.status]).toEqual([200, 200, 200, 429]);
    expect(await refused.json()).toMatchObject({ error: 'rate_limited', retry_after: expect.any(Number) });
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await fetch(`${base}/robots.txt`, { headers: visitor })).status).toBe(200);
  });
});
