import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, test, vi } from 'vitest';
import { client, tenant, type Tenant } from '../helpers.js';
import { checkPage, describeInBrowser, inBrowserWithPhotos } from '../support/browser.js';
import type { Photo } from '../support/image-origin.js';

/**
 * A public artwork page with the art data galleries keep (docs/api.md, Artworks): price on request,
 * a 3/50 edition, measured dimensions and four views, in a real browser at a phone's and a desktop's
 * width, axe-core clean. The screenshots are kept in docs/screenshots/.
 */

const OUTPUT = join(import.meta.dirname, '..', '..', 'test-output');
const DOCS = join(import.meta.dirname, '..', '..', 'docs', 'screenshots');
vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const ORIGIN_HOST = '127.0.0.2';
const PHOTOS: Photo[] = [
  ['front.jpg', 1600, 1280, { r: 120, g: 122, b: 128 }], ['detail.jpg', 1200, 1200, { r: 170, g: 58, b: 52 }],
  ['verso.jpg', 1600, 1280, { r: 196, g: 170, b: 128 }], ['room.jpg', 2000, 1300, { r: 226, g: 224, b: 218 }],
];

describeInBrowser('an artwork page with price on request, an edition, measures and four views', () => {
  const web = inBrowserWithPhotos(PHOTOS, ORIGIN_HOST);
  let gallery: Tenant;
  let artworkUrl: string;

  beforeAll(async () => {
    const originBase = web.origin;
    gallery = await tenant(web.t, { name: 'Galerie Nord' });
    const api = client(web.t, gallery.key);
    const posted = await api.post('/v1/artworks', {
      title: 'Grey Field with Red Line', artist_name: 'Mira Stein', creation_year: 2021, medium: 'Screenprint on Somerset paper',
      dimensions: '78 ¾ × 63 in', price: 48000, currency: 'EUR', price_display: 'on_request', availability: 'available',
      edition_size: 50, edition_number: 3, artist_proofs: 5, external_id: 'MS-2021-3/50',
      description: 'A screenprint in eleven colours, printed by the artist with Atelier Nord.',
      image_url: `${originBase}/front.jpg`, image_alt: 'A grey field crossed near its top by one thin red line',
      additional_images: [
        { url: `${originBase}/detail.jpg`, caption: 'Detail of the red line', role: 'detail', alt: 'Close-up of the red line on the grey ground' },
        { url: `${originBase}/verso.jpg`, role: 'verso', alt: 'The back of the sheet, signed, numbered 3/50 and dated' },
        { url: `${originBase}/room.jpg`, caption: 'Installation view, Galerie Nord, 2022', role: 'installation' },
      ],
    });
    expect(posted.status).toBe(201);
    artworkUrl = `${web.base}/profiles/${gallery.slug}/artworks/${posted.body.id}`;
    const deadline = Date.now() + 150_000;
    for (;;) {
      const views = (await api.get(`/v1/artworks/${posted.body.id}`)).body as { image: { status: string }; additional_images: Array<{ image: { status: string } }> };
      if ([views.image, ...views.additional_images.map((view) => view.image)].every((image) => image.status !== 'pending') || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  test('every view is ready through the image pipeline, and GET says so for each', async () => {
    const api = client(web.t, gallery.key);
    const id = artworkUrl.split('/').at(-1);
    const artwork = (await api.get(`/v1/artworks/${id}`)).body;
    expect(artwork.image.status).toBe('ready');
    expect(artwork.additional_images.map((view: { image: { status: string } }) => view.image.status)).toEqual(['ready', 'ready', 'ready']);
  });

  for (const width of [390, 1280]) {
    test(`at ${width} px: price on request, the edition, in and cm, four views with their text alternatives, axe clean`, async () => {
      const page = await web.newPage(width);
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(artworkUrl, { waitUntil: 'load' });
      await page.evaluate('(async () => { for (let y = 0; y < document.body.scrollHeight; y += 300) { scrollTo(0, y); await new Promise((r) => setTimeout(r, 50)); } scrollTo(0, 0); })()');
      await page.waitForFunction('[...document.images].every((img) => img.complete && img.naturalWidth > 0)');
      const text = await page.locator('article').innerText();
      expect(text).toContain('Price on request');
      expect(text).not.toMatch(/48[,.\s\u00a0\u202f]?000/);
      expect(text).toContain('Edition 3/50 (+5 AP)');
      expect(text).toContain('78.75 × 63 in (200 × 160 cm)');
      const alts = await page.evaluate<string[]>('[...document.querySelectorAll("article img")].map((img) => img.alt)');
      expect(alts).toEqual([
        'A grey field crossed near its top by one thin red line',
        'Close-up of the red line on the grey ground',
        'The back of the sheet, signed, numbered 3/50 and dated',
        'Grey Field with Red Line by Mira Stein: Installation view, Galerie Nord, 2022',
      ]);
      expect(requests.filter((url) => new URL(url).hostname === ORIGIN_HOST)).toEqual([]);
      await checkPage(page);
      mkdirSync(OUTPUT, { recursive: true });
      mkdirSync(DOCS, { recursive: true });
      const shot = join(OUTPUT, `artwork-art-data-${width}.png`);
      await page.screenshot({ path: shot, fullPage: true });
      copyFileSync(shot, join(DOCS, `artwork-art-data-${width}.png`));
      await page.close();
    });
  }
});
