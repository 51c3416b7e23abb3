import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** POST /v1/artworks/batch and POST /v1/events/batch (docs/api.md, Batches): each item like a single POST. */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000', RATE_LIMIT_FREE: '100000' }); });
afterAll(async () => { await t?.close(); });

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HEX64 = /^[0-9a-f]{64}$/;

type Api = ReturnType<typeof client>;
interface Change { entity_type: string; entity_id: number; action: string; field_changes: Record<string, { old: unknown; new: unknown }> }
interface Result { index: number; status: number; [field: string]: unknown }

async function gallery() {
  const g = await tenant(t);
  return { ...g, api: client(t, g.key) };
}

const changes = async (api: Api) => (await api.get('/v1/changelog?limit=1000')).body.changes as Change[];
const creates = async (api: Api, kind: 'artwork' | 'event') =>
  (await changes(api)).filter((c) => c.entity_type === kind && c.action === 'create').map((c) => c.entity_id);

const WRITTEN_ARTWORK_KEYS = ['changed', 'created', 'id', 'index', 'last_synced_at', 'source_fingerprint', 'status', 'title'];
const WRITTEN_EVENT_KEYS = ['changed', 'created', 'id', 'index', 'last_synced_at', 'slug', 'status', 'title'];
const REFUSED_KEYS = ['details', 'error', 'index', 'message', 'status'];

function expectRefused(result: Result, index: number, field?: string): void {
  expect(result.index).toBe(index);
  expect(result.status).toBe(400);
  expect(Object.keys(result).sort()).toEqual(REFUSED_KEYS);
  expect(result.error).toBe('bad_request');
  expect(typeof result.message).toBe('string');
  expect((result.message as string).length).toBeGreaterThan(0);
  const details = result.details as { field: string; message: string }[];
  expect(details.length).toBeGreaterThan(0);
  if (field !== undefined) expect(details.map((d) => d.field)).toContain(field);
}

function expectWrittenArtwork(result: Result, index: number, title: string, created: boolean, changed: boolean): void {
  expect(result.index).toBe(index);
  expect(result.status).toBe(201);
  expect(Object.keys(result).sort()).toEqual(WRITTEN_ARTWORK_KEYS);
  expect(Number.isInteger(result.id)).toBe(true);
  expect(result.id as number).toBeGreaterThan(0);
  expect(result.title).toBe(title);
  expect(result.created).toBe(created);
  expect(result.changed).toBe(changed);
  expect(result.source_fingerprint).toMatch(HEX64);
  expect(result.last_synced_at).toMatch(ISO_MS);
}

const MIXED_ARTWORKS: unknown[] = [
  { title: 'Batch First', artist_name: 'Batch Painter', creation_year: 2001, price: 500 },
  { artist_name: 'No Title Painter', creation_year: 1999 },
  { title: 'Wrong Type', creation_year: '1990' },
  { title: 'Unknown Field', colour: 'red' },
  5,
  null,
  { title: 'Batch Second' },
  ['not', 'an', 'object'],
  { title: '   ' },
];

describe('POST /v1/artworks/batch', () => {
  test('a mix of valid and invalid items answers 200 with one result per item in input order; valid items are written, invalid ones refused with 400', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks/batch', { items: MIXED_ARTWORKS });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['results']);
    const results = r.body.results as Result[];
    expect(results.map((x) => x.index)).toEqual(MIXED_ARTWORKS.map((_, i) => i));

    expectWrittenArtwork(results[0]!, 0, 'Batch First', true, true);
    expectRefused(results[1]!, 1, 'title');
    expectRefused(results[2]!, 2, 'creation_year');
    expectRefused(results[3]!, 3, 'colour');
    expectRefused(results[4]!, 4);
    expectRefused(results[5]!, 5);
    expectWrittenArtwork(results[6]!, 6, 'Batch Second', true, true);
    expectRefused(results[7]!, 7);
    expectRefused(results[8]!, 8, 'title');
    expect(results[0]!.id).not.toBe(results[6]!.id);

    const list = await api.get('/v1/artworks');
    expect(list.body.total).toBe(2);
    expect(list.body.artworks.map((a: { id: number; title: string }) => [a.id, a.title])).toEqual([
      [results[0]!.id, 'Batch First'], [results[6]!.id, 'Batch Second'],
    ]);
    const one = await api.get(`/v1/artworks/${results[0]!.id as number}`);
    expect(one.body).toMatchObject({
      title: 'Batch First', artist_name: 'Batch Painter', creation_year: 2001, price: 500,
      source_fingerprint: results[0]!.source_fingerprint, last_synced_at: results[0]!.last_synced_at,
    });
  });

  test('the changelog gets one artwork create entry per created item and none for refused items', async () => {
    const { api } = await gallery();
    // Artists are platform-wide: a name no other test uses, so this batch creates the record.
    const items = [
      { title: 'Logged First', artist_name: 'Changelog Batch Painter' },
      { title: 'Logged Refused', artist_name: 'Refused Batch Painter', price: -1 },
      { title: 'Logged Second' },
      7,
    ];
    const r = await api.post('/v1/artworks/batch', { items });
    expect((r.body.results as Result[]).map((x) => x.status)).toEqual([201, 400, 201, 400]);
    const ids = (r.body.results as Result[]).filter((x) => x.status === 201).map((x) => x.id);
    expect(ids).toHaveLength(2);
    expect(await creates(api, 'artwork')).toEqual(ids);
    // The one artist named by a valid item is created once; the refused item's artist is not.
    const artists = (await changes(api)).filter((c) => c.entity_type === 'artist');
    expect(artists).toHaveLength(1);
    expect(artists[0]!.action).toBe('create');
    expect(artists[0]!.field_changes.name).toEqual({ old: null, new: 'Changelog Batch Painter' });
  });

  test('each created item\'s changelog entry records its text as sent: quotes, backslashes, emoji, a line separator, a tab', async () => {
    const { api } = await gallery();
    const texts = ['Say "when"', 'C:\\path\\to', 'Sun 🌅 and 水', 'Two\u2028lines\tand a tab', '{"not": "json"}'];
    const items = texts.map((description, i) => ({ title: `Odd Text ${i}`, description }));
    const r = await api.post('/v1/artworks/batch', { items });
    expect((r.body.results as Result[]).map((x) => x.status)).toEqual(texts.map(() => 201));
    const entries = (await changes(api)).filter((c) => c.entity_type === 'artwork' && c.action === 'create');
    expect(entries.map((c) => c.field_changes.description)).toEqual(texts.map((description) => ({ old: null, new: description })));
  });

  test('re-posting the same batch answers created false and changed false for every written item, with the same ids', async () => {
    const { api } = await gallery();
    const first = (await api.post('/v1/artworks/batch', { items: MIXED_ARTWORKS })).body.results as Result[];
    const again = await api.post('/v1/artworks/batch', { items: MIXED_ARTWORKS });
    expect(again.status).toBe(200);
    const second = again.body.results as Result[];
    expect(second).toHaveLength(MIXED_ARTWORKS.length);
    for (const [i, result] of second.entries()) {
      if (first[i]!.status === 201) {
        expectWrittenArtwork(result, i, first[i]!.title as string, false, false);
        expect(result.id).toBe(first[i]!.id);
        expect(result.source_fingerprint).toBe(first[i]!.source_fingerprint);
      } else {
        expectRefused(result, i);
        expect(result).toEqual(first[i]);
      }
    }
    expect((await api.get('/v1/artworks')).body.total).toBe(2);
    expect(await creates(api, 'artwork')).toHaveLength(2);
  });

  test('an item that is a cosmetic duplicate of an earlier item in the same batch updates that artwork: created true, then created false with the same id', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks/batch', {
      items: [
        { title: 'Abstract Painting', artist_name: 'Gerhard Richter', creation_year: 1990 },
        { title: 'abstract painting!', artist_name: 'GERHARD  richter', creation_year: 1990, price: 900 },
      ],
    });
    expect(r.status).toBe(200);
    const [a, b] = r.body.results as [Result, Result];
    expectWrittenArtwork(a, 0, 'Abstract Painting', true, true);
    expectWrittenArtwork(b, 1, 'abstract painting!', false, true);
    expect(b.id).toBe(a.id);
    expect(b.source_fingerprint).toBe(a.source_fingerprint);
    expect((await api.get('/v1/artworks')).body.total).toBe(1);
    expect((await api.get(`/v1/artworks/${a.id as number}`)).body).toMatchObject({ title: 'abstract painting!', price: 900 });
    expect(await creates(api, 'artwork')).toEqual([a.id]);
  });

  test('100 items are accepted and all written', async () => {
    const { api } = await gallery();
    const items = Array.from({ length: 100 }, (_, i) => ({ title: `Hundred ${i}` }));
    const r = await api.post('/v1/artworks/batch', { items });
    expect(r.status).toBe(200);
    expect(r.body.results).toHaveLength(100);
    expect((r.body.results as Result[]).every((x, i) => x.index === i && x.status === 201 && x.created === true)).toBe(true);
    expect((await api.get('/v1/artworks')).body.total).toBe(100);
  });

  test.each([
    ['0 items', { items: [] }, 'items'],
    ['101 items', { items: Array.from({ length: 101 }, (_, i) => ({ title: `Too Many ${i}` })) }, 'items'],
    ['items that is an object, not an array', { items: { title: 'Lonely' } }, 'items'],
    ['items that is a string', { items: 'Abstract Painting' }, 'items'],
    ['no items at all', { title: 'Not A Batch' }, undefined],
    ['an extra top-level field', { items: [{ title: 'Extra' }], mode: 'upsert' }, 'mode'],
  ])('a body with %s gets 400 bad_request and writes nothing', async (_name, body, field) => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks/batch', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(typeof r.body.message).toBe('string');
    expect(r.body.results).toBeUndefined();
    if (field !== undefined) expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
    expect(await changes(api)).toEqual([]);
  });

  test('a free key (no write scope) gets 403 forbidden naming artworks:write, and nothing is written', async () => {
    const g = await tenant(t, { tier: 'free' });
    const api = client(t, g.key);
    const r = await api.post('/v1/artworks/batch', { items: [{ title: 'Free Tier Work' }] });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
    expect(r.body.message).toContain('artworks:write');
    expect((await api.get('/v1/artworks')).body.total).toBe(0);
  });
});

describe('POST /v1/events/batch', () => {
  const MIXED_EVENTS: unknown[] = [
    { title: 'Summer Show', event_type: 'exhibition', start_date: '2031-06-01', end_date: '2031-08-31' },
    { title: 'Backwards Show', start_date: '2031-06-10', end_date: '2031-06-01' },
    { event_type: 'talk' },
    { title: 'Bad Type', event_type: 'party' },
    { title: 'Bad Date', start_date: '2031-02-30' },
    null,
    'Winter Talk',
    { title: 'Winter Talk', event_type: 'talk' },
  ];

  function expectWrittenEvent(result: Result, index: number, title: string, created: boolean, changed: boolean): void {
    expect(result.index).toBe(index);
    expect(result.status).toBe(201);
    expect(Object.keys(result).sort()).toEqual(WRITTEN_EVENT_KEYS);
    expect(Number.isInteger(result.id)).toBe(true);
    expect(result.title).toBe(title);
    expect(result.created).toBe(created);
    expect(result.changed).toBe(changed);
    expect(result.last_synced_at).toMatch(ISO_MS);
  }

  test('a mix of valid and invalid items answers results in input order with slugs; an end_date before start_date is a per-item 400', async () => {
    const g = await gallery();
    const r = await g.api.post('/v1/events/batch', { items: MIXED_EVENTS });
    expect(r.status).toBe(200);
    const results = r.body.results as Result[];
    expect(results.map((x) => x.index)).toEqual(MIXED_EVENTS.map((_, i) => i));

    expectWrittenEvent(results[0]!, 0, 'Summer Show', true, true);
    expect(results[0]!.slug).toBe(`${g.slug}-summer-show`);
    expectRefused(results[1]!, 1, 'end_date');
    expectRefused(results[2]!, 2, 'title');
    expectRefused(results[3]!, 3, 'event_type');
    expectRefused(results[4]!, 4, 'start_date');
    expectRefused(results[5]!, 5);
    expectRefused(results[6]!, 6);
    expectWrittenEvent(results[7]!, 7, 'Winter Talk', true, true);
    expect(results[7]!.slug).toBe(`${g.slug}-winter-talk`);

    const list = await g.api.get('/v1/events');
    expect(list.body.total).toBe(2);
    expect(list.body.events.map((e: { id: number }) => e.id)).toEqual([results[0]!.id, results[7]!.id]);
    const one = await g.api.get(`/v1/events/${results[0]!.id as number}`);
    expect(one.body).toMatchObject({ slug: results[0]!.slug, start_date: '2031-06-01', end_date: '2031-08-31', event_type: 'exhibition' });
    expect(await creates(g.api, 'event')).toEqual([results[0]!.id, results[7]!.id]);
  });

  test('re-posting the same events answers created false and changed false, and a same-slug item later in one batch updates the earlier one', async () => {
    const { api } = await gallery();
    const first = (await api.post('/v1/events/batch', { items: MIXED_EVENTS })).body.results as Result[];
    const second = (await api.post('/v1/events/batch', { items: MIXED_EVENTS })).body.results as Result[];
    for (const [i, result] of second.entries()) {
      if (first[i]!.status === 201) {
        expectWrittenEvent(result, i, first[i]!.title as string, false, false);
        expect(result.id).toBe(first[i]!.id);
        expect(result.slug).toBe(first[i]!.slug);
      } else {
        expect(result).toEqual(first[i]);
      }
    }

    const dup = await api.post('/v1/events/batch', {
      items: [{ title: 'Opening Night' }, { title: 'opening   night!', event_type: 'opening' }],
    });
    const [a, b] = dup.body.results as [Result, Result];
    expectWrittenEvent(a, 0, 'Opening Night', true, true);
    expectWrittenEvent(b, 1, 'opening   night!', false, true);
    expect(b.id).toBe(a.id);
    expect(b.slug).toBe(a.slug);
    expect((await api.get('/v1/events')).body.total).toBe(3);
    expect(await creates(api, 'event')).toHaveLength(3);
  });

  test.each([
    ['0 items', { items: [] }],
    ['101 items', { items: Array.from({ length: 101 }, (_, i) => ({ title: `Too Many Events ${i}` })) }],
    ['items that is not an array', { items: { title: 'Lonely Event' } }],
    ['an extra top-level field', { items: [{ title: 'Extra Event' }], dry_run: true }],
  ])('a body with %s gets 400 and writes no event', async (_name, body) => {
    const { api } = await gallery();
    const r = await api.post('/v1/events/batch', body);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect((await api.get('/v1/events')).body.total).toBe(0);
  });

  test('a free key gets 403 forbidden naming events:write', async () => {
    const g = await tenant(t, { tier: 'free' });
    const r = await client(t, g.key).post('/v1/events/batch', { items: [{ title: 'Free Event' }] });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('forbidden');
    expect(r.body.message).toContain('events:write');
    expect((await client(t, g.key).get('/v1/events')).body.total).toBe(0);
  });
});
