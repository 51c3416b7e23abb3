import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

// Each user's password is hashed with scrypt (~0.3 s on an idle core): limits for a shared machine.
import { sha256 } from '../../src/domain/passwords.js';
import { createEntity, setPaused } from '../../src/store/entities.js';
import { endSessionsOfEntity, failureKey, recordFailure, removeUser } from '../../src/store/users.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, PASSWORD, invite, signedIn } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { startReceiver } from '../support/webhook-receiver.js';

/** A page's text with its per-request CSRF token blanked: two answers compared for sameness. */
const withoutToken = (text: string) => text.replace(/name="_csrf" value="[^"]+"/g, 'name="_csrf" value=""');

describe('console security', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let artworkId: number;
  let editor: ConsoleSession & { email: string };

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Sicher' });
    artworkId = (await client(t, gallery.key).post('/v1/artworks', { title: 'Guarded Work', price: 100 })).body.id;
    editor = await signedIn(t, base, gallery.entityId, 'editor');
  }, 120_000);
  afterAll(async () => t.close());

  const price = async () => (await client(t, gallery.key).get(`/v1/artworks/${artworkId}`)).body.price;

  test('the session cookie is HttpOnly, SameSite=Lax, Path=/ and not Secure over http', async () => {
    const { email } = await invite(t, gallery.entityId, 'viewer');
    const browser = new ConsoleSession(base);
    const { token } = await invite(t, gallery.entityId, 'viewer', email);
    await browser.get(`/console/invite/${token}`);
    const response = await fetch(`${base}/console/invite/${token}`, {
      method: 'POST', redirect: 'manual', headers: { cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body: new URLSearchParams({ _csrf: browser.csrf, password: PASSWORD }),
    });
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('console_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    const id = /^console_session=([^;]+)/.exec(cookie)![1]!;
    // Only the id's hash is stored.
    const rows = await sql<{ id_hash: string }>`select id_hash from sessions`.execute(t.handle.db);
    expect(rows.rows.map((r) => r.id_hash)).toContain(sha256(id));
    expect(rows.rows.map((r) => r.id_hash)).not.toContain(id);
  });

  test('a session id planted before sign-in is replaced at sign-in and then opens nothing (fixation)', async () => {
    const attacker = await signedIn(t, base, gallery.entityId, 'viewer');
    const planted = attacker.cookies.get('console_session')!;
    const victim = new ConsoleSession(base);
    victim.cookies.set('console_session', planted);
    const { email, token } = await invite(t, gallery.entityId, 'owner');
    await victim.get(`/console/invite/${token}`);
    await victim.post(`/console/invite/${token}`, { password: PASSWORD });
    await victim.post('/console/sign-out');
    const signed = await victim.signIn(email);
    expect(signed.status).toBe(303);
    const fresh = victim.cookies.get('console_session')!;
    expect(fresh).not.toBe(planted);
    const replay = new ConsoleSession(base);
    replay.cookies.set('console_session', planted);
    expect((await replay.get('/console/keys')).status).toBe(303);
    expect((await victim.get('/console/keys')).status).toBe(200);
  });

  test('a form post without a CSRF token, with a wrong one, with another browser\'s, or from another origin gets 403 and changes nothing', async () => {
    const before = await price();
    const other = await signedIn(t, base, gallery.entityId, 'editor');
    await editor.get(`/console/artworks/${artworkId}`);
    const attempts = [
      editor.request('POST', `/console/artworks/${artworkId}`, new URLSearchParams({ title: 'Guarded Work', price: '1' })),
      editor.post(`/console/artworks/${artworkId}`, { _csrf: 'forged-token', title: 'Guarded Work', price: '2' }),
      editor.post(`/console/artworks/${artworkId}`, { _csrf: other.csrf, title: 'Guarded Work', price: '3' }),
      editor.post(`/console/artworks/${artworkId}`, { title: 'Guarded Work', price: '4' }, { origin: 'https://evil.example' }),
      editor.post(`/console/artworks/${artworkId}/delete`, { _csrf: '' }),
    ];
    for (const answer of await Promise.all(attempts)) {
      expect(answer.status).toBe(403);
      expect(answer.text).toMatch(/expired or was not sent from the console|sent from another site/);
    }
    expect(await price()).toBe(before);
    // The same form with its token goes through.
    expect((await editor.post(`/console/artworks/${artworkId}`, { title: 'Guarded Work', price: '150' })).status).toBe(303);
    expect(await price()).toBe(150);
  });

  test('sign-in answers the same status and text for an unknown email, a wrong password and a locked email', async () => {
    const locked = await signedIn(t, base, gallery.entityId, 'viewer');
    // The lock itself is the next test's subject (through HTTP); here it is made as a tenth failure makes it.
    for (let i = 0; i < 10; i++) await recordFailure(t.handle.db, failureKey(locked.email, '127.0.0.1'));
    const answers = await Promise.all([
      new ConsoleSession(base).signIn('nobody@nowhere.example', 'whatever password'),
      new ConsoleSession(base).signIn(editor.email, 'not the password'),
      new ConsoleSession(base).signIn(locked.email, PASSWORD),
    ]);
    expect(answers.map((a) => a.status)).toEqual([401, 401, 401]);
    expect(new Set(answers.map((a) => withoutToken(a.text))).size).toBe(1);
    expect(answers.every((a) => !a.headers.getSetCookie().some((c) => c.startsWith('console_session=')))).toBe(true);
  });

  test('ten failures within 15 minutes lock an email, known or not, from that address, for 15 minutes', { timeout: 120_000 }, async () => {
    const user = await signedIn(t, base, gallery.entityId, 'viewer');
    const unknown = 'ghost@nowhere.example';
    // The subject is the lock of an email; the address's own limit (20 attempts) is reset between, as its window's end would.
    const newWindow = () => sql`delete from sign_in_addresses`.execute(t.handle.db);
    // Four at once, as many as the process hashes at once (more could wait past their turn and answer 503).
    const fail = async (email: string) => {
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => new ConsoleSession(base).signIn(email, `wrong ${i} password`)));
      expect(answers.map((a) => a.status)).toEqual([401, 401, 401, 401]);
    };
    await newWindow();
    await fail(user.email);
    expect((await new ConsoleSession(base).signIn(user.email, 'wrong again, once more')).status).toBe(401);
    await fail(unknown);
    await fail(user.email);
    await newWindow();
    await fail(unknown);
    await fail(user.email);
    await fail(unknown);
    // Thirteen failures of the user (ten would do): the right password is refused now.
    expect((await new ConsoleSession(base).signIn(user.email)).status).toBe(401);
    const lock = await sql<{ locked_until: string | null }>`select locked_until from login_failures where email_hash = ${failureKey(unknown, '127.0.0.1')}`.execute(t.handle.db);
    expect(Date.parse(lock.rows[0]!.locked_until!)).toBeGreaterThan(Date.now() + 14 * 60_000);
    // The lock ends after 15 minutes.
    await sql`update login_failures set locked_until = ${new Date(Date.now() - 1000).toISOString()} where email_hash = ${failureKey(user.email, '127.0.0.1')}`.execute(t.handle.db);
    expect((await new ConsoleSession(base).signIn(user.email)).status).toBe(303);
  });

  test('a viewer finds no edit controls, and forcing an editor\'s or owner\'s post gets 403 and changes nothing', async () => {
    const viewer = await signedIn(t, base, gallery.entityId, 'viewer');
    const page = await viewer.get(`/console/artworks/${artworkId}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain('Save changes');
    expect(page.text).not.toContain('/delete"');
    expect(page.text).not.toContain('href="/console/keys"');
    const before = await price();
    for (const answer of [
      await viewer.post(`/console/artworks/${artworkId}`, { title: 'Guarded Work', price: '9' }),
      await viewer.post(`/console/artworks/${artworkId}/delete`),
      await viewer.post('/console/keys', { tier: 'subscriber', scopes: 'artworks:read' }),
      await viewer.post('/console/people', { email: 'x@y.example', role: 'owner' }),
    ]) {
      expect(answer.status).toBe(403);
      expect(answer.text).toContain('needs the');
    }
    expect(await price()).toBe(before);
    expect((await viewer.get('/console/keys')).status).toBe(403);
    // An editor may edit but not manage keys or people.
    expect((await editor.post('/console/keys', { tier: 'subscriber', scopes: 'artworks:read' })).status).toBe(403);
    expect((await editor.get('/console/people')).status).toBe(403);
    const keys = await sql<{ n: number }>`select count(*) as n from api_keys where entity_id = ${gallery.entityId}`.execute(t.handle.db);
    expect(Number(keys.rows[0]!.n)).toBe(1);
  });

  test('another entity\'s records answer 404 to read, edit and delete, as in the API', async () => {
    const other = await tenant(t, { name: 'Fremde Galerie' });
    const foreignArtwork = (await client(t, other.key).post('/v1/artworks', { title: 'Not Yours', price: 5 })).body.id;
    const foreignEvent = (await client(t, other.key).post('/v1/events', { title: 'Not Yours Either' })).body.id;
    for (const answer of [
      await editor.get(`/console/artworks/${foreignArtwork}`),
      await editor.post(`/console/artworks/${foreignArtwork}`, { title: 'Stolen', price: '0' }),
      await editor.post(`/console/artworks/${foreignArtwork}/delete`),
      await editor.get(`/console/events/${foreignEvent}`),
      await editor.post(`/console/events/${foreignEvent}/delete`),
      await editor.get('/console/artworks/abc'),
      await editor.get('/console/artworks/99999999999'),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.text).not.toContain('Not Yours');
    }
    const still = await client(t, other.key).get(`/v1/artworks/${foreignArtwork}`);
    expect(still.body).toMatchObject({ title: 'Not Yours', price: 5 });
    expect((await editor.get(`/console/changelog?kind=artwork&record=${foreignArtwork}`)).text).toContain('No changes match.');
  });

  test('removing a user or pausing the entity ends its sessions at once', async () => {
    const leaving = await signedIn(t, base, gallery.entityId, 'editor');
    expect((await leaving.get('/console')).status).toBe(200);
    await removeUser(t.handle.db, leaving.email);
    expect((await leaving.get('/console')).status).toBe(303);

    const paused = await createEntity(t.handle.db, { type: 'gallery', name: 'Pausierte Galerie' });
    const staff = await signedIn(t, base, paused.id, 'owner');
    const other = await signedIn(t, base, paused.id, 'viewer');
    expect((await staff.get('/console')).status).toBe(200);
    // The guard refuses a paused entity's session on the next request; the pause command also deletes them.
    await setPaused(t.handle.db, paused.id, true);
    expect((await staff.get('/console')).status).toBe(303);
    expect((await staff.signIn(staff.email)).status).toBe(401);
    await endSessionsOfEntity(t.handle.db, paused.id);
    await setPaused(t.handle.db, paused.id, false);
    expect((await other.get('/console')).status).toBe(303);
  });

  test('a session idle for 12 hours or older than 14 days is over', async () => {
    // The file's earlier sign-ins, all from 127.0.0.1, used up that address's 20 attempts per 15 minutes
    // (docs/console.md): this test is about sessions, so it starts the address's window afresh.
    await sql`delete from sign_in_addresses`.execute(t.handle.db);
    const idle = await signedIn(t, base, gallery.entityId, 'viewer');
    const old = await signedIn(t, base, gallery.entityId, 'viewer');
    const hash = (s: ConsoleSession) => sha256(s.cookies.get('console_session')!);
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    await sql`update sessions set last_seen_at = ${ago(12 * 3_600_000 + 60_000)} where id_hash = ${hash(idle)}`.execute(t.handle.db);
    await sql`update sessions set created_at = ${ago(14 * 86_400_000 + 60_000)} where id_hash = ${hash(old)}`.execute(t.handle.db);
    expect((await idle.get('/console')).status).toBe(303);
    expect((await old.get('/console')).status).toBe(303);
  });

  test('every console page is refused to frames (clickjacking) and allows no inline script', async () => {
    for (const path of ['/console/sign-in', '/console', '/console/artworks', `/console/artworks/${artworkId}`, '/console/events', '/console/changelog']) {
      const answer = path === '/console/sign-in' ? await new ConsoleSession(base).get(path) : await editor.get(path);
      expect(answer.status).toBe(200);
      const csp = answer.headers.get('content-security-policy')!;
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toMatch(/script-src 'self'(;|$)/);
      expect(csp).not.toContain('unsafe-inline');
    }
  });
});

describe('console security: stored XSS', { timeout: 120_000 }, () => {
  const PAYLOAD = '<script>alert(1)</script><img src=x onerror=alert(2)>"\'`';
  let t: TestApp;
  let base: string;

  beforeAll(async () => {
    t = await startApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => t.close());

  test('text from every field is escaped on every console page', async () => {
    const gallery = await tenant(t, { name: `Galerie ${PAYLOAD}` });
    const api = client(t, gallery.key);
    const url = 'https://x.example/a"><script>alert(3)</script>';
    const artwork = await api.post('/v1/artworks', {
      title: `Work ${PAYLOAD}`, artist_name: `Artist ${PAYLOAD}`, medium: PAYLOAD, dimensions: PAYLOAD, description: PAYLOAD,
      external_id: `ID ${PAYLOAD}`.slice(0, 100), image_url: url, external_url: url, availability: 'available',
    });
    expect(artwork.status).toBe(201);
    const event = await api.post('/v1/events', { title: `Show ${PAYLOAD}`, description: PAYLOAD, location_city: PAYLOAD, external_url: url, image_url: url, ical_url: url });
    expect(event.status).toBe(201);
    await api.put(`/v1/artworks/${artwork.body.id}`, { medium: `${PAYLOAD} again` });
    const owner = await signedIn(t, base, gallery.entityId, 'owner');
    const pages = [
      '/console', '/console/artworks', `/console/artworks?q=${encodeURIComponent(PAYLOAD)}`, `/console/artworks/${artwork.body.id}`,
      '/console/events', `/console/events/${event.body.id}`, '/console/changelog', '/console/keys', '/console/people',
    ];
    for (const path of pages) {
      const page = await owner.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toMatch(/<script>alert|<img src=x|onerror=alert\(2\)>|"><script/);
      expect(page.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    }
    const record = await owner.get(`/console/artworks/${artwork.body.id}`);
    expect(record.text).toContain('&#60;script&#62;alert(1)&#60;/script&#62;');
  });
});

// A feed's file and a webhook's receiver belong to whoever the gallery names, or to whoever took them over: the
// column names and cells of the one, the answers of the other are shown on the Feeds and Webhooks pages.
describe('console security: text from a feed\'s file and a webhook receiver\'s answers', { timeout: 120_000 }, () => {
  // No quotes: a CSV cell holds it as it is.
  const MARKUP = '<script>alert(4)</script><img src=x onerror=alert(5)>';
  let t: TestApp;
  let base: string;
  let files: FileServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    files = await fileServer();
    receiver = await startReceiver(() => ({ status: 500, body: `${MARKUP}"><script>alert(6)</script>`, headers: { 'content-type': 'text/html' } }));
    // Feed runs are driven by the test (runFeed, as the feed's job does); webhook messages by the app's job runner.
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await files?.close();
    await receiver?.close();
  });

  test('column names, cells and a receiver\'s answer are escaped on the Feeds and Webhooks pages', async () => {
    const gallery = await tenant(t, { name: 'Galerie Fremdtext' });
    const api = client(t, gallery.key);
    files.set('/bestand.csv', csv(`Inventar;Titel;Jahr;${MARKUP}`, `K1;Mohn;${MARKUP};x`, `K2;${MARKUP};1990;y`));
    const feed = await api.post('/v1/feeds', { url: files.url('/bestand.csv'), kind: 'artworks', mapping: { Inventar: 'external_id', Titel: 'title', Jahr: 'creation_year' } });
    expect(feed.status).toBe(201);
    await runFeed({ db: t.handle.db, fetch: t.app.feedFetch }, feed.body.id);
    // The run did show the stranger's text: the unknown column (left out when the feed read its file), the refused cell, the title.
    const run = (await api.get(`/v1/feeds/${feed.body.id}`)).body.last_run;
    expect(feed.body.unmapped_columns).toEqual([MARKUP]);
    expect(run.counts).toMatchObject({ created: 1, refused: 1 });

    const hook = await api.post('/v1/webhooks', { url: `${receiver.url}/hook`, description: `ERP ${MARKUP}`, events: ['*'] });
    expect(hook.status).toBe(201);
    expect((await api.post('/v1/artworks', { title: 'Bell', external_id: 'B1' })).status).toBe(201);
    await expect.poll(async () => (await t.handle.db.selectFrom('webhook_attempts').select('response').execute()).length, { timeout: 20_000 }).toBeGreaterThan(0);

    const owner = await signedIn(t, base, gallery.entityId, 'owner');
    const pages = ['/console/feeds', '/console/webhooks', `/console/webhooks/${hook.body.id}`, '/console/artworks', '/console/changelog'];
    for (const path of pages) {
      const page = await owner.get(path);
      expect(page.status, path).toBe(200);
      expect(page.text, path).not.toMatch(/<script>alert|<img src=x|onerror=alert\(5\)>|"><script/);
    }
    // Shown, as text: the unknown column on the Feeds page, the receiver's answer in the endpoint's log.
    expect((await owner.get('/console/feeds')).text).toContain('&#60;script&#62;alert(4)&#60;/script&#62;');
    expect((await owner.get(`/console/webhooks/${hook.body.id}`)).text).toContain('&#60;script&#62;alert(6)');
  });

  test('a Feeds or Webhooks form post without the CSRF token, with a forged one, or from another site gets 403 and changes nothing', async () => {
    const gallery = await tenant(t, { name: 'Galerie Formen' });
    const api = client(t, gallery.key);
    const feed = (await api.post('/v1/feeds', { url: files.url('/bestand.csv'), kind: 'artworks' })).body;
    const hook = (await api.post('/v1/webhooks', { url: `${receiver.url}/formen`, events: ['*'] })).body;
    const state = async () => ({
      feeds: (await api.get('/v1/feeds')).body.feeds.map((f: { id: number; paused: boolean }) => [f.id, f.paused]),
      hooks: await t.handle.db.selectFrom('webhook_endpoints').select(['id', 'url', 'secret', 'enabled']).where('owner_id', '=', gallery.entityId).execute(),
    });
    const before = await state();
    const owner = await signedIn(t, base, gallery.entityId, 'owner');
    await owner.get('/console/webhooks');
    const forms: Array<[string, Record<string, string>]> = [
      ['/console/feeds/connect', { url: files.url('/bestand.csv'), kind: 'artworks' }],
      [`/console/feeds/${feed.id}/pause`, {}],
      [`/console/feeds/${feed.id}/delete`, {}],
      ['/console/webhooks', { url: `${receiver.url}/evil`, events: '*' }],
      [`/console/webhooks/${hook.id}`, { url: `${receiver.url}/evil`, events: '*' }],
      [`/console/webhooks/${hook.id}/roll`, { expire_old_in: 'now' }],
      [`/console/webhooks/${hook.id}/delete`, {}],
    ];
    for (const [path, fields] of forms) {
      const answers = await Promise.all([
        owner.request('POST', path, new URLSearchParams(fields)),
        owner.post(path, { ...fields, _csrf: 'forged-token' }),
        owner.post(path, fields, { origin: 'https://evil.example' }),
      ]);
      expect(answers.map((a) => a.status), path).toEqual([403, 403, 403]);
    }
    expect(await state()).toEqual(before);
    // With its token the same form goes through.
    const deleted = await owner.post(`/console/webhooks/${hook.id}/delete`, {});
    expect(deleted.status).toBe(200);
    expect(deleted.text).toContain('Endpoint deleted.');
    expect((await state()).hooks).toEqual([]);
  });
});
