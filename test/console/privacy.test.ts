import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { imageProcessed } from '../support/images.js';
import { ConsoleSession, invite, PASSWORD, signedIn } from '../support/console.js';

/**
 * What the console gives away (docs/console.md, Signing in and sessions; Artworks and events): on https
 * its cookies are `__Host-` prefixed (a sibling subdomain cannot plant one), and a record's page shows
 * the platform's copy of its image, never loading the gallery's own image_url.
 */

describe('console cookies on https', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;

  beforeAll(async () => {
    t = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t);
  }, 120_000);
  afterAll(async () => t.close());

  test('the session and CSRF cookies are __Host- prefixed: Secure, Path=/, no Domain', async () => {
    const { token } = await invite(t, gallery.entityId, 'owner');
    const browser = new ConsoleSession(base);
    const page = await browser.get(`/console/invite/${token}`);
    const csrf = page.headers.getSetCookie().find((c) => c.startsWith('__Host-console_csrf='));
    expect(csrf).toBeDefined();
    const accepted = await browser.post(`/console/invite/${token}`, { password: PASSWORD });
    expect(accepted.status).toBe(303);
    const session = accepted.headers.getSetCookie().find((c) => c.startsWith('__Host-console_session='));
    for (const cookie of [csrf!, session!]) {
      expect(cookie).toMatch(/; Secure/i);
      expect(cookie).toMatch(/; Path=\/(;|$)/);
      expect(cookie).not.toMatch(/domain=/i);
    }
    expect(accepted.headers.getSetCookie().some((c) => c.startsWith('console_session='))).toBe(false);
    expect((await browser.get('/console')).status).toBe(200);
    // A cookie without the prefix (planted by a sibling subdomain) is no session.
    const planted = new ConsoleSession(base);
    planted.cookies.set('console_session', browser.cookies.get('__Host-console_session')!);
    expect((await planted.get('/console')).status).toBe(303);
  });
});

describe('a record page\'s image', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let viewer: ConsoleSession;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t);
    viewer = await signedIn(t, base, gallery.entityId, 'viewer');
  }, 120_000);
  afterAll(async () => t.close());

  test('pending: words, no <img> of the gallery\'s URL; ready: the platform\'s copy under /images/', async () => {
    const url = 'https://tracker.gallery.example/painting.jpg';
    const created = await client(t, gallery.key).post('/v1/artworks', { title: 'Watched', image_url: url });
    const pending = await viewer.get(`/console/artworks/${created.body.id}`);
    expect(pending.status).toBe(200);
    expect(pending.text).not.toMatch(/<img[^>]+tracker\.gallery\.example/);
    expect(pending.text).toContain('The image is being fetched');
    await imageProcessed(t.handle.db, url);
    const ready = await viewer.get(`/console/artworks/${created.body.id}`);
    expect(ready.text).not.toMatch(/<img[^>]+tracker\.gallery\.example/);
    expect(ready.text).toMatch(/<img src="\/images\/[^"]+\.jpg"/);
  });
});
