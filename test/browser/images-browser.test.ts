import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser } from 'playwright-core';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { describeInBrowser, launchChromium } from '../support/browser.js';

const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output');
// Five photos are converted before the page is opened: slow on the shared machines tests run on.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** The gallery's server: its own address (127.0.0.2), so any request a page makes to it is told apart. */
const ORIGIN_HOST = '127.0.0.2';
const SHAPES: Array<[string, number, number, { r: number; g: number; b: number }]> = [
  ['wide.jpg', 2400, 1350, { r: 181, g: 82, b: 59 }], ['tall.jpg', 900, 1800, { r: 59, g: 111, b: 181 }],
  ['square.jpg', 1200, 1200, { r: 91, g: 140, b: 74 }], ['event.jpg', 3000, 2000, { r: 138, g: 109, b: 59 }],
];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describeInBrowser('a profile page with images in a real browser', () => {
  let origin: Server;
  let originBase: string;
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let gallery: Tenant;
  let storeDir: string;

  beforeAll(async () => {
    const files = new Map<string, Buffer>();
    for (const [name, width, height, background] of SHAPES) {
      files.set(`/${name}`, await sharp({ create: { width, height, channels: 3, background } }).jpeg({ quality: 85 }).toBuffer());
    }
    origin = createServer((request, response) => {
      const bytes = files.get(request.url ?? '');
      if (!bytes) return response.writeHead(404).end();
      response.writeHead(200, { 'content-type': 'image/jpeg' }).end(bytes);
    });
    await new Promise<void>((resolve) => origin.listen(0, ORIGIN_HOST, resolve));
    originBase = `http://${ORIGIN_HOST}:${(origin.address() as AddressInfo).port}`;
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    storeDir = mkdtempSync(join(tmpdir(), 'art-catalog-images-'));
    t = await startApp({
      PUBLIC_BASE_URL: base, IMAGE_STORE: `file:${storeDir}`, IMAGE_FETCH_ALLOW_PRIVATE: 'true', RATE_LIMIT_SUBSCRIBER: '100000', PUBLIC_RATE_LIMIT: '100000',
    }, undefined, { imageWorker: { pollMs: 20 } });
    await t.app.listen({ port, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Bilder' });
    const api = client(t, gallery.key);
    await api.post('/v1/artworks/batch', {
      items: [
        { title: 'Wide Harbour', artist_name: 'Anna Weit', creation_year: 2019, availability: 'available', price: 4200, currency: 'EUR', image_url: `${originBase}/wide.jpg` },
        { title: 'Tall Tower', artist_name: 'Tom Hoch', creation_year: 2021, image_url: `${originBase}/tall.jpg` },
        { title: 'Square Field', artist_name: 'Quadrat Kollektiv', creation_year: 2020, availability: 'sold', image_url: `${originBase}/square.jpg` },
        { title: 'Missing Picture', artist_name: 'Nobody', image_url: `${originBase}/missing.jpg` },
      ],
    });
    await api.post('/v1/events', { title: 'Summer Show', event_type: 'exhibition', start_date: '2099-06-01', end_date: '2099-08-31', image_url: `${originBase}/event.jpg` });
    const deadline = Date.now() + 150_000;
    for (;;) {
      const { images } = (await api.get('/v1/sync/status')).body;
      if (images.pending === 0 || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
    origin?.closeAllConnections();
    await new Promise((resolve) => origin?.close(resolve));
    if (storeDir) rmSync(storeDir, { recursive: true, force: true });
  });

  test('at 390 px the page loads our AVIF copies and not one request goes to the gallery\'s host; a screenshot is kept', async () => {
    const api = client(t, gallery.key);
    expect((await api.get('/v1/sync/status')).body.images).toEqual({ pending: 0, ready: 4, failed: 1 });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`${base}/profiles/${gallery.slug}`, { waitUntil: 'load' });
    await page.evaluate('(async () => { for (let y = 0; y < document.body.scrollHeight; y += 300) { scrollTo(0, y); await new Promise((r) => setTimeout(r, 50)); } scrollTo(0, 0); })()');
    await page.waitForFunction('[...document.images].every((img) => img.complete)');
    const images = await page.evaluate<Array<{ src: string; loaded: boolean }>>('[...document.images].map((img) => ({ src: img.currentSrc, loaded: img.complete && img.naturalWidth > 0 }))');
    expect(images).toHaveLength(3);
    for (const image of images) {
      expect(image.loaded, image.src).toBe(true);
      // A 390 px card on a 2× screen: an AVIF copy at most 960 px wide, never the 900 to 2,400 px original.
      const match = new RegExp(`^${base}/images/[0-9a-f]{64}-(\\d+)\\.avif$`).exec(image.src);
      expect(match, image.src).not.toBeNull();
      expect(Number(match![1])).toBeLessThanOrEqual(960);
    }
    expect(requests.filter((url) => new URL(url).hostname === ORIGIN_HOST)).toEqual([]);
    expect(requests.filter((url) => url.startsWith(`${base}/images/`)).length).toBeGreaterThanOrEqual(3);
    await expect(page.locator('.placeholder[aria-label="Image unavailable"]').count()).resolves.toBe(1);
    const html = await page.content();
    expect(html).not.toContain(ORIGIN_HOST);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'profile-images-390.png'), fullPage: true });

    const event = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const eventRequests: string[] = [];
    event.on('request', (request) => eventRequests.push(request.url()));
    const { slug } = (await api.get(`/v1/events/${(await api.get('/v1/events')).body.events[0].id}`)).body;
    await event.goto(`${base}/profiles/${gallery.slug}/events/${encodeURIComponent(slug)}`, { waitUntil: 'load' });
    expect(eventRequests.filter((url) => new URL(url).hostname === ORIGIN_HOST)).toEqual([]);
    expect(await event.locator('meta[property="og:image"]').getAttribute('content')).toMatch(new RegExp(`^${base}/images/[0-9a-f]{64}-1600\\.jpg$`));
    await event.screenshot({ path: join(SCREENSHOTS, 'event-images-390.png'), fullPage: true });
    await Promise.all([page.close(), event.close()]);
  });
});
