import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from './helpers.js';

let t: TestApp;
beforeAll(async () => { t = await startApp(); });
afterAll(async () => { await t.close(); });

test('smoke', async () => {
  const g = await tenant(t);
  const api = client(t, g.key);
  const r1 = await api.post('/v1/artworks', { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990, price: 100 });
  console.log(r1.status, r1.body, r1.headers);
  const r2 = await api.post('/v1/artworks', { title: 'abstract painting!', artist_name: 'Gerhard Richter', creation_year: 1990, price: 200, foo: 1, currency: 'eur' });
  console.log(r2.status, r2.body);
  const r3 = await api.post('/v1/artworks', { title: 'abstract painting!', artist_name: 'Gerhard Richter', creation_year: 1990, price: 200, currency: 'eur', image_url: 'javascript:alert(1)' });
  console.log(r3.status, r3.body);
  console.log((await api.get('/v1/artworks')).body);
  console.log((await api.get('/v1/artworks/1')).body);
  console.log((await api.get('/v1/artworks/abc')).body);
  console.log((await api.put('/v1/artworks/1', { price: null, availability: 'sold' })).body);
  console.log(JSON.stringify((await api.get('/v1/changelog')).body, null, 1));
  console.log((await api.get('/v1/sync/status')).body);
  console.log((await api.get('/v1/me')).body);
  console.log((await api.get('/v1/nope')).status, (await client(t).get('/v1/nope')).body);
  console.log((await api.post('/v1/events', { title: 'Summer Show', start_date: '2027-02-30' })).body);
  console.log((await api.post('/v1/events', { title: 'Summer Show', start_date: '2027-02-03', location_country: 'de' })).body);
  console.log((await api.get('/v1/events?upcoming=1')).body);
  console.log((await api.put('/v1/profile', { social_photo: 'https://insta.example/x', description: 'hi' })).body);
  console.log((await api.post('/v1/artworks', '{bad')).body);
  console.log((await api.post('/v1/artworks', 'x', { 'content-type': 'text/plain' })).body);
  console.log((await client(t).get('/v1/artworks')).body);
  expect(r1.status).toBe(201);
});
