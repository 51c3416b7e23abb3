import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** Events: create or update by slug, dates, upcoming/past lists, read, delete (docs/api.md, Events). */

let t: TestApp;
// A generous limit so that rate limiting never interferes with these tests (it has tests of its own).
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

let galleries = 0;
/** A fresh gallery with a subscriber key (every read and write scope) and its API client. */
async function gallery(name = `Event Gallery ${++galleries}`) {
  const g = await tenant(t, { name });
  return { ...g, api: client(t, g.key) };
}

/** The UTC calendar date `offset` days from today, YYYY-MM-DD. */
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

const LIST_FIELDS = ['id', 'title', 'event_type', 'location_city', 'location_country', 'start_date', 'end_date', 'image'];

describe('POST /v1/events', () => {
  test('posting a new event answers 201 with id, title, the slug of entity slug and title, and created true', async () => {
    const g = await gallery('Test Gallery 1');
    expect(g.slug).toBe('test-gallery-1');
    const r = await g.api.post('/v1/events', { title: 'Summer Show!' });
    expect(r.status).toBe(201);
    expect(Number.isInteger(r.body.id)).toBe(true);
    expect(r.body.title).toBe('Summer Show!');
    expect(r.body.slug).toBe('test-gallery-1-summer-show');
    expect(r.body.created).toBe(true);
  });

  test('the event slug follows the normalized slug algorithm, accents removed', async () => {
    const g = await gallery('Galerie Müller');
    expect(g.slug).toBe('galerie-muller');
    const r = await g.api.post('/v1/events', { title: 'Été à Paris — Straße' });
    expect(r.status).toBe(201);
    expect(r.body.slug).toBe('galerie-muller-ete-a-paris-strasse');
  });

  test('re-posting a cosmetically different title updates the same event with created false', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/events', { title: 'Summer Show!', location_city: 'Berlin', event_type: 'exhibition' });
    const second = await api.post('/v1/events', { title: '  summer   SHOW ', description: 'Now with a description' });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(second.status).toBe(201);
    expect(second.body.created).toBe(false);
    expect(second.body.id).toBe(first.body.id);
    expect(second.body.slug).toBe(first.body.slug);

    const list = await api.get('/v1/events');
    expect(list.body.total).toBe(1);
    const one = await api.get(`/v1/events/${first.body.id}`);
    // Merged: the fields not sent are kept, the new one is added; the title is stored trimmed.
    expect(one.body).toMatchObject({
      title: 'summer   SHOW', location_city: 'Berlin', event_type: 'exhibition', description: 'Now with a description',
    });
  });

  test('a re-post does not clear a field sent as null', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/events', { title: 'Null Keep', location_city: 'Paris', start_date: '2030-01-01' });
    const second = await api.post('/v1/events', { title: 'Null Keep', location_city: null, start_date: null });
    expect(second.status).toBe(201);
    expect(second.body.created).toBe(false);
    const one = await api.get(`/v1/events/${first.body.id}`);
    expect(one.body).toMatchObject({ location_city: 'Paris', start_date: '2030-01-01' });
  });

  test('the same title in two entities gives two events', async () => {
    const a = await gallery();
    const b = await gallery();
    const ra = await a.api.post('/v1/events', { title: 'Open Studio' });
    const rb = await b.api.post('/v1/events', { title: 'Open Studio' });
    expect(ra.body.created).toBe(true);
    expect(rb.body.created).toBe(true);
    expect(rb.body.id).not.toBe(ra.body.id);
    expect((await b.api.get(`/v1/events/${ra.body.id}`)).status).toBe(404);
  });

  test('a location_country sent in lower case is stored upper-case', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/events', { title: 'Country Event', location_country: 'fr' });
    expect(r.status).toBe(201);
    const one = await api.get(`/v1/events/${r.body.id}`);
    expect(one.body.location_country).toBe('FR');
    expect((await api.get('/v1/events')).body.events[0].location_country).toBe('FR');
  });

  test.each([
    ['start_date', '2027-02-30'],
    ['start_date', '2027-2-3'],
    ['end_date', '2027-02-30'],
    ['end_date', '2027-2-3'],
    ['start_date', '2027-13-01'],
    ['start_date', '2027-02-03T10:00:00Z'],
  ])('an invalid %s of %s is refused with 400 naming the field, and nothing is created', async (field, value) => {
    const { api } = await gallery();
    const r = await api.post('/v1/events', { title: 'Bad Date Event', [field]: value });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.details.map((d: any) => d.field)).toContain(field);
    expect((await api.get('/v1/events')).body.total).toBe(0);
  });

  test('a real leap day is accepted as a date', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/events', { title: 'Leap Event', start_date: '2028-02-29' });
    expect(r.status).toBe(201);
    expect((await api.get(`/v1/events/${r.body.id}`)).body.start_date).toBe('2028-02-29');
  });

  test('an end_date before the start_date is refused with 400 and nothing is created', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/events', { title: 'Backwards', start_date: '2030-05-10', end_date: '2030-05-09' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(Array.isArray(r.body.details)).toBe(true);
    expect(r.body.details.length).toBeGreaterThan(0);
    expect((await api.get('/v1/events')).body.total).toBe(0);
  });

  test('an end_date equal to the start_date is accepted', async () => {
    const { api } = await gallery();
    const r = await api.post('/v1/events', { title: 'One Day', start_date: '2030-05-10', end_date: '2030-05-10' });
    expect(r.status).toBe(201);
  });

  test('a re-post sending only an end_date before the stored start_date is refused with 400 and the stored event is unchanged', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/events', { title: 'Merge Dates', start_date: '2030-06-10', end_date: '2030-06-20', location_city: 'Rome' });
    expect(created.status).toBe(201);
    const before = await api.get(`/v1/events/${created.body.id}`);
    const logBefore = await api.get('/v1/changelog');
    const r = await api.post('/v1/events', { title: 'Merge Dates', end_date: '2030-06-01', location_city: 'Milan' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    const after = await api.get(`/v1/events/${created.body.id}`);
    expect(after.body).toEqual(before.body);
    expect((await api.get('/v1/changelog')).body.total).toBe(logBefore.body.total);
  });
});

describe('GET /v1/events (list, upcoming and past)', () => {
  let api: ReturnType<typeof client>;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    ({ api } = await gallery());
    const events: [string, Record<string, string>][] = [
      ['endsToday', { start_date: day(-10), end_date: day(0) }],
      ['startsToday', { start_date: day(0) }],
      ['inAMonth', { start_date: day(30), end_date: day(40) }],
      ['undated', {}],
      ['endedYesterday', { start_date: day(-20), end_date: day(-1) }],
      ['inFiveDays', { start_date: day(5) }],
      ['longAgo', { start_date: day(-100) }],
      ['lastMonth', { start_date: day(-50), end_date: day(-40) }],
    ];
    for (const [name, dates] of events) {
      const r = await api.post('/v1/events', { title: `List ${name}`, ...dates });
      if (r.status !== 201) throw new Error(`seeding failed: ${r.status} ${JSON.stringify(r.body)}`);
      ids[name] = r.body.id;
    }
  });

  const idsOf = (r: { body: any }) => r.body.events.map((e: any) => e.id);

  test('without filters every event is listed by id ascending with the default limit of 50', async () => {
    const r = await api.get('/v1/events');
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(8);
    expect(r.body.page).toBe(1);
    expect(r.body.limit).toBe(50);
    expect(idsOf(r)).toEqual(Object.values(ids).sort((a, b) => a - b));
  });

  test('upcoming=true lists events ending (or starting, without an end) today or later, by start_date ascending', async () => {
    const r = await api.get('/v1/events?upcoming=true');
    expect(r.status).toBe(200);
    expect(idsOf(r)).toEqual([ids.endsToday, ids.startsToday, ids.inFiveDays, ids.inAMonth]);
    expect(r.body.total).toBe(4);
  });

  test('past=true lists events that ended before today, by start_date descending', async () => {
    const r = await api.get('/v1/events?past=true');
    expect(r.status).toBe(200);
    expect(idsOf(r)).toEqual([ids.endedYesterday, ids.lastMonth, ids.longAgo]);
    expect(r.body.total).toBe(3);
  });

  test('an undated event is neither upcoming nor past', async () => {
    const up = await api.get('/v1/events?upcoming=true');
    const past = await api.get('/v1/events?past=true');
    expect(idsOf(up)).not.toContain(ids.undated);
    expect(idsOf(past)).not.toContain(ids.undated);
    expect(idsOf(await api.get('/v1/events'))).toContain(ids.undated);
  });

  test('upcoming=1 is accepted as true and upcoming=0 as false', async () => {
    const one = await api.get('/v1/events?upcoming=1');
    expect(one.status).toBe(200);
    expect(idsOf(one)).toEqual([ids.endsToday, ids.startsToday, ids.inFiveDays, ids.inAMonth]);
    const zero = await api.get('/v1/events?upcoming=0');
    expect(zero.status).toBe(200);
    expect(zero.body.total).toBe(8);
    const pastOnly = await api.get('/v1/events?upcoming=false&past=1');
    expect(pastOnly.status).toBe(200);
    expect(idsOf(pastOnly)).toEqual([ids.endedYesterday, ids.lastMonth, ids.longAgo]);
  });

  test.each(['upcoming=true&past=true', 'upcoming=1&past=1', 'upcoming=yes', 'past=maybe', 'upcoming=TRUEISH', 'limit=101', 'limit=0', 'page=0'])(
    'the list query %s is refused with 400 bad_request',
    async (query) => {
      const r = await api.get(`/v1/events?${query}`);
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('bad_request');
      expect(typeof r.body.message).toBe('string');
    },
  );

  test('a page past the end returns an empty array with the real total', async () => {
    const r = await api.get('/v1/events?page=3&limit=5');
    expect(r.status).toBe(200);
    expect(r.body.events).toEqual([]);
    expect(r.body.total).toBe(8);
  });

  test('list elements hold exactly id, title, event_type, location_city, location_country, start_date, end_date and image', async () => {
    const { api: own } = await gallery();
    const created = await own.post('/v1/events', {
      title: 'Listed Event', event_type: 'talk', description: 'Not listed', location_city: 'Vienna', location_country: 'at',
      start_date: '2031-03-01', end_date: '2031-03-02', external_url: 'https://gallery.example/talk',
      image_url: 'https://img.example/talk.jpg', ical_url: 'https://gallery.example/talk.ics',
    });
    const r = await own.get('/v1/events');
    expect(r.body.events).toHaveLength(1);
    expect(Object.keys(r.body.events[0]).sort()).toEqual([...LIST_FIELDS].sort());
    expect(r.body.events[0]).toEqual({
      id: created.body.id, title: 'Listed Event', event_type: 'talk', location_city: 'Vienna', location_country: 'AT',
      start_date: '2031-03-01', end_date: '2031-03-02',
      image: { status: 'pending', width: null, height: null, src: null, srcset: null, error: null, checked_at: null },
    });
  });
});

describe('GET and DELETE /v1/events/:id', () => {
  test('one event is returned with every field of the interface', async () => {
    const { api } = await gallery();
    const body = {
      title: 'Full Event', event_type: 'workshop', description: 'Bring pencils.', location_city: 'Madrid', location_country: 'ES',
      start_date: '2031-04-01', end_date: '2031-04-03', external_url: 'https://gallery.example/ws',
      image_url: 'https://img.example/ws.jpg', ical_url: 'https://gallery.example/ws.ics',
    };
    const created = await api.post('/v1/events', body);
    const r = await api.get(`/v1/events/${created.body.id}`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ...body, id: created.body.id });
  });

  test.each(['abc', '0', '99999999999', '999999'])('GET /v1/events/%s answers 404 not_found', async (id) => {
    const { api } = await gallery();
    const r = await api.get(`/v1/events/${id}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
  });

  test('DELETE answers 200 {deleted: true, id} and the event is gone; re-posting its title creates a new event', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/events', { title: 'Phoenix Show', location_city: 'Oslo' });
    const del = await api.delete(`/v1/events/${created.body.id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: true, id: created.body.id });
    const gone = await api.get(`/v1/events/${created.body.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toBe('not_found');

    const again = await api.post('/v1/events', { title: 'Phoenix Show' });
    expect(again.status).toBe(201);
    expect(again.body.created).toBe(true);
    expect(again.body.id).not.toBe(created.body.id);
    expect(again.body.slug).toBe(created.body.slug);
    // The new event starts fresh: nothing of the deleted one survives.
    expect((await api.get(`/v1/events/${again.body.id}`)).body.location_city).toBeNull();
  });

  test('DELETE of another entity\'s event answers 404 and leaves it in place', async () => {
    const a = await gallery();
    const b = await gallery();
    const created = await a.api.post('/v1/events', { title: 'Not Yours' });
    const r = await b.api.delete(`/v1/events/${created.body.id}`);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
    expect((await a.api.get(`/v1/events/${created.body.id}`)).status).toBe(200);
  });
});

describe('PUT /v1/events/:id (docs/api.md, Events)', () => {
  test('a corrected title re-derives the slug: the event keeps its id, the public page follows, one update entry is logged', async () => {
    const g = await gallery();
    const created = await g.api.post('/v1/events', { title: 'Sumer Show', start_date: day(10), location_city: 'Berlin' });
    // A later millisecond, so the PUT's last_synced_at differs from the POST's (without it the test failed once).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const r = await g.api.put(`/v1/events/${created.body.id}`, { title: 'Summer Show' });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ id: created.body.id, title: 'Summer Show', slug: `${g.slug}-summer-show`, location_city: 'Berlin', start_date: day(10) });
    expect((await g.api.get(`/v1/events/${created.body.id}`)).body.slug).toBe(`${g.slug}-summer-show`);
    // Re-posting the corrected title updates the same event rather than creating a second one.
    expect((await g.api.post('/v1/events', { title: 'Summer Show' })).body).toMatchObject({ id: created.body.id, created: false });
    expect((await t.app.inject({ method: 'GET', url: `/profiles/${g.slug}/events/${g.slug}-summer-show` })).statusCode).toBe(200);
    const changes = (await g.api.get('/v1/changelog')).body.changes.filter((c: { action: string }) => c.action === 'update');
    expect(changes[0]).toMatchObject({ entity_type: 'event', entity_id: created.body.id });
    expect(changes[0].field_changes).toMatchObject({ title: { old: 'Sumer Show', new: 'Summer Show' } });
    expect(Object.keys(changes[0].field_changes).sort()).toEqual(['last_synced_at', 'title']);
  });

  test('null clears an optional field, an absent field stays, and the answer is the whole event', async () => {
    const g = await gallery();
    const created = await g.api.post('/v1/events', { title: 'Talk', event_type: 'talk', description: 'About light', start_date: day(3) });
    const r = await g.api.put(`/v1/events/${created.body.id}`, { description: null, end_date: day(4) });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: 'Talk', event_type: 'talk', description: null, start_date: day(3), end_date: day(4) });
    expect(Object.keys(r.body).sort()).toEqual([...LIST_FIELDS, 'slug', 'description', 'external_url', 'image_url', 'ical_url', 'feed_id', 'last_synced_at', 'created_at', 'updated_at'].sort());
  });

  test('a title another event of the entity has gets 409 duplicate with existing_id, and nothing changes', async () => {
    const g = await gallery();
    const a = await g.api.post('/v1/events', { title: 'Opening' });
    const b = await g.api.post('/v1/events', { title: 'Closing' });
    const r = await g.api.put(`/v1/events/${b.body.id}`, { title: 'opening!' });
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({ error: 'duplicate', existing_id: a.body.id });
    expect((await g.api.get(`/v1/events/${b.body.id}`)).body.title).toBe('Closing');
  });

  test.each([
    [{ title: null }, 'title'],
    [{ title: '   ' }, 'title'],
    [{ end_date: '2020-01-01', start_date: '2020-02-01' }, 'end_date'],
    [{ location_country: 'XX' }, 'location_country'],
    [{ slugg: 'x' }, 'slugg'],
  ])('PUT %j gets 400 naming %s', async (body, field) => {
    const g = await gallery();
    const created = await g.api.post('/v1/events', { title: 'Valid', start_date: day(1) });
    const r = await g.api.put(`/v1/events/${created.body.id}`, body);
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { field: string }) => d.field)).toContain(field);
  });

  test('an end date before the stored start date is refused after the merge', async () => {
    const g = await gallery();
    const created = await g.api.post('/v1/events', { title: 'Dated', start_date: day(10) });
    const r = await g.api.put(`/v1/events/${created.body.id}`, { end_date: day(5) });
    expect(r.status).toBe(400);
    expect(r.body.details).toEqual([{ field: 'end_date', message: expect.any(String) }]);
  });

  test('another entity\'s event, an unknown id and a read-only key are refused (404, 404, 403)', async () => {
    const g = await gallery();
    const other = await gallery();
    const theirs = await other.api.post('/v1/events', { title: 'Theirs' });
    expect((await g.api.put(`/v1/events/${theirs.body.id}`, { title: 'Mine now' })).status).toBe(404);
    expect((await g.api.put('/v1/events/999999', { title: 'Nothing' })).status).toBe(404);
    const reader = client(t, (await tenant(t, { scopes: ['events:read'] })).key);
    expect((await reader.put(`/v1/events/${theirs.body.id}`, { title: 'x' })).status).toBe(403);
  });
});
