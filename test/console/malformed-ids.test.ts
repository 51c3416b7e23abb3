import { afterAll, beforeAll, expect, test } from 'vitest';
import { startApp, tenant, type TestApp } from '../helpers.js';
import { signedIn, type ConsoleSession } from '../support/console.js';

/**
 * Every console route with an id in its path answers a malformed id with the page's 404, never a 500
 * (docs/console.md, Pages): words, exponents, signs, fractions, zero, ids past the 32-bit bound,
 * encoded bytes.
 */

const MALFORMED = ['abc', '1e3', '-1', '0', '1.5', '+1', '0x10', '99999999999999999999', '%00', '%E2%80%AE1', ' 1', '١'];

const GETS = [
  '/console/artworks/ID', '/console/events/ID', '/console/webhooks/ID',
  '/console/import/ID', '/console/import/ID/preview', '/console/import/ID/progress', '/console/import/ID/progress.json',
  '/console/trash/artworks/ID/delete', '/console/trash/events/ID/delete',
];
const POSTS = [
  '/console/artworks/ID', '/console/artworks/ID/delete', '/console/events/ID', '/console/events/ID/delete',
  '/console/feeds/ID/run', '/console/feeds/ID/pause', '/console/feeds/ID/mapping', '/console/feeds/ID/delete', '/console/feeds/save/ID',
  '/console/import/ID/encoding', '/console/import/ID/sheet', '/console/import/ID/columns', '/console/import/ID/apply',
  '/console/webhooks/ID', '/console/webhooks/ID/delete', '/console/webhooks/ID/enabled', '/console/webhooks/ID/roll',
  '/console/webhooks/ID/test', '/console/webhooks/ID/messages/ID/retry', '/console/webhooks/1/messages/ID/retry',
  '/console/keys/ID/roll', '/console/keys/ID/revoke',
  '/console/trash/artworks/ID/restore', '/console/trash/events/ID/restore', '/console/trash/artworks/ID/delete', '/console/trash/events/ID/delete',
];

let t: TestApp;
let owner: ConsoleSession;
beforeAll(async () => {
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0', FEED_CONCURRENCY: '0' });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  owner = await signedIn(t, base, (await tenant(t)).entityId, 'owner');
});
afterAll(async () => t.close());

test('a malformed id in any console path is the page\'s 404', async () => {
  const wrong: string[] = [];
  for (const id of MALFORMED) {
    for (const path of GETS) {
      const page = await owner.get(path.replaceAll('ID', id));
      if (page.status !== 404) wrong.push(`GET ${path} ${id}: ${page.status}`);
    }
    for (const path of POSTS) {
      await owner.get('/console');
      const page = await owner.post(path.replaceAll('ID', id), { expire_old_in: '1h', enabled: 'true', url: 'http://127.0.0.1:9/x', events: '*' });
      if (page.status !== 404) wrong.push(`POST ${path} ${id}: ${page.status}`);
    }
  }
  expect(wrong).toEqual([]);
  // The page's own 404: the console's layout, not a bare error.
  const page = await owner.get('/console/artworks/1e3');
  expect(page.text).toContain('<nav');
});
