import { afterAll, beforeAll, describe, expect, test } from 'vitest';

// Each user's password is hashed with scrypt (~0.3 s on an idle core): limits for a shared machine.
import { startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, PASSWORD, invite, signedIn } from '../support/console.js';

describe('console sign-in and sessions', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Konsole' });
  }, 120_000);
  afterAll(async () => t.close());

  test('an invite link lets a person choose a password and signs them in; the link then shows it is no longer valid', async () => {
    const { email, token } = await invite(t, gallery.entityId, 'editor');
    const browser = new ConsoleSession(base);
    const form = await browser.get(`/console/invite/${token}`);
    expect(form.status).toBe(200);
    expect(form.text).toContain(email);
    const short = await browser.post(`/console/invite/${token}`, { password: 'too short' });
    expect(short.status).toBe(400);
    expect(short.text).toContain('at least 12 characters');
    const set = await browser.post(`/console/invite/${token}`, { password: PASSWORD });
    expect(set.status).toBe(303);
    expect(set.location).toBe('/console');
    const overview = await browser.get('/console');
    expect(overview.status).toBe(200);
    expect(overview.text).toContain('Overview');
    expect(overview.text).toContain('Galerie Konsole');
    const again = await new ConsoleSession(base).get(`/console/invite/${token}`);
    expect(again.status).toBe(410);
    expect(again.text).toContain('no longer valid');
  });

  test('a page without a session sends the browser to the sign-in page', async () => {
    const answer = await new ConsoleSession(base).get('/console?x=1');
    expect(answer.status).toBe(303);
    expect(answer.location).toBe('/console/sign-in?next=%2Fconsole%3Fx%3D1');
  });

  test('signing out ends the session: its cookie no longer opens a page', async () => {
    const user = await signedIn(t, base, gallery.entityId, 'viewer');
    const stolen = user.cookies.get('console_session')!;
    expect((await user.post('/console/sign-out')).location).toBe('/console/sign-in');
    const replay = new ConsoleSession(base);
    replay.cookies.set('console_session', stolen);
    expect((await replay.get('/console')).status).toBe(303);
  });
});
