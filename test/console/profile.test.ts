import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { type ConsoleSession, signedIn } from '../support/console.js';

/** docs/console.md, Profile: editors and owners edit the profile's writable fields, the default currency among them. */

describe('the console\'s Profile page', { timeout: 120_000 }, () => {
  let t: TestApp;
  let gallery: Tenant;
  let editor: ConsoleSession;
  let viewer: ConsoleSession;

  beforeAll(async () => {
    t = await startApp();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Profil' });
    editor = await signedIn(t, base, gallery.entityId, 'editor');
    viewer = await signedIn(t, base, gallery.entityId, 'viewer');
  }, 120_000);
  afterAll(async () => t.close());

  test('an editor sets the default currency (any case) and the website; the API shows them, the change recorded as the console user', async () => {
    const page = await editor.get('/console/profile');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="default_currency">Default currency</label>');
    expect(page.text).toContain('href="/console/profile" aria-current="page"');
    const saved = await editor.post('/console/profile', { default_currency: 'chf', external_url: 'https://galerie.example', description: '' });
    expect(saved.status).toBe(200);
    expect(saved.text).toContain('Saved.');
    expect(saved.text).toMatch(/id="default_currency"[^>]*value="CHF"/);
    const profile = (await client(t, gallery.key).get('/v1/profile')).body;
    expect(profile).toMatchObject({ default_currency: 'CHF', external_url: 'https://galerie.example', description: null });
    const change = (await client(t, gallery.key).get('/v1/changelog')).body.changes.filter((c: any) => c.entity_type === 'profile').at(-1);
    expect(change.source).toMatch(/^console:\d+$/);
    expect(change.field_changes).toMatchObject({ default_currency: { old: null, new: 'CHF' } });
  });

  test('an unknown currency is refused on the form, nothing changed; a viewer may not see the page', async () => {
    const refused = await editor.post('/console/profile', { default_currency: 'EURO', external_url: 'https://galerie.example' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Default currency: must be an ISO 4217 currency code, e.g. EUR');
    expect((await client(t, gallery.key).get('/v1/profile')).body.default_currency).toBe('CHF');
    expect((await viewer.get('/console/profile')).status).toBe(403);
    expect((await viewer.get('/console')).text).not.toContain('href="/console/profile"');
  });
});
