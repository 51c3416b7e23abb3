import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOTS = join(import.meta.dirname, '..', 'test-output');
// CI installs Debian's chromium (.ci/run); a developer machine without it skips rather than downloads one.
const run = existsSync(CHROMIUM) || process.env.CI ? describe : describe.skip;

run('public pages in a real browser', () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let gallery: Tenant;
  let bare: Tenant;

  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_SUBSCRIBER: '10000' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    });
    gallery = await tenant(t, { name: 'Galerie Browser' });
    const api = client(t, gallery.key);
    await api.put('/v1/profile', {
      description: '<script>alert(1)</script><img src=x onerror=alert(2)>',
      ical_url: 'https://galerie.example/calendar.ics',
      external_url: 'https://galerie.example/',
    });
    await api.post('/v1/artworks/batch', {
      items: [
        { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, medium: 'Oil on canvas', price: 1200000, currency: 'EUR', availability: 'available', image_url: 'https://images.example/ap.jpg' },
        { title: 'Infinity Nets', artist_name: '草間彌生', creation_year: 2009, availability: 'sold' },
        { title: 'Nachtstück', artist_name: 'Käthe Kollwitz', creation_year: 1925, price: 18000, currency: 'EUR', availability: 'reserved' },
      ],
    });
    await api.post('/v1/events', { title: 'Colour and Silence', event_type: 'exhibition', start_date: '2099-06-01', end_date: '2099-08-31', location_city: 'Berlin', location_country: 'DE' });
    await api.post('/v1/events', { title: 'Old Show', start_date: '2001-01-01' });
    bare = await tenant(t, { name: 'Quiet Artist', type: 'artist' });
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  test('the profile page shows the gallery, its artworks and its upcoming events, and a screenshot is kept', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${base}/profiles/${gallery.slug}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Galerie Browser');
    const cards = page.locator('.grid .card h3');
    await expect(cards.allTextContents()).resolves.toEqual(['Abstract Painting', 'Infinity Nets', 'Nachtstück']);
    const events = await page.locator('.events li strong').allTextContents();
    expect(events).toEqual(['Colour and Silence']);
    const stylesheetApplied = await page.evaluate('getComputedStyle(document.body).backgroundColor');
    expect(stylesheetApplied).toBe('rgb(251, 250, 248)');
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, 'profile.png'), fullPage: true });
    expect(existsSync(join(SCREENSHOTS, 'profile.png'))).toBe(true);
    await page.close();
  });

  test('the subscribe link points to the webcal: address when ical_url is set', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/profiles/${gallery.slug}`);
    const subscribe = page.getByRole('link', { name: 'Subscribe to calendar' });
    await expect(subscribe.getAttribute('href')).resolves.toBe('webcal://galerie.example/calendar.ics');
    const google = await page.getByRole('link', { name: 'Add to Google Calendar' }).getAttribute('href');
    expect(google).toBe(`https://calendar.google.com/calendar/r?cid=${encodeURIComponent('webcal://galerie.example/calendar.ics')}`);
    await page.close();
  });

  test('no calendar links appear when ical_url is unset', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/profiles/${bare.slug}`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Quiet Artist');
    await expect(page.getByRole('link', { name: 'Subscribe to calendar' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: 'Add to Google Calendar' }).count()).resolves.toBe(0);
    await page.close();
  });

  test('a hostile description shows as text and opens no dialog', async () => {
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    await page.goto(`${base}/profiles/${gallery.slug}`);
    await expect(page.locator('.description').textContent()).resolves.toBe('<script>alert(1)</script><img src=x onerror=alert(2)>');
    await expect(page.locator('.description img').count()).resolves.toBe(0);
    await page.waitForLoadState('load');
    expect(dialogs).toEqual([]);
    await page.close();
  });

  test('/docs renders the API reference with the artworks endpoints', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/docs`);
    await page.waitForSelector('.opblock-tag-section');
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, ''))).toEqual(expect.arrayContaining(['/v1/artworks', '/v1/artworks/{id}', '/v1/artworks/batch']));
    await expect(page.locator('.info .title').textContent()).resolves.toContain('Art Catalog Service API');
    await page.close();
  });
});
