import ICAL from 'ical.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** The public calendar feed and single-event downloads (docs/public-pages.md, Pages and feeds): RFC 5545, all-day dates, stable output. */

const BASE = 'https://catalog.example';
let t: TestApp;
beforeAll(async () => { t = await startApp({ PUBLIC_BASE_URL: BASE, RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

let galleries = 0;
async function gallery(name = `Feed Gallery ${++galleries}`) {
  const g = await tenant(t, { name });
  return { ...g, api: client(t, g.key) };
}

/** The UTC calendar date `offset` days from today, YYYY-MM-DD. */
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

const feedUrl = (slug: string) => `/profiles/${encodeURIComponent(slug)}/events.ics`;
const eventPath = (slug: string, eventSlug: string) => `/profiles/${encodeURIComponent(slug)}/events/${encodeURIComponent(eventSlug)}`;

async function fetchIcs(url: string) {
  const r = await t.app.inject({ method: 'GET', url });
  return { status: r.statusCode, body: r.body, headers: r.headers };
}

function vevents(text: string): ICAL.Component[] {
  const calendar = new ICAL.Component(ICAL.parse(text) as unknown[]);
  expect(calendar.name).toBe('vcalendar');
  return calendar.getAllSubcomponents('vevent');
}

const value = (ev: ICAL.Component, name: string) => ev.getFirstPropertyValue(name);
const bySummary = (events: ICAL.Component[], summary: string) => {
  const found = events.filter((ev) => value(ev, 'summary') === summary);
  expect(found, summary).toHaveLength(1);
  return found[0]!;
};

/** An all-day date property: asserts its value type is DATE and returns YYYY-MM-DD. */
function dateOf(ev: ICAL.Component, name: 'dtstart' | 'dtend'): string {
  const prop = ev.getFirstProperty(name);
  expect(prop, name).toBeTruthy();
  expect(prop!.type, name).toBe('date');
  const time = prop!.getFirstValue() as ICAL.Time;
  expect(time.isDate, name).toBe(true);
  return time.toString();
}

async function post(api: ReturnType<typeof client>, body: Record<string, unknown>) {
  const r = await api.post('/v1/events', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: number; slug: string; title: string };
}

describe('GET /profiles/:slug/events.ics', () => {
  test('the feed needs no key and answers 200 text/calendar; charset=utf-8 with a valid VCALENDAR', async () => {
    const g = await gallery();
    await post(g.api, { title: 'Spring Opening', start_date: '2027-03-01' });
    const r = await fetchIcs(feedUrl(g.slug));
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type']).toLowerCase().replace(/\s+/g, '')).toBe('text/calendar;charset=utf-8');
    const calendar = new ICAL.Component(ICAL.parse(r.body) as unknown[]);
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    expect(calendar.getFirstPropertyValue('prodid')).toBeTruthy();
    // RFC 5545 3.1: content lines end with CRLF.
    expect(r.body).toContain('\r\n');
    expect(r.body.replace(/\r\n/g, '')).not.toContain('\n');
  });

  test('there is one VEVENT per dated event of the last year and later; undated and older events are left out', async () => {
    const g = await gallery();
    await post(g.api, { title: 'Past Show', start_date: day(-60), end_date: day(-40) });
    await post(g.api, { title: 'Long Ago Show', start_date: '2020-01-10', end_date: '2020-02-10' });
    await post(g.api, { title: 'Future Show', start_date: '2027-06-01', end_date: '2027-08-31' });
    await post(g.api, { title: 'Future Talk', start_date: '2027-05-05' });
    await post(g.api, { title: 'Undated Workshop', event_type: 'workshop' });
    const other = await gallery();
    await post(other.api, { title: 'Another Gallery Show', start_date: '2027-01-01' });

    const events = vevents((await fetchIcs(feedUrl(g.slug))).body);
    expect(events.map((ev) => value(ev, 'summary')).sort()).toEqual(['Future Show', 'Future Talk', 'Past Show']);
  });

  test('a multi-day exhibition is an all-day event whose DTEND is the day after its end date', async () => {
    const g = await gallery();
    await post(g.api, { title: 'Summer Exhibition', event_type: 'exhibition', start_date: '2027-06-01', end_date: '2027-08-31' });
    const ev = bySummary(vevents((await fetchIcs(feedUrl(g.slug))).body), 'Summer Exhibition');
    expect(dateOf(ev, 'dtstart')).toBe('2027-06-01');
    expect(dateOf(ev, 'dtend')).toBe('2027-09-01');
  });

  test('a one-day event without end_date runs from its date to the next day', async () => {
    const g = await gallery();
    await post(g.api, { title: 'Opening Night', event_type: 'opening', start_date: '2027-06-01' });
    const ev = bySummary(vevents((await fetchIcs(feedUrl(g.slug))).body), 'Opening Night');
    expect(dateOf(ev, 'dtstart')).toBe('2027-06-01');
    expect(dateOf(ev, 'dtend')).toBe('2027-06-02');
  });

  test('an exclusive DTEND crosses month, year and leap-day boundaries correctly', async () => {
    const g = await gallery();
    await post(g.api, { title: 'Year End', start_date: '2027-12-20', end_date: '2027-12-31' });
    await post(g.api, { title: 'Leap Day', start_date: '2028-02-29' });
    await post(g.api, { title: 'Same Day Range', start_date: '2027-04-30', end_date: '2027-04-30' });
    const events = vevents((await fetchIcs(feedUrl(g.slug))).body);
    expect(dateOf(bySummary(events, 'Year End'), 'dtend')).toBe('2028-01-01');
    expect(dateOf(bySummary(events, 'Leap Day'), 'dtstart')).toBe('2028-02-29');
    expect(dateOf(bySummary(events, 'Leap Day'), 'dtend')).toBe('2028-03-01');
    expect(dateOf(bySummary(events, 'Same Day Range'), 'dtend')).toBe('2027-05-01');
  });

  test('UIDs are stable across fetches and updates, and differ between events', async () => {
    const g = await gallery();
    await post(g.api, { title: 'First Event', start_date: '2027-01-10' });
    await post(g.api, { title: 'Second Event', start_date: '2027-02-10' });
    const first = vevents((await fetchIcs(feedUrl(g.slug))).body);
    const second = vevents((await fetchIcs(feedUrl(g.slug))).body);
    const uid = (events: ICAL.Component[], s: string) => value(bySummary(events, s), 'uid') as string;

    expect(uid(first, 'First Event')).toBeTruthy();
    expect(uid(first, 'First Event')).toBe(uid(second, 'First Event'));
    expect(uid(first, 'Second Event')).toBe(uid(second, 'Second Event'));
    expect(uid(first, 'First Event')).not.toBe(uid(first, 'Second Event'));

    // Re-posting the event with new dates updates it: same UID, new DTSTART.
    await post(g.api, { title: 'First Event', start_date: '2027-01-20' });
    const updated = vevents((await fetchIcs(feedUrl(g.slug))).body);
    expect(uid(updated, 'First Event')).toBe(uid(first, 'First Event'));
    expect(dateOf(bySummary(updated, 'First Event'), 'dtstart')).toBe('2027-01-20');
  });

  test('UIDs differ between events of different entities', async () => {
    const a = await gallery();
    const b = await gallery();
    await post(a.api, { title: 'Shared Title', start_date: '2027-01-10' });
    await post(b.api, { title: 'Shared Title', start_date: '2027-01-10' });
    const ua = value(vevents((await fetchIcs(feedUrl(a.slug))).body)[0]!, 'uid');
    const ub = value(vevents((await fetchIcs(feedUrl(b.slug))).body)[0]!, 'uid');
    expect(ua).toBeTruthy();
    expect(ua).not.toBe(ub);
  });

  test('LOCATION is the city and the country name', async () => {
    const g = await gallery();
    await post(g.api, { title: 'In Berlin', start_date: '2027-01-10', location_city: 'Berlin', location_country: 'DE' });
    await post(g.api, { title: 'In Paris', start_date: '2027-01-11', location_city: 'Paris', location_country: 'fr' });
    await post(g.api, { title: 'Country Only', start_date: '2027-01-12', location_country: 'JP' });
    await post(g.api, { title: 'Nowhere', start_date: '2027-01-13' });
    const events = vevents((await fetchIcs(feedUrl(g.slug))).body);
    expect(value(bySummary(events, 'In Berlin'), 'location')).toBe('Berlin, Germany');
    expect(value(bySummary(events, 'In Paris'), 'location')).toBe('Paris, France');
    expect(value(bySummary(events, 'Country Only'), 'location')).toBe('Japan');
    expect(value(bySummary(events, 'Nowhere'), 'location') ?? '').toBe('');
  });

  test('URL points to the event page under PUBLIC_BASE_URL, and that page exists', async () => {
    const g = await gallery();
    const e = await post(g.api, { title: 'Linked Event', start_date: '2027-01-10' });
    const ev = bySummary(vevents((await fetchIcs(feedUrl(g.slug))).body), 'Linked Event');
    const url = String(value(ev, 'url'));
    expect(url).toBe(`${BASE}${eventPath(g.slug, e.slug)}`);
    const page = await t.app.inject({ method: 'GET', url: new URL(url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Linked Event');
  });

  test('SUMMARY is the title, with commas, semicolons, backslashes, newlines and non-Latin text intact', async () => {
    const g = await gallery();
    const titles = ['Colour, Light; Form \\ Space', '草間彌生: 無限の網', 'Ünïcødé — Été'];
    for (const [i, title] of titles.entries()) await post(g.api, { title, start_date: `2027-0${i + 1}-15` });
    await post(g.api, { title: 'Described', start_date: '2027-05-01', description: 'Line one,\nline two; end.' });
    const events = vevents((await fetchIcs(feedUrl(g.slug))).body);
    expect(events.map((ev) => value(ev, 'summary')).sort()).toEqual([...titles, 'Described'].sort());
    expect(value(bySummary(events, 'Described'), 'description')).toBe('Line one,\nline two; end.');
  });

  test('two fetches without changes give identical bytes', async () => {
    const g = await gallery();
    await post(g.api, { title: 'Stable A', start_date: '2027-01-10', location_city: 'Berlin', location_country: 'DE' });
    await post(g.api, { title: 'Stable B', start_date: day(-20), end_date: day(-10), description: 'Past.' });
    const first = await fetchIcs(feedUrl(g.slug));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const second = await fetchIcs(feedUrl(g.slug));
    expect(first.status).toBe(200);
    expect(second.body).toBe(first.body);
  });

  test('a deleted event leaves the feed', async () => {
    const g = await gallery();
    const gone = await post(g.api, { title: 'To Be Deleted', start_date: '2027-01-10' });
    await post(g.api, { title: 'Stays', start_date: '2027-01-11' });
    expect((await g.api.delete(`/v1/events/${gone.id}`)).status).toBe(200);
    const events = vevents((await fetchIcs(feedUrl(g.slug))).body);
    expect(events.map((ev) => value(ev, 'summary'))).toEqual(['Stays']);
  });

  test('a profile without dated events gives a valid, empty calendar', async () => {
    const g = await gallery();
    await post(g.api, { title: 'No Date Yet' });
    const r = await fetchIcs(feedUrl(g.slug));
    expect(r.status).toBe(200);
    expect(vevents(r.body)).toHaveLength(0);
  });

  test('an unknown profile slug has no feed', async () => {
    const r = await fetchIcs(feedUrl('no-such-profile'));
    expect(r.status).toBe(404);
    expect(r.body).not.toContain('BEGIN:VCALENDAR');
  });
});

describe('GET /profiles/:slug/events/:event_slug/event.ics', () => {
  test('the single-event download is a calendar with exactly that one VEVENT, same as in the feed', async () => {
    const g = await gallery();
    const e = await post(g.api, {
      title: 'Single Download', start_date: '2027-06-01', end_date: '2027-08-31', location_city: 'Berlin', location_country: 'DE',
    });
    await post(g.api, { title: 'Not In The Download', start_date: '2027-07-01' });
    const r = await fetchIcs(`${eventPath(g.slug, e.slug)}/event.ics`);
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type']).toLowerCase().replace(/\s+/g, '')).toBe('text/calendar;charset=utf-8');
    const events = vevents(r.body);
    expect(events).toHaveLength(1);
    const ev = events[0]!;
    expect(value(ev, 'summary')).toBe('Single Download');
    expect(dateOf(ev, 'dtstart')).toBe('2027-06-01');
    expect(dateOf(ev, 'dtend')).toBe('2027-09-01');
    expect(value(ev, 'location')).toBe('Berlin, Germany');
    expect(value(ev, 'url')).toBe(`${BASE}${eventPath(g.slug, e.slug)}`);

    const inFeed = bySummary(vevents((await fetchIcs(feedUrl(g.slug))).body), 'Single Download');
    expect(value(ev, 'uid')).toBe(value(inFeed, 'uid'));
  });

  test('an unknown event slug has no download', async () => {
    const g = await gallery();
    expect((await fetchIcs(`${eventPath(g.slug, 'no-such-event')}/event.ics`)).status).toBe(404);
  });
});

describe('feed bounds (docs/public-pages.md, Pages and feeds) and the writer', () => {
  test('a description over 2,000 characters is cut to 2,000 with "…"; a shorter one is whole', async () => {
    const g = await gallery();
    const long = `${'Å'.repeat(1998)}🎨${'x'.repeat(5000)}`;
    await post(g.api, { title: 'Long Text', start_date: '2027-01-10', description: long });
    await post(g.api, { title: 'Short Text', start_date: '2027-01-11', description: 'y'.repeat(2000) });
    const events = vevents((await fetchIcs(feedUrl(g.slug))).body);
    const cut = String(value(bySummary(events, 'Long Text'), 'description'));
    expect(cut.length).toBeLessThanOrEqual(2000);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut.startsWith('Å'.repeat(1998))).toBe(true);
    expect(cut).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])/);
    expect(value(bySummary(events, 'Short Text'), 'description')).toBe('y'.repeat(2000));
  });

  test('a feed holds at most the 1,000 events nearest to today', async () => {
    const g = await gallery();
    // 1,003 upcoming events a day apart, and one that ended yesterday: the 4 farthest in the future drop out.
    const items = Array.from({ length: 1003 }, (_, i) => ({ title: `Day ${i}`, start_date: day(i + 1) }));
    items.push({ title: 'Yesterday', start_date: day(-1) });
    for (let i = 0; i < items.length; i += 100) expect((await g.api.post('/v1/events/batch', { items: items.slice(i, i + 100) })).status).toBe(200);
    const summaries = vevents((await fetchIcs(feedUrl(g.slug))).body).map((ev) => String(value(ev, 'summary')));
    expect(summaries).toHaveLength(1000);
    expect(summaries[0]).toBe('Yesterday');
    expect(summaries).toContain('Day 998');
    expect(summaries).not.toContain('Day 999');
    expect(summaries).not.toContain('Day 1002');
  });

  test('every content line is at most 75 octets, folded without splitting a UTF-8 sequence, and unfolds to the text', async () => {
    const g = await gallery();
    const title = `${'草間彌生 Ünïcødé; a, b\\c '.repeat(12)}🎨🎨🎨`;
    const description = `Line one\nLine two, with; marks\\ and ${'é'.repeat(200)}`;
    await post(g.api, { title, start_date: '2027-01-10', description });
    const body = Buffer.from((await fetchIcs(feedUrl(g.slug))).body, 'utf8');
    const lines = body.toString('utf8').split('\r\n');
    for (const line of lines) expect(Buffer.byteLength(line), line).toBeLessThanOrEqual(75);
    expect(lines.filter((l) => l.startsWith(' ')).length).toBeGreaterThan(3);
    expect(body.toString('utf8')).not.toContain('\ufffd');
    const ev = bySummary(vevents(body.toString('utf8')), title);
    expect(value(ev, 'description')).toBe(description);
  });
});
