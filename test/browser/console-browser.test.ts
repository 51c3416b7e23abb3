import { type Page } from 'playwright-core';
import { beforeAll, expect, test } from 'vitest';
import { client, tenant, type Tenant } from '../helpers.js';
import { PASSWORD, invite } from '../support/console.js';
import { checkPage, describeInBrowser, inBrowser } from '../support/browser.js';

/** The screenshots docs/console.md shows (taken with Debian's Noto CJK fonts installed, so every script renders). */
const README_SHOTS = new Set(['console-overview-1280', 'console-artwork-1280', 'console-keys-1280', 'console-artworks-390']);
const svg = (colour: string) => `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600" fill="${colour}"/><circle cx="400" cy="300" r="180" fill="#fbfaf8" opacity="0.6"/></svg>`;

describeInBrowser('the gallery console in a real browser', { timeout: 180_000 }, () => {
  const web = inBrowser({ env: { RATE_LIMIT_SUBSCRIBER: '10000' }, publicBaseUrl: true });
  let gallery: Tenant;
  let artworkId: number;

  beforeAll(async () => {
    gallery = await tenant(web.t, { name: 'Galerie Nord' });
    const api = client(web.t, gallery.key);
    const posted = await api.post('/v1/artworks/batch', { items: [
      { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, medium: 'Oil on canvas', dimensions: '200 × 140 cm', price: 1200000, currency: 'EUR', availability: 'available', external_id: 'GR-1990-1', image_url: 'https://images.example/red.svg', description: 'Layers of paint drawn across the canvas with a squeegee.' },
      { title: 'Infinity Nets', artist_name: '草間彌生', creation_year: 2009, price: 450000, currency: 'EUR', availability: 'sold', external_id: 'YK-2009-4', image_url: 'https://images.example/blue.svg' },
      { title: 'Nachtstück', artist_name: 'Käthe Kollwitz', creation_year: 1925, price: 18000, currency: 'EUR', availability: 'reserved', external_id: 'KK-1925-2' },
      { title: 'Untitled (Blue)', artist_name: '김환기', creation_year: 1970, price: 2400000, currency: 'USD', availability: 'available', external_id: 'KW-1970-7' },
    ] });
    artworkId = posted.body.results[0].id;
    await api.post('/v1/events', { title: 'Colour and Silence', event_type: 'exhibition', start_date: '2099-06-01', end_date: '2099-08-31', location_city: 'Berlin', location_country: 'DE' });
  }, 120_000);

  async function newPage(width: number): Promise<Page> {
    const page = await web.newPage(width);
    await page.route('https://images.example/**', (route) => route.fulfill({ contentType: 'image/svg+xml', body: svg(route.request().url().includes('red') ? '#b5523b' : '#3b6fb5') }));
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name, exact: true }).click();

  test('an owner accepts an invite, signs in, edits a price, finds it in the changelog, creates, rolls and revokes a key, and signs out', async () => {
    const { email, token } = await invite(web.t, gallery.entityId, 'owner', 'anna@galerie-nord.example');
    const page = await newPage(1280);
    await page.goto(`${web.base}/console/invite/${token}`);
    await checkPage(page);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(`${web.base}/console`);
    await expect(page.locator('h1').textContent()).resolves.toBe('Overview');

    // Sign out and in again, as on another day.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/console/sign-in');
    await checkPage(page, 'console-sign-in-1280', README_SHOTS);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${web.base}/console`);
    await expect(page.locator('.stats').textContent()).resolves.toContain('4');
    await checkPage(page, 'console-overview-1280', README_SHOTS);

    await nav(page, 'Artworks');
    await expect(page.locator('tbody tr').count()).resolves.toBe(4);
    await checkPage(page, 'console-artworks-1280', README_SHOTS);
    await page.getByRole('link', { name: 'Abstract Painting' }).click();
    await page.waitForURL(`**/console/artworks/${artworkId}`);
    await page.getByLabel('Price').fill('950000');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(`**/console/artworks/${artworkId}?saved=1`);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Saved.');
    await checkPage(page, 'console-artwork-1280', README_SHOTS);

    await nav(page, 'Changelog');
    const change = page.locator('.change').filter({ hasText: `artwork #${artworkId}` }).first();
    await expect(change.locator('dd').filter({ hasText: '950000' }).textContent()).resolves.toBe('1200000 → 950000');
    await checkPage(page, 'console-changelog-1280', README_SHOTS);

    await nav(page, 'Keys');
    await page.getByLabel('artworks:write').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const first = (await page.locator('.secret').textContent())!;
    expect(first).toMatch(/^ak_live_\w{32}$/);
    expect((await client(web.t, first).get('/v1/me')).status).toBe(200);
    const row = page.locator('tr').filter({ hasText: first.slice(0, 16) });
    await row.getByLabel('Old key expires').selectOption('1h');
    await row.getByRole('button', { name: 'Roll' }).click();
    const second = (await page.locator('.secret').textContent())!;
    expect(second).not.toBe(first);
    await checkPage(page, 'console-keys-1280', README_SHOTS);
    await page.locator('tr').filter({ hasText: first.slice(0, 16) }).getByRole('button', { name: 'Revoke' }).click();
    await page.waitForURL('**/console/keys?revoked=*');
    await expect(page.locator('tr').filter({ hasText: first.slice(0, 16) }).textContent()).resolves.toContain('revoked');
    await page.reload();
    await expect(page.locator('.secret').count()).resolves.toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await client(web.t, first).get('/v1/me')).status).toBe(401);
    expect((await client(web.t, second).get('/v1/me')).status).toBe(200);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/console/sign-in');
    await page.goto(`${web.base}/console/keys`);
    await page.waitForURL('**/console/sign-in?next=*');
    await page.close();
  });

  test('a viewer finds no edit controls and gets 403 when forcing a post', async () => {
    const { token } = await invite(web.t, gallery.entityId, 'viewer', 'ben@galerie-nord.example');
    const page = await newPage(1280);
    await page.goto(`${web.base}/console/invite/${token}`);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.waitForURL(`${web.base}/console`);
    await expect(page.getByRole('link', { name: 'Keys' }).count()).resolves.toBe(0);
    await page.goto(`${web.base}/console/artworks/${artworkId}`);
    await expect(page.getByRole('button', { name: 'Save changes' }).count()).resolves.toBe(0);
    await expect(page.getByRole('button', { name: /Delete/ }).count()).resolves.toBe(0);
    await expect(page.locator('input[name="price"]').count()).resolves.toBe(0);
    const forced = await page.evaluate<number>(`(async () => {
      const token = document.querySelector('input[name="_csrf"]').value;
      const body = new URLSearchParams({ _csrf: token, title: 'Abstract Painting', price: '1' });
      return (await fetch('/console/artworks/${artworkId}', { method: 'POST', body })).status;
    })()`);
    expect(forced).toBe(403);
    expect((await client(web.t, gallery.key).get(`/v1/artworks/${artworkId}`)).body.price).toBe(950000);
    await page.close();
  });

  for (const width of [390, 1280]) {
    test(`the console's pages at ${width} px: readable, nothing wider than the screen, no serious accessibility violation`, async () => {
      const { token } = await invite(web.t, gallery.entityId, 'owner');
      const page = await newPage(width);
      await page.goto(`${web.base}/console/invite/${token}`);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Set password and sign in' }).click();
      await page.waitForURL(`${web.base}/console`);
      for (const [path, shot] of [['/console', 'overview'], ['/console/artworks', 'artworks'], [`/console/artworks/${artworkId}`, 'artwork'], ['/console/events', 'events'], ['/console/changelog', 'changelog'], ['/console/keys', 'keys'], ['/console/people', 'people']] as const) {
        await page.goto(web.base + path);
        await checkPage(page, width === 390 ? `console-${shot}-390` : undefined, README_SHOTS);
      }
      // Every control is reachable from the keyboard: the first Tab lands on the skip link.
      await page.goto(`${web.base}/console/artworks`);
      await page.keyboard.press('Tab');
      await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Skip to content');
      await page.close();
    });
  }
});
