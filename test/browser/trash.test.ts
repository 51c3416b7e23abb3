import type { Page } from 'playwright-core';
import { expect, test } from 'vitest';
import { client, tenant } from '../helpers.js';
import { checkPage, consolePage, describeInBrowser, inBrowser } from '../support/browser.js';

/** The Trash page walked as a person would, in Debian's Chromium, with axe-core on every step (docs/console.md, Trash). */

const SHOTS = new Set(['console-trash-1280', 'console-trash-390']);

describeInBrowser('the Trash page in a real browser', { timeout: 180_000 }, () => {
  const web = inBrowser();

  /** Every button and button-like link of the page's main part lies within the viewport's width. */
  async function controlsFit(page: Page, width: number) {
    const outside = await page.evaluate<string[]>(`[...document.querySelectorAll('main button, main .button, main a')]
      .filter((el) => { const box = el.getBoundingClientRect(); return box.width > 0 && (box.left < 0 || box.right > ${width}); })
      .map((el) => el.textContent.trim())`);
    expect(outside).toEqual([]);
  }

  for (const width of [1280, 390]) {
    test(`at ${width} px an editor finds a deleted work and event in the Trash, restores one, meets a clash, and deletes one forever`, async () => {
      const gallery = await tenant(web.t, { name: `Galerie Papierkorb ${width}` });
      const api = client(web.t, gallery.key);
      const works = (await api.post('/v1/artworks/batch', { items: [
        { title: 'Harbour at Dusk', artist_name: 'Lena Voss', creation_year: 2021, external_id: 'GN-1' },
        { title: 'Salt Marsh, a very long title that a gallery wrote out in full for its catalogue', artist_name: 'Aki Mori', creation_year: 2022, external_id: 'GN-2' },
        { title: 'North Light', artist_name: '草間彌生', creation_year: 2019, external_id: 'GN-3' },
      ] })).body.results.map((r: { id: number }) => r.id);
      const event = (await api.post('/v1/events', { title: 'Winter Salon', event_type: 'exhibition', start_date: '2099-01-10' })).body.id as number;
      await api.delete(`/v1/artworks/${works[1]}`);
      await api.delete(`/v1/artworks/${works[2]}`);
      await api.delete(`/v1/events/${event}`);

      const page = await consolePage(web, gallery.entityId, 'editor', width);

      // A Delete from the record's page: the list says it went to the Trash, with a link there.
      await page.goto(`${web.base}/console/artworks/${works[0]}`);
      await page.getByRole('button', { name: 'Delete artwork' }).click();
      await page.waitForURL(`${web.base}/console/artworks?deleted=${works[0]}`);
      await expect(page.getByRole('status').textContent()).resolves.toContain(`Artwork #${works[0]} went to the Trash`);
      await checkPage(page);

      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Trash', exact: true }).click();
      await page.waitForURL(`${web.base}/console/trash`);
      await expect(page.locator('tbody tr').count()).resolves.toBe(4);
      await expect(page.locator('tbody tr').first().textContent()).resolves.toContain('Harbour at Dusk');
      await checkPage(page, `console-trash-${width}`, SHOTS);
      await controlsFit(page, width);

      await page.getByRole('button', { name: `Restore artwork #${works[2]}` }).click();
      await page.waitForURL(`${web.base}/console/trash?restored=artworks-${works[2]}`);
      await expect(page.getByRole('status').textContent()).resolves.toContain('“North Light” is back in the catalog');
      await expect(page.locator('tbody tr').count()).resolves.toBe(3);
      await checkPage(page, `console-trash-restored-${width}`);

      // A new work took the inventory number: the Restore is refused, naming it.
      const holder = (await api.post('/v1/artworks', { title: 'Harbour at Dawn', artist_name: 'Lena Voss', external_id: 'GN-1' })).body.id as number;
      await page.getByRole('button', { name: `Restore artwork #${works[0]}` }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toContain(`artwork #${holder} in the catalog now has the same inventory number`);
      await expect(page.locator('tbody tr').count()).resolves.toBe(3);
      await checkPage(page, `console-trash-clash-${width}`);
      await controlsFit(page, width);

      await page.getByRole('link', { name: `Delete forever… event #${event}` }).click();
      await page.waitForURL(`${web.base}/console/trash/events/${event}/delete`);
      await expect(page.locator('h1').textContent()).resolves.toBe('Delete “Winter Salon” forever?');
      await checkPage(page, `console-trash-confirm-${width}`);
      await controlsFit(page, width);
      await page.getByRole('button', { name: 'Delete forever' }).click();
      await page.waitForURL(`${web.base}/console/trash?removed=events-${event}`);
      await expect(page.getByRole('status').textContent()).resolves.toContain(`Event #${event} was deleted for good.`);
      await expect(page.locator('tbody tr').count()).resolves.toBe(2);
      expect((await api.get('/v1/trash')).body.items.map((i: { id: number }) => i.id)).toEqual([works[0], works[1]]);
      await checkPage(page);
      await page.close();
    });
  }
});
