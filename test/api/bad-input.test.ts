import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Reply, type TestApp } from '../helpers.js';

/**
 * Bad input never gives a 500 and never changes data (docs/api.md, Requests and validation): every refusal is a 4xx with
 * `error` and `message` (validation errors add `details`), and the catalog and changelog stay as they were.
 */

let t: TestApp;
let api: ReturnType<typeof client>;
let seedArtworkId: number;
let seedEventId: number;
let initial: Snapshot;

const SEED_ARTWORK = {
  title: 'Seed Work', artist_name: 'Seed Artist', creation_year: 2000, price: 100, currency: 'EUR', medium: 'Oil',
  availability: 'available', image_url: 'https://img.example/seed.jpg',
};
/** The identity of the seed artwork: a bad POST carrying it would merge into the seed if it got through. */
const SEED_ID = { title: SEED_ARTWORK.title, artist_name: SEED_ARTWORK.artist_name, creation_year: SEED_ARTWORK.creation_year };
const SEED_EVENT = { title: 'Seed Event', start_date: '2030-01-10', end_date: '2030-01-20', location_country: 'DE', location_city: 'Berlin' };

const NEXT_YEAR = new Date().getUTCFullYear() + 1;
const MIB = 1024 * 1024;

interface Snapshot {
  artworks: unknown;
  artwork: unknown;
  events: unknown;
  event: unknown;
  changelog: unknown;
  sync: unknown;
}

async function snapshot(): Promise<Snapshot> {
  const [artworks, artwork, events, event, changelog, sync] = await Promise.all([
    api.get('/v1/artworks?limit=100'),
    api.get(`/v1/artworks/${seedArtworkId}`),
    api.get('/v1/events?limit=100'),
    api.get(`/v1/events/${seedEventId}`),
    api.get('/v1/changelog?limit=1000'),
    api.get('/v1/sync/status'),
  ]);
  for (const r of [artworks, artwork, events, event, changelog, sync]) expect(r.status).toBe(200);
  return { artworks: artworks.body, artwork: artwork.body, events: events.body, event: event.body, changelog: changelog.body, sync: sync.body };
}

beforeAll(async () => {
  // A generous limit so that rate limiting never interferes with these tests (it has tests of its own).
  t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
  const g = await tenant(t, { name: 'Bad Input Gallery' });
  api = client(t, g.key);
  const artwork = await api.post('/v1/artworks', SEED_ARTWORK);
  const event = await api.post('/v1/events', SEED_EVENT);
  if (artwork.status !== 201 || event.status !== 201) throw new Error('seeding failed');
  seedArtworkId = artwork.body.id;
  seedEventId = event.body.id;
  initial = await snapshot();
});
afterAll(async () => { await t.close(); });

interface Case {
  name: string;
  method: 'POST' | 'PUT' | 'GET';
  /** `:artwork` and `:event` stand for the seed records' ids. */
  url: string;
  /** An object is sent as JSON; a string is sent as the raw body. */
  body?: unknown;
  headers?: Record<string, string>;
  status: number;
  error: string;
  /** For validation errors: a field that `details` must name (`true`: details must be present, field unspecified). */
  field?: string | true;
}

const BAD_URLS = ['javascript:alert(1)', 'data:text/html,x', '/relative', 'ftp://x', 'not a url'];
const bad = (name: string, method: Case['method'], url: string, body: unknown, field: string | true): Case =>
  ({ name, method, url, body, status: 400, error: 'bad_request', field });

const artworkCases: Case[] = [
  bad('creation_year sent as the string "1990"', 'POST', '/v1/artworks', { ...SEED_ID, creation_year: '1990' }, 'creation_year'),
  bad('a fractional creation_year 1990.5', 'POST', '/v1/artworks', { ...SEED_ID, creation_year: 1990.5 }, 'creation_year'),
  bad('price 1.5', 'POST', '/v1/artworks', { ...SEED_ID, price: 1.5 }, 'price'),
  bad('price -1', 'POST', '/v1/artworks', { ...SEED_ID, price: -1 }, 'price'),
  bad('price sent as the string "100"', 'POST', '/v1/artworks', { ...SEED_ID, price: '100' }, 'price'),
  bad('title sent as the number 5', 'POST', '/v1/artworks', { ...SEED_ID, title: 5 }, 'title'),
  bad('a missing title', 'POST', '/v1/artworks', { artist_name: 'Seed Artist', creation_year: 2000, price: 5 }, 'title'),
  bad('an empty title', 'POST', '/v1/artworks', { ...SEED_ID, title: '' }, 'title'),
  bad('a whitespace-only title', 'POST', '/v1/artworks', { ...SEED_ID, title: '   \t  ' }, 'title'),
  bad('a title of 501 characters', 'POST', '/v1/artworks', { ...SEED_ID, title: 'a'.repeat(501) }, 'title'),
  bad('a title sent as null', 'POST', '/v1/artworks', { ...SEED_ID, title: null }, 'title'),
  bad('a description of 20,001 characters', 'POST', '/v1/artworks', { ...SEED_ID, description: 'd'.repeat(20_001) }, 'description'),
  bad('a medium of 1,001 characters', 'POST', '/v1/artworks', { ...SEED_ID, medium: 'm'.repeat(1001) }, 'medium'),
  bad('dimensions of 1,001 characters', 'POST', '/v1/artworks', { ...SEED_ID, dimensions: 'x'.repeat(1001) }, 'dimensions'),
  bad('an artist_name of 1,001 characters', 'POST', '/v1/artworks', { ...SEED_ID, artist_name: 'n'.repeat(1001) }, 'artist_name'),
  ...BAD_URLS.map((u) => bad(`image_url ${JSON.stringify(u)}`, 'POST', '/v1/artworks', { ...SEED_ID, image_url: u }, 'image_url')),
  ...BAD_URLS.map((u) => bad(`external_url ${JSON.stringify(u)}`, 'POST', '/v1/artworks', { ...SEED_ID, external_url: u }, 'external_url')),
  bad('an image_url of 2,049 characters', 'POST', '/v1/artworks', { ...SEED_ID, image_url: `https://img.example/${'a'.repeat(2049 - 20)}` }, 'image_url'),
  bad('an unknown field', 'POST', '/v1/artworks', { ...SEED_ID, price: 5, frame_color: 'gold' }, 'frame_color'),
  bad('the unknown currency XYZ', 'POST', '/v1/artworks', { ...SEED_ID, currency: 'XYZ' }, 'currency'),
  bad('a currency of four letters', 'POST', '/v1/artworks', { ...SEED_ID, currency: 'EURO' }, 'currency'),
  bad('an unknown availability', 'POST', '/v1/artworks', { ...SEED_ID, availability: 'gone' }, 'availability'),
  bad('creation_year -3001', 'POST', '/v1/artworks', { ...SEED_ID, creation_year: -3001 }, 'creation_year'),
  bad(`creation_year ${NEXT_YEAR + 1} (the year after next)`, 'POST', '/v1/artworks', { ...SEED_ID, creation_year: NEXT_YEAR + 1 }, 'creation_year'),
  bad('several bad fields at once', 'POST', '/v1/artworks', { ...SEED_ID, price: -5, currency: 'XYZ' }, 'currency'),
];

const putUrl = '/v1/artworks/:artwork';
const artworkPutCases: Case[] = [
  bad('PUT price 1.5', 'PUT', putUrl, { price: 1.5 }, 'price'),
  bad('PUT price -1', 'PUT', putUrl, { price: -1 }, 'price'),
  bad('PUT title null', 'PUT', putUrl, { title: null, price: 5 }, 'title'),
  bad('PUT a whitespace-only title', 'PUT', putUrl, { title: '   ', price: 5 }, 'title'),
  bad('PUT a title of 501 characters', 'PUT', putUrl, { title: 'b'.repeat(501) }, 'title'),
  bad('PUT creation_year "1990"', 'PUT', putUrl, { creation_year: '1990' }, 'creation_year'),
  bad(`PUT creation_year ${NEXT_YEAR + 1}`, 'PUT', putUrl, { creation_year: NEXT_YEAR + 1 }, 'creation_year'),
  bad('PUT an unknown field', 'PUT', putUrl, { price: 5, frame_color: 'gold' }, 'frame_color'),
  bad('PUT image_url javascript:alert(1)', 'PUT', putUrl, { image_url: 'javascript:alert(1)' }, 'image_url'),
  bad('PUT the unknown currency XYZ', 'PUT', putUrl, { currency: 'XYZ' }, 'currency'),
  bad('PUT an unknown availability', 'PUT', putUrl, { availability: 'lost' }, 'availability'),
];

const eventCases: Case[] = [
  bad('an event without title', 'POST', '/v1/events', { start_date: '2030-01-01' }, 'title'),
  bad('an event with a whitespace-only title', 'POST', '/v1/events', { title: '  ' }, 'title'),
  bad('an event title of 501 characters', 'POST', '/v1/events', { title: 'e'.repeat(501) }, 'title'),
  bad('the unknown country ZZ', 'POST', '/v1/events', { title: SEED_EVENT.title, location_country: 'ZZ' }, 'location_country'),
  bad('a three-letter country DEU', 'POST', '/v1/events', { title: SEED_EVENT.title, location_country: 'DEU' }, 'location_country'),
  bad('the impossible date 2027-02-30', 'POST', '/v1/events', { title: SEED_EVENT.title, start_date: '2027-02-30' }, 'start_date'),
  bad('the unpadded date 2027-2-3', 'POST', '/v1/events', { title: SEED_EVENT.title, end_date: '2027-2-3' }, 'end_date'),
  bad('an end_date before the start_date', 'POST', '/v1/events', { title: SEED_EVENT.title, start_date: '2030-02-10', end_date: '2030-02-01' }, true),
  bad('an end_date before the stored start_date', 'POST', '/v1/events', { title: SEED_EVENT.title, end_date: '2030-01-01' }, true),
  bad('an unknown event_type', 'POST', '/v1/events', { title: SEED_EVENT.title, event_type: 'party' }, 'event_type'),
  bad('a location_city of 1,001 characters', 'POST', '/v1/events', { title: SEED_EVENT.title, location_city: 'c'.repeat(1001) }, 'location_city'),
  bad('an unknown event field', 'POST', '/v1/events', { title: SEED_EVENT.title, venue: 'Hall 1' }, 'venue'),
  ...BAD_URLS.map((u) => bad(`ical_url ${JSON.stringify(u)}`, 'POST', '/v1/events', { title: SEED_EVENT.title, ical_url: u }, 'ical_url')),
  bad('an event image_url data:text/html,x', 'POST', '/v1/events', { title: SEED_EVENT.title, image_url: 'data:text/html,x' }, 'image_url'),
  bad('an event external_url /relative', 'POST', '/v1/events', { title: SEED_EVENT.title, external_url: '/relative' }, 'external_url'),
];

const bodyCases: Case[] = [
  { name: 'malformed JSON', method: 'POST', url: '/v1/artworks', body: '{"title": "Seed Work", bad', status: 400, error: 'bad_request' },
  { name: 'JSON with a trailing comma', method: 'POST', url: '/v1/artworks', body: '{"title": "Seed Work",}', status: 400, error: 'bad_request' },
  { name: 'an empty JSON body', method: 'POST', url: '/v1/artworks', body: '', status: 400, error: 'bad_request' },
  { name: 'a JSON array body', method: 'POST', url: '/v1/artworks', body: JSON.stringify([SEED_ID]), status: 400, error: 'bad_request' },
  { name: 'a JSON string body', method: 'POST', url: '/v1/artworks', body: '"Seed Work"', status: 400, error: 'bad_request' },
  { name: 'a JSON number body', method: 'POST', url: '/v1/artworks', body: '42', status: 400, error: 'bad_request' },
  { name: 'a JSON null body', method: 'POST', url: '/v1/artworks', body: 'null', status: 400, error: 'bad_request' },
  {
    name: 'a Content-Type of text/plain', method: 'POST', url: '/v1/artworks', body: JSON.stringify(SEED_ID),
    headers: { 'content-type': 'text/plain' }, status: 415, error: 'unsupported_media_type',
  },
  {
    name: 'a form-encoded body', method: 'POST', url: '/v1/artworks', body: 'title=Seed+Work&price=5',
    headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, error: 'unsupported_media_type',
  },
  {
    name: 'a body over 1 MiB', method: 'POST', url: '/v1/artworks',
    body: JSON.stringify({ ...SEED_ID, description: 'x'.repeat(MIB + 10) }), status: 413, error: 'payload_too_large',
  },
  {
    name: 'a __proto__ key', method: 'POST', url: '/v1/artworks',
    body: '{"title": "Seed Work", "artist_name": "Seed Artist", "creation_year": 2000, "__proto__": {"price": 1}}', status: 400, error: 'bad_request',
  },
  {
    name: 'a top-level __proto__ object only', method: 'POST', url: '/v1/artworks',
    body: '{"__proto__": {"title": "Polluted"}}', status: 400, error: 'bad_request',
  },
  {
    name: 'a constructor.prototype key', method: 'POST', url: '/v1/artworks',
    body: '{"title": "Seed Work", "constructor": {"prototype": {"price": 1}}}', status: 400, error: 'bad_request',
  },
  { name: 'a PUT with malformed JSON', method: 'PUT', url: putUrl, body: '{"price": ', status: 400, error: 'bad_request' },
  { name: 'a PUT with a JSON array body', method: 'PUT', url: putUrl, body: '[{"price": 1}]', status: 400, error: 'bad_request' },
  {
    name: 'a PUT with Content-Type text/plain', method: 'PUT', url: putUrl, body: '{"price": 1}',
    headers: { 'content-type': 'text/plain' }, status: 415, error: 'unsupported_media_type',
  },
  { name: 'an event with malformed JSON', method: 'POST', url: '/v1/events', body: '{"title":', status: 400, error: 'bad_request' },
  {
    name: 'an event with Content-Type text/plain', method: 'POST', url: '/v1/events', body: '{"title": "Seed Event"}',
    headers: { 'content-type': 'text/plain' }, status: 415, error: 'unsupported_media_type',
  },
  {
    name: 'an event body over 1 MiB', method: 'POST', url: '/v1/events',
    body: JSON.stringify({ title: SEED_EVENT.title, description: 'x'.repeat(MIB + 10) }), status: 413, error: 'payload_too_large',
  },
];

const queryCases: Case[] = [
  { name: 'an artworks limit of abc', method: 'GET', url: '/v1/artworks?limit=abc', status: 400, error: 'bad_request' },
  { name: 'an artworks page of 0', method: 'GET', url: '/v1/artworks?page=0', status: 400, error: 'bad_request' },
  { name: 'an unknown availability filter', method: 'GET', url: '/v1/artworks?availability=lost', status: 400, error: 'bad_request' },
  { name: 'upcoming=yes', method: 'GET', url: '/v1/events?upcoming=yes', status: 400, error: 'bad_request' },
  { name: 'upcoming and past both true', method: 'GET', url: '/v1/events?upcoming=true&past=true', status: 400, error: 'bad_request' },
  { name: 'an invalid changelog since', method: 'GET', url: '/v1/changelog?since=yesterday', status: 400, error: 'bad_request' },
  { name: 'a non-numeric artwork id', method: 'GET', url: '/v1/artworks/abc', status: 404, error: 'not_found' },
  { name: 'a PUT to a non-numeric artwork id', method: 'PUT', url: '/v1/artworks/abc', body: { price: 1 }, status: 404, error: 'not_found' },
];

async function send(c: Case): Promise<Reply> {
  const url = c.url.replace(':artwork', String(seedArtworkId)).replace(':event', String(seedEventId));
  switch (c.method) {
    case 'GET': return api.get(url, c.headers);
    case 'PUT': return api.put(url, c.body, c.headers);
    case 'POST': return api.post(url, c.body, c.headers);
  }
}

function expectErrorShape(r: Reply, c: Case): void {
  expect(r.status, JSON.stringify(r.body)).toBe(c.status);
  expect(r.status).toBeGreaterThanOrEqual(400);
  expect(r.status).toBeLessThan(500);
  expect(typeof r.body).toBe('object');
  expect(r.body.error).toBe(c.error);
  expect(typeof r.body.message).toBe('string');
  expect(r.body.message.length).toBeGreaterThan(0);
  expect(JSON.stringify(r.body)).not.toMatch(/\bat .+\.(?:ts|js):\d+/); // no stack trace
  if (c.field !== undefined) {
    expect(Array.isArray(r.body.details)).toBe(true);
    expect(r.body.details.length).toBeGreaterThan(0);
    for (const detail of r.body.details) {
      expect(typeof detail.field).toBe('string');
      expect(typeof detail.message).toBe('string');
    }
    if (typeof c.field === 'string') expect(r.body.details.map((d: any) => d.field)).toContain(c.field);
  }
}

describe.each([
  ['artwork POST', artworkCases],
  ['artwork PUT', artworkPutCases],
  ['event POST', eventCases],
  ['request body', bodyCases],
  ['query and path', queryCases],
])('bad %s input', (_group, cases) => {
  test.each(cases.map((c) => [c.name, c] as const))('%s is refused with a 4xx error body and changes nothing', async (_name, c) => {
    const r = await send(c);
    expectErrorShape(r, c);
    expect(await snapshot()).toEqual(initial);
  });
});

test('after all the bad input the artworks, events, changelog and sync status are exactly as before', async () => {
  const now = await snapshot();
  expect(now).toEqual(initial);
  // The seed records are the only ones there are.
  expect((now.artworks as any).total).toBe(1);
  expect((now.events as any).total).toBe(1);
  expect((now.artwork as any).price).toBe(100);
});

describe('input at the limits and read-only echoes are accepted', () => {
  let other: ReturnType<typeof client>;
  beforeAll(async () => {
    other = client(t, (await tenant(t, { name: 'Accepting Gallery' })).key);
  });

  test.each([
    ['creation_year of next year', { creation_year: NEXT_YEAR }],
    ['creation_year -3000', { creation_year: -3000 }],
    ['creation_year 0', { creation_year: 0 }],
    ['price 0', { price: 0 }],
    ['a description of 20,000 characters', { description: 'd'.repeat(20_000) }],
    ['a medium of 1,000 characters', { medium: 'm'.repeat(1000) }],
    ['an image_url of 2,048 characters', { image_url: `https://img.example/${'a'.repeat(2048 - 20)}` }],
    ['an http external_url', { external_url: 'http://gallery.example/work?id=1#top' }],
    ['a lower-case currency', { currency: 'usd' }],
  ])('an artwork with %s is accepted', async (name, fields) => {
    const r = await other.post('/v1/artworks', { title: `Limit ${name}`, ...fields });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.created).toBe(true);
  });

  test('a title of 500 characters, and one of 502 characters that is 500 after trimming, are accepted', async () => {
    const exact = await other.post('/v1/artworks', { title: 't'.repeat(500) });
    expect(exact.status).toBe(201);
    expect(exact.body.title).toHaveLength(500);
    const padded = await other.post('/v1/artworks', { title: ` ${'u'.repeat(500)} ` });
    expect(padded.status).toBe(201);
    expect(padded.body.title).toBe('u'.repeat(500));
  });

  test('Content-Type application/json with a charset is accepted', async () => {
    const r = await other.post('/v1/artworks', { title: 'Charset Work' }, { 'content-type': 'application/json; charset=utf-8' });
    expect(r.status).toBe(201);
  });

  test('read-only artwork fields sent on POST are accepted and ignored', async () => {
    const r = await other.post('/v1/artworks', {
      title: 'Echo Work', artist_name: 'Echo Artist', creation_year: 2012,
      id: 999_999, source_fingerprint: 'forged', last_synced_at: '2000-01-01T00:00:00.000Z',
      created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.created).toBe(true);
    expect(r.body.id).not.toBe(999_999);
    expect(r.body.source_fingerprint).not.toBe('forged');
    expect(r.body.source_fingerprint).toMatch(/^[0-9a-f]{64}$/);
    const one = await other.get(`/v1/artworks/${r.body.id}`);
    expect(one.body.created_at).not.toBe('2000-01-01T00:00:00.000Z');
    expect(one.body.updated_at).not.toBe('2000-01-01T00:00:00.000Z');
    expect(one.body.last_synced_at).not.toBe('2000-01-01T00:00:00.000Z');
    expect((await other.get('/v1/artworks/999999')).status).toBe(404);
  });

  test('an artwork read with GET can be sent back unchanged with POST and with PUT', async () => {
    const created = await other.post('/v1/artworks', { title: 'Round Trip', artist_name: 'Trip Artist', price: 10, currency: 'EUR' });
    const read = await other.get(`/v1/artworks/${created.body.id}`);
    const posted = await other.post('/v1/artworks', read.body);
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    expect(posted.body.created).toBe(false);
    expect(posted.body.id).toBe(created.body.id);
    const put = await other.put(`/v1/artworks/${created.body.id}`, { ...read.body, price: 11 });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.price).toBe(11);
    expect(put.body.id).toBe(created.body.id);
  });

  test('read-only event fields (slug, id and timestamps) sent on POST are accepted and ignored', async () => {
    const r = await other.post('/v1/events', {
      title: 'Echo Event', slug: 'forged-slug', id: 999_999,
      last_synced_at: '2000-01-01T00:00:00.000Z', created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.slug).toBe('accepting-gallery-echo-event');
    expect(r.body.id).not.toBe(999_999);
    const read = await other.get(`/v1/events/${r.body.id}`);
    expect(read.body.slug).toBe('accepting-gallery-echo-event');
    const again = await other.post('/v1/events', read.body);
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.created).toBe(false);
    expect(again.body.id).toBe(r.body.id);
  });

  test('a lower-case country code is accepted for an event', async () => {
    const r = await other.post('/v1/events', { title: 'Lower Country', location_country: 'gb' });
    expect(r.status).toBe(201);
  });
});
