import { expect, test } from 'vitest';
import { client, tenant } from '../helpers.js';
import { checkPage, consolePage, describeInBrowser, inBrowser } from '../support/browser.js';
import { signedIn } from '../support/console.js';
import { csv } from '../support/file-server.js';
import { importFile } from '../support/runs.js';
import { until } from '../support/until.js';

/** Runs and Undo walked as a person would, in Debian's Chromium, with axe-core on every step (docs/console.md, Runs). */

const SHOTS = new Set(['console-undo-plan-1280', 'console-undo-done-390']);

describeInBrowser('Runs and Undo in a real browser', { timeout: 180_000 }, () => {
  const web = inBrowser();

  for (const width of [1280, 390]) {
    test(`at ${width} px an editor sees what an Undo will do, undoes an import, and reads what it kept`, async () => {
      const gallery = await tenant(web.t, { name: `Galerie Rückgängig ${width}` });
      const api = client(web.t, gallery.key);
      const kept = (await api.post('/v1/artworks', { title: 'Harbour at Dusk', external_id: 'R1', medium: 'oil', price: 900 })).body.id as number;
      const session = await signedIn(web.t, web.base, gallery.entityId, 'editor');
      const run = await importFile(session, api, csv('title;external_id;medium;price',
        'Harbour at Dusk;R1;oil on linen;1200', 'Salt Marsh, a very long title that a gallery wrote out in full;R2;ink;300', 'North Light;R3;ink;400'));
      // Changed since the import: the price it wrote.
      expect((await api.put(`/v1/artworks/${kept}`, { price: 1500 })).status).toBe(200);

      const page = await consolePage(web, gallery.entityId, 'editor', width);
      await page.goto(`${web.base}/console`);
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Runs', exact: true }).click();
      await page.waitForURL(`${web.base}/console/runs`);
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
      await checkPage(page, `console-runs-${width}`);

      await page.getByRole('link', { name: `Run ${run.id}` }).click();
      await page.waitForURL(`${web.base}/console/runs/${run.id}`);
      const plan = await page.locator('#undo-title').locator('..').textContent();
      expect(plan).toContain('2 records it created go to the Trash');
      expect(plan).toContain('2 fields of 1 record it changed get their old values back');
      expect(plan).toContain('0 records it deleted come back');
      await checkPage(page, `console-undo-plan-${width}`, SHOTS);

      await page.getByRole('button', { name: `Undo run ${run.id}` }).click();
      await page.waitForURL(/\/console\/runs\/\d+$/);
      const undoId = Number(/(\d+)$/.exec(page.url())![1]);
      expect(undoId).toBeGreaterThan(run.id);
      expect(await until(async () => (await api.get(`/v1/runs/${undoId}`)).body.status === 'applied')).toBe(true);
      await page.reload();
      await expect(page.locator('h1').textContent()).resolves.toBe(`Run ${undoId}: undo`);
      const body = await page.locator('main').textContent();
      expect(body).toContain('2 records to the trash, 1 record with fields back, 0 records restored');
      expect(body).toContain(`artwork #${kept}`);
      expect(body).toContain('changed since the run');
      // An undo offers no Undo of its own.
      await expect(page.getByRole('button', { name: /^Undo run/ }).count()).resolves.toBe(0);
      await checkPage(page, `console-undo-done-${width}`, SHOTS);

      // The run it undid says so, and offers no second Undo.
      await page.goto(`${web.base}/console/runs/${run.id}`);
      await expect(page.locator('main').textContent()).resolves.toContain(`run ${undoId}`);
      await expect(page.getByRole('button', { name: /^Undo run/ }).count()).resolves.toBe(0);
      await checkPage(page);
      await page.close();
    });
  }
});
