import { afterAll, beforeAll, expect, test } from 'vitest';
import { runFeed } from '../../src/feeds/run.js';
import { client, tenant, type Tenant } from '../helpers.js';
import { checkPage, consolePage, describeInBrowser, inBrowser } from '../support/browser.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';

/** The Feeds page walked as a person would, in Debian's Chromium, with axe-core on every step (docs/console.md, Feeds). */

const DOC_SHOTS = new Set(['console-feeds-1280', 'console-feeds-390']);

describeInBrowser('the Feeds page in a real browser', { timeout: 180_000 }, () => {
  let files: FileServer;
  beforeAll(async () => {
    files = await fileServer();
  });
  afterAll(async () => {
    await files?.close();
  });
  // Runs are driven by the test (runFeed, as the feed's job does), not by the app's job runner.
  const web = inBrowser({ env: { FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' }, publicBaseUrl: true });

  const signIn = (gallery: Tenant, width: number) => consolePage(web, gallery.entityId, 'editor', width, 'Feeds');

  for (const width of [1280, 390]) {
    test(`at ${width} px an editor connects a published spreadsheet, maps it, saves the feed, and sees its run and a failing feed`, async () => {
      const gallery = await tenant(web.t, { name: `Galerie Nord ${width}` });
      files.set(`/sheet-${width}.csv`, csv(
        'Inventory No.,Title,Artist,Year,Price,Status,Notes', 'GN-1,Harbour at Dusk,Lena Voss,2021,4200,available,', 'GN-2,Salt Marsh,Lena Voss,2022,"$5,800",available,framed',
        'GN-3,North Light,Aki Mori,2019,3100,NFS,',
      ));
      const page = await signIn(gallery, width);
      await checkPage(page);
      await page.getByLabel('Address of the file').fill(files.url(`/sheet-${width}.csv`));
      await page.getByRole('button', { name: 'Connect' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Match the columns');
      // The gallery's own names are preselected in its words; Notes is private and left out; no read-only field is offered.
      await expect(page.getByLabel('Field for Year').inputValue()).resolves.toBe('creation_year');
      await expect(page.getByLabel('Field for Inventory No.').locator('option:checked').textContent()).resolves.toBe('Inventory number');
      await expect(page.getByLabel('Field for Notes').inputValue()).resolves.toBe('');
      await expect(page.getByLabel('Field for Title').locator('option[value="source_fingerprint"]').count()).resolves.toBe(0);
      await expect(page.getByRole('link', { name: 'Use another address' }).count()).resolves.toBe(1);
      await checkPage(page, `console-feed-mapping-${width}`);
      await page.getByRole('button', { name: 'Preview' }).click();
      await expect(page.locator('h1').textContent()).resolves.toBe('Preview');
      await expect(page.locator('main').textContent()).resolves.toContain('would create 3');
      // The preview the API answers, in the gallery's words: each row's action and values, the problems with their level.
      const shown = page.getByRole('region', { name: 'What the first run would write' });
      await expect(shown.getByRole('table', { name: 'The first rows as they would be written' }).getByRole('row').count()).resolves.toBe(4);
      await expect(shown.textContent()).resolves.toContain('Price: USD 5,800');
      await expect(shown.textContent()).resolves.toContain('Availability: Not for sale');
      await expect(shown.textContent()).resolves.toContain('Left out: Notes');
      await expect(shown.getByRole('table', { name: 'Problems of the preview' }).textContent()).resolves.toContain('warning, written');
      await checkPage(page, `console-feed-preview-${width}`);
      await page.getByLabel('Read the file').selectOption('360');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.waitForURL(`${web.base}/console/feeds?done=saved`);

      const api = client(web.t, gallery.key);
      const [feed] = (await api.get('/v1/feeds')).body.feeds;
      await runFeed({ db: web.t.handle.db, fetch: web.t.app.feedFetch }, feed.id);
      const broken = await api.post('/v1/feeds', { url: files.url('/gone.csv'), kind: 'events' });
      await runFeed({ db: web.t.handle.db, fetch: web.t.app.feedFetch }, broken.body.id);

      await page.goto(`${web.base}/console/feeds`);
      // "$5,800" is read as galleries write it; the prices naming no currency are written, with a warning.
      await expect(page.locator(`#feed-${feed.id}`).textContent()).resolves.toContain('created 3');
      await expect(page.locator(`#feed-${feed.id}`).textContent()).resolves.toContain('price: no currency');
      await expect(page.locator(`#feed-${broken.body.id}`).textContent()).resolves.toContain('HTTP 404');
      await checkPage(page, `console-feeds-${width}`, DOC_SHOTS);
      // Every navigation item is in view, none hidden off-screen behind a sideways scroll.
      const nav = page.getByRole('navigation', { name: 'Console' });
      for (const link of await nav.getByRole('link').all()) {
        const box = (await link.boundingBox())!;
        expect(box.x + box.width, await link.textContent() ?? '').toBeLessThanOrEqual(width);
      }
      await expect(nav.locator('ul').evaluate((ul) => ul.scrollWidth - ul.clientWidth)).resolves.toBeLessThanOrEqual(0);
      await page.goto(`${web.base}/console`);
      await expect(page.getByText('Feeds that need you').count()).resolves.toBe(1);
      await checkPage(page);
      await page.close();
    });
  }
});
