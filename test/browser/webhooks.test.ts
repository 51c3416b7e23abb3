import { afterAll, beforeAll, expect, test } from 'vitest';
import { deliverMessage } from '../../src/webhooks/deliver.js';
import { client, tenant, type Tenant } from '../helpers.js';
import { checkPage, consolePage, describeInBrowser, inBrowser } from '../support/browser.js';
import { plainPost, startReceiver } from '../support/webhook-receiver.js';

const SHOTS = new Set(['console-webhooks-1280', 'console-webhooks-390']);

describeInBrowser('the Webhooks page in a real browser', { timeout: 180_000 }, () => {
  const web = inBrowser({ env: { FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' } });
  let gallery: Tenant;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    gallery = await tenant(web.t, { name: 'Galerie Nord' });
    receiver = await startReceiver((_got, index) => (index === 0 ? { status: 503, body: 'maintenance until 10:00' } : { status: 200, body: '{"ok":true}' }));
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
  });

  for (const width of [1280, 390]) {
    test(`an owner adds an endpoint, sees its secret once, sends a test and reads the log at ${width} px`, async () => {
      const page = await consolePage(web, gallery.entityId, 'owner', width);
      await page.goto(`${web.base}/console/webhooks`);
      await checkPage(page);
      await page.getByLabel('URL').fill(`${receiver.url}/erp/${width}`);
      await page.getByLabel('Description').fill('Inventory system');
      await page.getByLabel('all events').uncheck();
      for (const type of ['artwork.created', 'artwork.updated', 'artwork.deleted', 'image.failed']) await page.getByLabel(type, { exact: true }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = (await page.locator('.secret').textContent())!;
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Send test' }).click();
      await expect(page.getByRole('status').textContent()).resolves.toMatch(/Test message msg_\w+ is on its way/);
      await client(web.t, gallery.key).post('/v1/artworks', { title: `Abstract Painting ${width}`, artist_name: 'Gerhard Richter' });
      const hook = await web.t.handle.db.selectFrom('webhook_endpoints').select('id').where('url', '=', `${receiver.url}/erp/${width}`).executeTakeFirstOrThrow();
      const messages = await web.t.handle.db.selectFrom('webhook_messages').select('seq').where('endpoint_id', '=', hook.id).orderBy('seq').execute();
      const ctx = { db: web.t.handle.db, publicBaseUrl: web.base, post: plainPost };
      for (const m of messages) await deliverMessage(ctx, Number(m.seq));
      if (width === 1280) await deliverMessage(ctx, Number(messages[0]!.seq));
      await page.goto(`${web.base}/console/webhooks/${hook.id}`);
      await expect(page.locator('.secret').count()).resolves.toBe(0);
      await expect(page.locator('tbody tr').count()).resolves.toBe(2);
      await page.locator('summary').first().click();
      await page.locator('summary').last().click();
      // A message type wraps only after a dot (artwork. / created), never inside a word: each line it is laid
      // out on, read character by character, ends with a dot, but the last.
      const typeLines = await page.evaluate<string[][]>(`[...document.querySelectorAll('tbody tr td:nth-child(2)')].map((cell) => {
        const range = document.createRange();
        const lines = [];
        let top = null;
        const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < node.textContent.length; i++) {
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const y = Math.round(range.getBoundingClientRect().top);
            if (top === null || Math.abs(y - top) > 4) lines.push('');
            top = y;
            lines[lines.length - 1] += node.textContent[i];
          }
        }
        return lines;
      })`);
      expect(typeLines.map((lines) => lines.join(''))).toEqual(['artwork.created', 'webhook.test']);
      for (const lines of typeLines) for (const line of lines.slice(0, -1)) expect(line).toMatch(/\.$/);
      await checkPage(page, `console-webhooks-${width}`, SHOTS);
      await page.getByRole('button', { name: 'Retry' }).first().click();
      await expect(page.getByRole('status').textContent()).resolves.toMatch(/will be sent again now/);
      await page.close();
    });
  }
});
