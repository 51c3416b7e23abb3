import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, invite, PASSWORD } from '../support/console.js';

/**
 * No secret in any log line (docs/deploy.md, Logs): every console and API flow is run against a server
 * logging at debug level, every secret it handled is collected (API keys, invite tokens, passwords,
 * session ids, CSRF secrets and tokens), and the whole log is searched for each.
 */

describe('the server log holds no secret', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let log = '';
  const secrets = new Set<string>();

  beforeAll(async () => {
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        log += chunk.toString();
        done();
      },
    });
    t = await startApp({ LOG_LEVEL: 'debug' }, undefined, { logStream });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Logs', tier: 'partner' });
    secrets.add(gallery.key);
  }, 120_000);
  afterAll(async () => t.close());

  /** Every cookie and CSRF token a session was given. */
  const keepSecretsOf = (session: ConsoleSession) => {
    for (const value of session.cookies.values()) secrets.add(decodeURIComponent(value));
    if (session.csrf) secrets.add(session.csrf);
  };

  test('after every console and API flow, no secret the server handled is in its log', async () => {
    // API: reads and writes with the key in its header, then in a query string (which no route reads).
    const api = client(t, gallery.key);
    const artwork = await api.post('/v1/artworks', { title: 'Logged work', image_url: 'https://gallery.example/a.jpg' });
    expect(artwork.status).toBe(201);
    expect((await api.post('/v1/events', { title: 'Opening', start_date: '2030-01-01' })).status).toBe(201);
    for (const path of ['/v1/artworks', `/v1/artworks/${artwork.body.id}`, '/v1/events', '/v1/changelog', '/v1/profile']) await api.get(path);
    expect((await fetch(`${base}/v1/artworks?api_key=${gallery.key}&token=${gallery.key}`)).status).toBe(401);
    expect((await fetch(`${base}/v1/artworks`, { headers: { authorization: `Bearer ${gallery.key}x` } })).status).toBe(401);
    secrets.add(`${gallery.key}x`);

    // Console: an invite accepted (its token in the path), then sign-out, a wrong and a right sign-in.
    const { email, token } = await invite(t, gallery.entityId, 'owner');
    secrets.add(token);
    secrets.add(PASSWORD);
    const owner = new ConsoleSession(base);
    expect((await owner.get(`/console/invite/${token}`)).status).toBe(200);
    keepSecretsOf(owner);
    expect((await owner.post(`/console/invite/${token}`, { password: PASSWORD })).status).toBe(303);
    keepSecretsOf(owner);
    expect((await owner.get(`/console/invite/${token}`)).status).toBe(410);
    await owner.get('/console');
    keepSecretsOf(owner);
    expect((await owner.post('/console/sign-out')).status).toBe(303);
    const wrong = 'a wrong password of some length';
    secrets.add(wrong);
    expect((await owner.signIn(email, wrong)).status).toBe(401);
    expect((await owner.signIn(email)).status).toBe(303);
    keepSecretsOf(owner);

    // Pages, a record, an edit.
    for (const path of ['/console', '/console/artworks', `/console/artworks/${artwork.body.id}`, '/console/events', '/console/changelog', '/console/keys', '/console/people']) {
      expect((await owner.get(path)).status, path).toBe(200);
      keepSecretsOf(owner);
    }
    expect((await owner.post(`/console/artworks/${artwork.body.id}`, { title: 'Logged work, edited' })).status).toBeLessThan(500);

    // Keys: created, rolled (each shown once), revoked.
    const created = await owner.post('/console/keys', { tier: 'subscriber', scopes: 'artworks:read' });
    expect(created.status).toBe(200);
    const newKey = /<p class="secret">(ak_live_[A-Za-z0-9_-]+)<\/p>/.exec(created.text)![1]!;
    secrets.add(newKey);
    const prefix = [...created.text.matchAll(/\/console\/keys\/([^/"]+)\/roll/g)].map((m) => m[1]!).find((p) => newKey.startsWith(p))!;
    const rolledPage = await owner.post(`/console/keys/${prefix}/roll`, { expire_old_in: 'now' });
    expect(rolledPage.status).toBe(200);
    secrets.add(/<p class="secret">(ak_live_[A-Za-z0-9_-]+)<\/p>/.exec(rolledPage.text)![1]!);

    // People: an invite made in the console, its link opened by the invitee.
    const invited = await owner.post('/console/people', { email: `new-${Date.now()}@gallery.example`, role: 'editor' });
    expect(invited.status).toBe(200);
    const link = /\/console\/invite\/([A-Za-z0-9_-]+)/.exec(invited.text)![1]!;
    secrets.add(link);
    expect((await new ConsoleSession(base).get(`/console/invite/${link}`)).status).toBe(200);

    // Import: the upload form's CSRF token travels in its action's query string.
    const importPage = await owner.get('/console/import');
    const action = /action="(\/console\/import\?_csrf=[^"]+)"/.exec(importPage.text)![1]!.replace(/&amp;/g, '&');
    secrets.add(decodeURIComponent(/_csrf=([^&]+)/.exec(action)![1]!));
    const form = new FormData();
    form.append('kind', 'artworks');
    form.append('file', new Blob(['title,artist_name\nImported,Someone\n']), 'works.csv');
    const uploaded = await owner.request('POST', action, form);
    expect(uploaded.status).toBe(303);
    keepSecretsOf(owner);

    // A form whose CSRF token is wrong, and one sent from another site.
    expect((await owner.post('/console/people', { _csrf: 'forged-token-value', email: 'x@y.example', role: 'viewer' })).status).toBe(403);
    await owner.get('/console');
    expect((await owner.post('/console/sign-out')).status).toBe(303);

    // The log was written (the test would pass on an empty one otherwise), at debug level, with the invite's path.
    expect(log).toContain('"msg":"request completed"');
    expect(log).toContain('/console/invite/redacted');
    expect(log).toContain('/console/import?_csrf=redacted');
    expect(secrets.size).toBeGreaterThan(8);
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(8);
      expect(log.includes(secret), `the log holds ${secret.slice(0, 12)}…: ${log.split("\n").find((line) => line.includes(secret))}`).toBe(false);
    }
  });
});
