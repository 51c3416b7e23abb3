import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Page } from 'playwright-core';
import { beforeAll, expect, test } from 'vitest';
import { client, tenant, type Tenant } from '../helpers.js';
import { describeInBrowser, inBrowser } from '../support/browser.js';

const SCREENSHOTS = join(import.meta.dirname, '..', '..', 'test-output');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** Pictures of several shapes (the 1,688 px one overflowed the event page before), served to the browser offline. */
const IMAGES: Record<string, [number, number, string]> = {
  'wide.svg': [1600, 900, '#b5523b'], 'tall.svg': [600, 1200, '#3b6fb5'], 'square.svg': [800, 800, '#5b8c4a'], 'huge.svg': [1688, 1100, '#8a6d3b'],
};
const svg = ([w, h, colour]: [number, number, string]) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><rect width="${w}" height="${h}" fill="${colour}"/><circle cx="${w / 2}" cy="${h / 2}" r="${Math.min(w, h) / 3}" fill="#fbfaf8" opacity="0.6"/></svg>`;

describeInBrowser('public pages in a real browser', () => {
  const web = inBrowser({ env: { RATE_LIMIT_SUBSCRIBER: '10000' } });
  let gallery: Tenant;
  let bare: Tenant;
  let eventSlug: string;
  let artworkId: number;

  beforeAll(async () => {
    gallery = await tenant(web.t, { name: 'Galerie Browser' });
    const api = client(web.t, gallery.key);
    await api.put('/v1/profile', {
      description: '<script>alert(1)</script><img src=x onerror=alert(2)>',
      ical_url: 'https://galerie.example/calendar.ics',
      external_url: 'https://galerie.example/',
    });
    await api.post('/v1/artworks/batch', {
      items: [
        { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, medium: 'Oil on canvas', dimensions: '200 × 140 cm', price: 1200000, currency: 'EUR', availability: 'available', image_url: 'https://images.example/wide.svg', external_url: 'https://galerie.example/works/abstract-painting', description: 'Layers of paint drawn across the canvas with a squeegee, in red, blue and yellow.' },
        { title: 'Infinity Nets', artist_name: '草間彌生', creation_year: 2009, availability: 'sold', image_url: 'https://images.example/tall.svg' },
        { title: 'Nachtstück', artist_name: 'Käthe Kollwitz', creation_year: 1925, price: 18000, currency: 'EUR', availability: 'reserved' },
        { title: 'A title long enough to wrap over several lines of a narrow card without pushing the grid wider', artist_name: 'Anonymous', image_url: 'https://images.example/square.svg' },
      ],
    });
    const show = await api.post('/v1/events', {
      title: 'Colour and Silence', event_type: 'exhibition', start_date: '2099-06-01', end_date: '2099-08-31', location_city: 'Berlin', location_country: 'DE',
      image_url: 'https://images.example/huge.svg', description: 'Paintings and works on paper from five decades.',
    });
    eventSlug = show.body.slug;
    artworkId = (await api.get('/v1/artworks?limit=1')).body.artworks[0].id;
    await api.post('/v1/events', { title: 'Old Show', event_type: 'exhibition', start_date: day(-100), end_date: day(-70) });
    bare = await tenant(web.t, { name: 'Quiet Artist', type: 'artist' });
  });

  /** A page at one width, with the pictures served from memory. */
  async function open(path: string, width: number): Promise<Page> {
    const page = await web.newPage(width);
    await page.route('https://images.example/**', (route) => {
      const image = IMAGES[new URL(route.request().url()).pathname.slice(1)];
      return image ? route.fulfill({ contentType: 'image/svg+xml', body: svg(image) }) : route.fulfill({ status: 404 });
    });
    await page.goto(`${web.base}${path}`, { waitUntil: 'load' });
    return page;
  }

  const pages = () => [
    { name: 'profile', path: `/profiles/${gallery.slug}`, type: 'ArtGallery' },
    { name: 'event', path: `/profiles/${gallery.slug}/events/${encodeURIComponent(eventSlug)}`, type: 'ExhibitionEvent' },
    { name: 'artwork', path: `/profiles/${gallery.slug}/artworks/${artworkId}`, type: 'VisualArtwork' },
  ];

  for (const width of [390, 1280]) {
    for (const name of ['profile', 'event', 'artwork']) {
      test(`the ${name} page at ${width} px: nothing wider than the viewport, every image loaded or a placeholder, no serious accessibility violation, JSON-LD of the right type`, async () => {
        const { path, type } = pages().find((p) => p.name === name)!;
        const page = await open(path, width);
        // Lazy images load once scrolled into view: scroll through the page first.
        await page.evaluate('(async () => { for (let y = 0; y < document.body.scrollHeight; y += 400) { scrollTo(0, y); await new Promise((r) => setTimeout(r, 30)); } scrollTo(0, 0); })()');
        await page.waitForFunction('[...document.images].every((img) => img.complete)');

        const overflow = await page.evaluate<{ scroll: number; limit: number; wide: string[] }>(`(() => {
          const limit = document.documentElement.clientWidth;
          const wide = [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > limit + 1 || el.getBoundingClientRect().width > limit)
            .map((el) => el.tagName.toLowerCase() + '.' + el.className + ' ' + Math.round(el.getBoundingClientRect().width));
          return { scroll: document.documentElement.scrollWidth, limit, wide };
        })()`);
        expect(overflow.wide).toEqual([]);
        expect(overflow.scroll).toBeLessThanOrEqual(overflow.limit);

        const images = await page.evaluate<Array<{ src: string; loaded: boolean; fit: string; ratio: number }>>(`[...document.images].map((img) => ({ src: img.currentSrc, loaded: img.complete && img.naturalWidth > 0, fit: getComputedStyle(img).objectFit, ratio: img.clientWidth / img.clientHeight }))`);
        for (const image of images) {
          expect(image.loaded, image.src).toBe(true);
          expect(image.fit, image.src).toBe('cover');
          // One shape whatever the picture's own: 4:3.
          expect(image.ratio, image.src).toBeCloseTo(4 / 3, 1);
        }
        const placeholders = await page.locator('.placeholder').count();
        if (name === 'profile') expect(placeholders).toBeGreaterThan(0);
        expect(images.length + placeholders).toBeGreaterThan(0);

        const data = JSON.parse(await page.locator('script[type="application/ld+json"]').textContent() ?? 'null');
        expect(data['@type']).toBe(type);

        await page.evaluate(AXE_SOURCE);
        const violations = await page.evaluate<Array<{ id: string; impact: string }>>(`axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length })))`);
        expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);

        mkdirSync(SCREENSHOTS, { recursive: true });
        await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
        await page.close();
      });
    }
  }

  test('a card leads to its artwork page, and the artwork page back to the profile', async () => {
    const page = await open(`/profiles/${gallery.slug}`, 1280);
    await page.getByRole('link', { name: /Abstract Painting/ }).click();
    await page.waitForURL(`**/artworks/${artworkId}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Abstract Painting');
    await page.getByRole('link', { name: 'More from Galerie Browser' }).click();
    await page.waitForURL(`**/profiles/${gallery.slug}`);
    await page.close();
  });

  test('the profile page shows the gallery, its artworks and its upcoming events, and a screenshot is kept', async () => {
    const page = await web.newPage(1280);
    await page.goto(`${web.base}/profiles/${gallery.slug}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Galerie Browser');
    const cards = page.locator('.grid .card h3');
    await expect(cards.allTextContents()).resolves.toEqual(['Abstract Painting', 'Infinity Nets', 'Nachtstück', expect.stringContaining('A title long enough')]);
    const events = await page.locator('section[aria-labelledby="events-heading"] .events li strong').allTextContents();
    expect(events).toEqual(['Colour and Silence']);
    await expect(page.locator('section[aria-labelledby="past-heading"] .events li strong').allTextContents()).resolves.toEqual(['Old Show']);
    const stylesheetApplied = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(stylesheetApplied).toBe('rgb(251, 250, 248)');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'profile.png'), fullPage: true });
    expect(existsSync(join(SCREENSHOTS, 'profile.png'))).toBe(true);
    await page.close();
  });

  test('the subscribe link points to the webcal: address when ical_url is set', async () => {
    const page = await web.browser.newPage();
    await page.goto(`${web.base}/profiles/${gallery.slug}`);
    const subscribe = page.getByRole('link', { name: 'Subscribe to calendar' });
    await expect(subscribe.getAttribute('href')).resolves.toBe('webcal://galerie.example/calendar.ics');
    const google = await page.getByRole('link', { name: 'Add to Google Calendar' }).getAttribute('href');
    expect(google).toBe(`https://calendar.google.com/calendar/r?cid=${encodeURIComponent('webcal://galerie.example/calendar.ics')}`);
    await page.close();
  });

  test('no calendar links appear when ical_url is unset', async () => {
    const page = await web.browser.newPage();
    await page.goto(`${web.base}/profiles/${bare.slug}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Quiet Artist');
    await expect(page.getByRole('link', { name: 'Subscribe to calendar' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: 'Add to Google Calendar' }).count()).resolves.toBe(0);
    await page.close();
  });

  test('a hostile description shows as text and opens no dialog', async () => {
    const page = await web.browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    await page.goto(`${web.base}/profiles/${gallery.slug}`);
    await expect(page.locator('.description').textContent()).resolves.toBe('<script>alert(1)</script><img src=x onerror=alert(2)>');
    await expect(page.locator('.description img').count()).resolves.toBe(0);
    await page.waitForLoadState('load');
    expect(dialogs).toEqual([]);
    await page.close();
  });

  test('/docs renders the API reference with the artworks endpoints', async () => {
    const page = await web.browser.newPage();
    await page.goto(`${web.base}/docs`);
    await page.waitForSelector('.opblock-tag-section');
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(expect.arrayContaining(['/v1/artworks', '/v1/artworks/{id}', '/v1/artworks/batch']));
    await expect(page.locator('.info .title').textContent()).resolves.toContain('Art Catalog Service API');
    await page.close();
  });
});
