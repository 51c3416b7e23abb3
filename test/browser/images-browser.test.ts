import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, test, vi } from 'vitest';
import { client, tenant, type Tenant } from '../helpers.js';
import { describeInBrowser, inBrowserWithPhotos } from '../support/browser.js';
import type { Photo } from '../support/image-origin.js';

const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output');
// Five photos are converted before the page is opened: slow on the shared machines tests run on.
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

/** The gallery's server: its own address (127.0.0.2), so any request a page makes to it is told apart. */
const ORIGIN_HOST = '127.0.0.2';
const SHAPES: Photo[] = [
  ['wide.jpg', 2400, 1350, { r: 181, g: 82, b: 59 }], ['tall.jpg', 900, 1800, { r: 59, g: 111, b: 181 }],
  ['square.jpg', 1200, 1200, { r: 91, g: 140, b: 74 }], ['event.jpg', 3000, 2000, { r: 138, g: 109, b: 59 }],
];

describeInBrowser('a profile page with images in a real browser', () => {
  const web = inBrowserWithPhotos(SHAPES, ORIGIN_HOST);
  let gallery: Tenant;

  beforeAll(async () => {
    const originBase = web.origin;
    gallery = await tenant(web.t, { name: 'Galerie Bilder' });
    const api = client(web.t, gallery.key);
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
  });

  test('at 390 px the page loads our AVIF copies and not one request goes to the gallery\'s host; a screenshot is kept', async () => {
    const api = client(web.t, gallery.key);
    expect((await api.get('/v1/sync/status')).body.images).toEqual({ pending: 0, ready: 4, failed: 1 });
    const page = await web.browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(`${web.base}/profiles/${gallery.slug}`, { waitUntil: 'load' });
    await page.evaluate('(async () => { for (let y = 0; y < document.body.scrollHeight; y += 300) { scrollTo(0, y); await new Promise((r) => setTimeout(r, 50)); } scrollTo(0, 0); })()');
    await page.waitForFunction('[...document.images].every((img) => img.complete)');
    const images = await page.evaluate<Array<{ src: string; loaded: boolean }>>('[...document.images].map((img) => ({ src: img.currentSrc, loaded: img.complete && img.naturalWidth > 0 }))');
    expect(images).toHaveLength(3);
    for (const image of images) {
      expect(image.loaded, image.src).toBe(true);
      // A 390 px card on a 2× screen: an AVIF copy at most 960 px wide, never the 900 to 2,400 px original.
      const match = new RegExp(`^${web.base}/images/[0-9a-f]{64}-(\\d+)\\.avif$`).exec(image.src);
      expect(match, image.src).not.toBeNull();
      expect(Number(match![1])).toBeLessThanOrEqual(960);
    }
    expect(requests.filter((url) => new URL(url).hostname === ORIGIN_HOST)).toEqual([]);
    expect(requests.filter((url) => url.startsWith(`${web.base}/images/`)).length).toBeGreaterThanOrEqual(3);
    await expect(page.locator('.placeholder[aria-label="Image unavailable"]').count()).resolves.toBe(1);
    const html = await page.content();
    expect(html).not.toContain(ORIGIN_HOST);
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'profile-images-390.png'), fullPage: true });

    const event = await web.browser.newPage({ viewport: { width: 390, height: 844 } });
    const eventRequests: string[] = [];
    event.on('request', (request) => eventRequests.push(request.url()));
    const { slug } = (await api.get(`/v1/events/${(await api.get('/v1/events')).body.events[0].id}`)).body;
    await event.goto(`${web.base}/profiles/${gallery.slug}/events/${encodeURIComponent(slug)}`, { waitUntil: 'load' });
    expect(eventRequests.filter((url) => new URL(url).hostname === ORIGIN_HOST)).toEqual([]);
    expect(await event.locator('meta[property="og:image"]').getAttribute('content')).toMatch(new RegExp(`^${web.base}/images/[0-9a-f]{64}-1600\\.jpg$`));
    await event.screenshot({ path: join(SCREENSHOTS, 'event-images-390.png'), fullPage: true });
    await Promise.all([page.close(), event.close()]);
  });
});
