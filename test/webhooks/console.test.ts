import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { unseal } from '../../src/secrets/seal.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, type ConsoleSession } from '../support/console.js';
import { plainSecretsIn } from '../support/secrets-scan.js';

describe('the console\'s Webhooks page', { timeout: 120_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let owner: ConsoleSession;

  beforeAll(async () => {
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Haken' });
    owner = await signedIn(t, base, gallery.entityId, 'owner');
  }, 120_000);
  afterAll(async () => t.close());

  test('an owner adds an endpoint and sees its secret once, then the endpoint\'s page without it', async () => {
    const page = await owner.get('/console/webhooks');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="url">URL</label>');
    expect(page.text).toContain('Add endpoint');
    const refused = await owner.post('/console/webhooks', { url: 'ftp://erp.example/h', events: '*' });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('URL must be an https URL.');
    const added = await owner.request('POST', '/console/webhooks', new URLSearchParams([
      ['_csrf', owner.csrf], ['url', 'http://127.0.0.1:9/erp'], ['description', 'ERP'], ['events', 'artwork.created'], ['events', 'artwork.deleted'],
    ]));
    expect(added.status).toBe(200);
    const secret = /class="secret">(whsec_[^<]+)</.exec(added.text)?.[1];
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const [row] = await t.handle.db.selectFrom('webhook_endpoints').selectAll().where('owner_id', '=', gallery.entityId).execute();
    expect(row).toMatchObject({ url: 'http://127.0.0.1:9/erp', events: 'artwork.created artwork.deleted', description: 'ERP' });
    // Stored sealed (src/secrets/seal.ts): the shown secret is what the row opens to.
    expect(unseal(row!.secret)).toBe(secret);
    const again = await owner.get(`/console/webhooks/${row!.id}`);
    expect(again.status).toBe(200);
    expect(again.text).not.toContain(secret!);
    expect((await owner.get('/console/webhooks')).text).toContain('artwork.created, artwork.deleted');
  });

  test('send test, the log, Retry, disable and enable, roll', async () => {
    const api = client(t, gallery.key);
    const hook = (await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/other', events: ['*'] })).body;
    const path = `/console/webhooks/${hook.id}`;
    await owner.get(path);
    const tested = await owner.post(`${path}/test`);
    expect(tested.status).toBe(200);
    const id = /Test message (msg_[0-9a-f]{32}) is on its way/.exec(tested.text)?.[1];
    expect(id).toBeDefined();
    expect(tested.text).toContain(`<code>${id}</code>`);
    // The log names the message's type; it may break after its dot in a narrow column.
    expect(tested.text).toContain('<span class="dotted">webhook.<wbr>test</span>');
    const retried = await owner.post(`${path}/messages/${id}/retry`);
    expect(retried.text).toContain(`Message ${id} will be sent again now.`);
    const disabled = await owner.post(`${path}/enabled`, { enabled: 'false' });
    expect(disabled.text).toContain('disabled by the entity');
    expect((await api.get(`/v1/webhooks/${hook.id}`)).body.enabled).toBe(false);
    await owner.post(`${path}/enabled`, { enabled: 'true' });
    expect((await api.get(`/v1/webhooks/${hook.id}`)).body).toMatchObject({ enabled: true, disabled_reason: null });
    const rolled = await owner.post(`${path}/roll`, { expire_old_in: '7d' });
    expect(rolled.text).toContain('stops in 7 days');
    expect(rolled.text).toMatch(/class="secret">whsec_/);
    expect(rolled.text).not.toContain(hook.secret);
  });

  test('an editor may not see or change webhooks; another entity\'s endpoint is not found', async () => {
    const editor = await signedIn(t, base, gallery.entityId, 'editor');
    expect((await editor.get('/console/webhooks')).status).toBe(403);
    const other = await tenant(t);
    const theirs = (await client(t, other.key).post('/v1/webhooks', { url: 'http://127.0.0.1:9/x', events: ['*'] })).body;
    expect((await owner.get(`/console/webhooks/${theirs.id}`)).status).toBe(404);
    await owner.get('/console/webhooks');
    expect((await owner.post(`/console/webhooks/${theirs.id}/test`)).status).toBe(404);
  });

  test('after this file\'s keys, endpoints and secrets shown, the database holds no whole key or webhook secret (docs/operations.md, Secrets at rest)', async () => {
    expect(await plainSecretsIn(t)).toEqual([]);
  });
});
