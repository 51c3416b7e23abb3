import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

const PROFILE_FIELDS = [
  'default_currency', 'description', 'external_url', 'ical_url', 'id', 'location_city', 'location_country', 'name', 'slug',
  'social_instagram', 'social_micro', 'social_photo', 'social_twitter', 'type',
];

async function fresh(name?: string) {
  const g = await tenant(t, name ? { name } : {});
  return { g, api: client(t, g.key) };
}

describe('GET /v1/profile', () => {
  test('returns every profile field of the entity bound to the key', async () => {
    const { g, api } = await fresh('Galerie Profil');
    const r = await api.get('/v1/profile');
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(PROFILE_FIELDS);
    expect(r.body).toEqual({
      id: g.entityId, type: 'gallery', name: 'Galerie Profil', slug: 'galerie-profil',
      description: null, external_url: null, ical_url: null,
      social_instagram: null, social_photo: null, social_twitter: null, social_micro: null,
      location_city: 'Berlin', location_country: 'DE', default_currency: null,
    });
  });

  test('an artist entity reports type artist', async () => {
    const g = await tenant(t, { type: 'artist', name: 'Some Painter' });
    const r = await client(t, g.key).get('/v1/profile');
    expect(r.body.type).toBe('artist');
    expect(r.body.slug).toBe('some-painter');
  });

  test('a second entity whose name has the same slug gets the -2 suffix', async () => {
    const first = await tenant(t, { name: 'Twin Gallery' });
    const second = await tenant(t, { name: 'Twin  Gallery!' });
    expect((await client(t, first.key).get('/v1/profile')).body.slug).toBe('twin-gallery');
    expect((await client(t, second.key).get('/v1/profile')).body.slug).toBe('twin-gallery-2');
  });
});

describe('PUT /v1/profile', () => {
  test('changes only the fields sent and answers 200 with updated: true', async () => {
    const { g, api } = await fresh();
    const first = await api.put('/v1/profile', {
      description: 'Contemporary painting since 1972.',
      external_url: 'https://gallery.example/',
      ical_url: 'https://gallery.example/events.ics',
    });
    expect(first.status).toBe(200);
    expect(first.body.updated).toBe(true);
    expect(first.body.id).toBe(g.entityId);
    expect(first.body.type).toBe('gallery');
    expect(typeof first.body.name).toBe('string');
    expect(first.body.description).toBe('Contemporary painting since 1972.');
    expect(first.body.external_url).toBe('https://gallery.example/');
    expect(first.body.ical_url).toBe('https://gallery.example/events.ics');

    const second = await api.put('/v1/profile', { description: 'New text.' });
    expect(second.status).toBe(200);
    expect(second.body.updated).toBe(true);
    expect(second.body.description).toBe('New text.');

    const profile = (await api.get('/v1/profile')).body;
    expect(profile.description).toBe('New text.');
    expect(profile.external_url).toBe('https://gallery.example/');
    expect(profile.ical_url).toBe('https://gallery.example/events.ics');
    expect(profile.social_instagram).toBeNull();
    expect(profile.social_twitter).toBeNull();
  });

  test('an empty body changes nothing and still answers 200', async () => {
    const { api } = await fresh();
    await api.put('/v1/profile', { description: 'Keep me' });
    const r = await api.put('/v1/profile', {});
    expect(r.status).toBe(200);
    expect(r.body.updated).toBe(true);
    expect((await api.get('/v1/profile')).body.description).toBe('Keep me');
  });

  test('social_photo is an alias of social_instagram and GET returns both with the same value', async () => {
    const { api } = await fresh();
    const r = await api.put('/v1/profile', { social_photo: 'https://photos.example/gallery' });
    expect(r.status).toBe(200);
    let profile = (await api.get('/v1/profile')).body;
    expect(profile.social_instagram).toBe('https://photos.example/gallery');
    expect(profile.social_photo).toBe('https://photos.example/gallery');

    await api.put('/v1/profile', { social_instagram: 'https://photos.example/other' });
    profile = (await api.get('/v1/profile')).body;
    expect(profile.social_instagram).toBe('https://photos.example/other');
    expect(profile.social_photo).toBe('https://photos.example/other');
    expect(profile.social_twitter).toBeNull();
  });

  test('social_micro is an alias of social_twitter and GET returns both with the same value', async () => {
    const { api } = await fresh();
    expect((await api.put('/v1/profile', { social_micro: 'https://micro.example/gallery' })).status).toBe(200);
    let profile = (await api.get('/v1/profile')).body;
    expect(profile.social_twitter).toBe('https://micro.example/gallery');
    expect(profile.social_micro).toBe('https://micro.example/gallery');

    await api.put('/v1/profile', { social_twitter: 'https://micro.example/other' });
    profile = (await api.get('/v1/profile')).body;
    expect(profile.social_twitter).toBe('https://micro.example/other');
    expect(profile.social_micro).toBe('https://micro.example/other');
    expect(profile.social_instagram).toBeNull();
  });

  test('sending both names of a social field with different values gets 400 and changes nothing', async () => {
    const { api } = await fresh();
    const photo = await api.put('/v1/profile', {
      social_instagram: 'https://photos.example/a', social_photo: 'https://photos.example/b', description: 'x',
    });
    expect(photo.status).toBe(400);
    expect(photo.body.error).toBe('bad_request');
    const micro = await api.put('/v1/profile', { social_twitter: 'https://micro.example/a', social_micro: 'https://micro.example/b' });
    expect(micro.status).toBe(400);
    expect(micro.body.error).toBe('bad_request');
    const profile = (await api.get('/v1/profile')).body;
    expect(profile.social_instagram).toBeNull();
    expect(profile.social_twitter).toBeNull();
    expect(profile.description).toBeNull();
  });

  test('sending both names of a social field with the same value is accepted', async () => {
    const { api } = await fresh();
    const r = await api.put('/v1/profile', { social_instagram: 'https://photos.example/a', social_photo: 'https://photos.example/a' });
    expect(r.status).toBe(200);
    expect((await api.get('/v1/profile')).body.social_instagram).toBe('https://photos.example/a');
  });

  test('"" and null both clear a field', async () => {
    const { api } = await fresh();
    await api.put('/v1/profile', {
      description: 'D', external_url: 'https://a.example/', ical_url: 'https://a.example/cal.ics',
      social_instagram: 'https://photos.example/a', social_twitter: 'https://micro.example/a',
    });
    const filled = (await api.get('/v1/profile')).body;
    expect(filled.description).toBe('D');
    expect(filled.external_url).toBe('https://a.example/');

    const r = await api.put('/v1/profile', { description: '', external_url: null, ical_url: '', social_photo: null, social_micro: '' });
    expect(r.status).toBe(200);
    const cleared = (await api.get('/v1/profile')).body;
    expect(cleared.description).toBeNull();
    expect(cleared.external_url).toBeNull();
    expect(cleared.ical_url).toBeNull();
    expect(cleared.social_instagram).toBeNull();
    expect(cleared.social_photo).toBeNull();
    expect(cleared.social_twitter).toBeNull();
    expect(cleared.social_micro).toBeNull();
  });

  test('read-only fields sent back are accepted and ignored', async () => {
    const { g, api } = await fresh('Readonly Gallery');
    const before = (await api.get('/v1/profile')).body;
    const r = await api.put('/v1/profile', {
      ...before,
      id: 999999, type: 'artist', name: 'Renamed', slug: 'renamed', location_city: 'Paris', location_country: 'FR',
      description: 'changed',
    });
    expect(r.status).toBe(200);
    const after = (await api.get('/v1/profile')).body;
    expect(after.id).toBe(g.entityId);
    expect(after.type).toBe('gallery');
    expect(after.name).toBe('Readonly Gallery');
    expect(after.slug).toBe('readonly-gallery');
    expect(after.location_city).toBe('Berlin');
    expect(after.location_country).toBe('DE');
    expect(after.description).toBe('changed');
  });

  test('the whole GET answer can be sent back unchanged', async () => {
    const { api } = await fresh();
    await api.put('/v1/profile', { description: 'Round trip', social_photo: 'https://photos.example/rt' });
    const before = (await api.get('/v1/profile')).body;
    const r = await api.put('/v1/profile', before);
    expect(r.status).toBe(200);
    expect((await api.get('/v1/profile')).body).toEqual(before);
  });

  test('an invalid URL gets 400 naming the field and changes nothing', async () => {
    const { api } = await fresh();
    for (const [field, value] of [
      ['external_url', 'not a url'],
      ['ical_url', 'javascript:alert(1)'],
      ['social_instagram', '/relative/path'],
      ['social_micro', 'ftp://micro.example/x'],
      ['external_url', 'data:text/html,hi'],
    ] as const) {
      const r = await api.put('/v1/profile', { [field]: value, description: 'should not be stored' });
      expect(r.status, `${field}=${value}`).toBe(400);
      expect(r.body.error).toBe('bad_request');
      expect(JSON.stringify(r.body.details ?? r.body.message)).toContain(field);
    }
    const profile = (await api.get('/v1/profile')).body;
    expect(profile.description).toBeNull();
    expect(profile.external_url).toBeNull();
  });

  test('an unknown field gets 400 naming it', async () => {
    const { api } = await fresh();
    const r = await api.put('/v1/profile', { description: 'x', favourite_colour: 'blue' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.message).toContain('favourite_colour');
    expect((await api.get('/v1/profile')).body.description).toBeNull();
  });

  test('a field of the wrong type gets 400', async () => {
    const { api } = await fresh();
    const r = await api.put('/v1/profile', { description: 42 });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
  });

  test('a body that is not an object gets 400', async () => {
    const { api } = await fresh();
    const r = await api.put('/v1/profile', ['description']);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
  });

  test('a PUT is recorded in the changelog as a profile update with old and new of the changed fields only', async () => {
    const { g, api } = await fresh();
    await api.put('/v1/profile', { description: 'Old text', external_url: 'https://same.example/' });
    const r = await api.put('/v1/profile', {
      description: 'New text', external_url: 'https://same.example/', social_photo: 'https://photos.example/p',
    });
    expect(r.status).toBe(200);

    const changes = (await api.get('/v1/changelog')).body.changes as any[];
    expect(changes).toHaveLength(2);
    const first = changes[0];
    expect(first.entity_type).toBe('profile');
    expect(first.entity_id).toBe(g.entityId);
    expect(first.action).toBe('update');
    expect(first.field_changes).toEqual({
      description: { old: null, new: 'Old text' },
      external_url: { old: null, new: 'https://same.example/' },
    });
    const last = changes[1];
    expect(last.entity_type).toBe('profile');
    expect(last.entity_id).toBe(g.entityId);
    expect(last.action).toBe('update');
    expect(last.source).toBe(`api:${g.prefix}`);
    expect(last.field_changes).toEqual({
      description: { old: 'Old text', new: 'New text' },
      social_instagram: { old: null, new: 'https://photos.example/p' },
    });
  });

  test('clearing a field is recorded with new: null', async () => {
    const { api } = await fresh();
    await api.put('/v1/profile', { ical_url: 'https://cal.example/x.ics' });
    await api.put('/v1/profile', { ical_url: '' });
    const changes = (await api.get('/v1/changelog')).body.changes as any[];
    expect(changes.at(-1).field_changes).toEqual({ ical_url: { old: 'https://cal.example/x.ics', new: null } });
  });

  test('a refused profile PUT is not recorded in the changelog', async () => {
    const { api } = await fresh();
    expect((await api.put('/v1/profile', { external_url: 'nope' })).status).toBe(400);
    expect((await api.put('/v1/profile', { unknown: 1 })).status).toBe(400);
    expect((await api.get('/v1/changelog')).body.total).toBe(0);
  });
});

describe('default_currency (docs/api.md, Profile)', () => {
  test('PUT sets it upper-cased, GET shows it, the change is one changelog entry; an unknown code is 400; null clears it', async () => {
    const { api } = await fresh();
    const put = await api.put('/v1/profile', { default_currency: 'chf' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ default_currency: 'CHF', updated: true });
    expect((await api.get('/v1/profile')).body.default_currency).toBe('CHF');
    const changes = (await api.get('/v1/changelog')).body.changes.filter((c: any) => c.entity_type === 'profile');
    expect(changes.at(-1).field_changes).toEqual({ default_currency: { old: null, new: 'CHF' } });
    const wrong = await api.put('/v1/profile', { default_currency: 'EURO' });
    expect(wrong.status).toBe(400);
    expect((await api.put('/v1/profile', { default_currency: null })).body.default_currency).toBeNull();
  });
});
