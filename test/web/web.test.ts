import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { setPaused } from '../../src/store/entities.js';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { imageProcessed } from '../support/images.js';

/** Public pages (docs/public-pages.md): no key, HTML, every user text escaped, calendar links, 404s, headers, ETags. */

let t: TestApp;
beforeAll(async () => { t = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example', RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t.close(); });

let galleries = 0;
async function gallery(name = `Web Gallery ${++galleries}`, type: 'gallery' | 'artist' = 'gallery') {
  const g = await tenant(t, { name, type });
  return { ...g, api: client(t, g.key) };
}

/** The UTC calendar date `offset` days from today, YYYY-MM-DD. */
const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);

/** A keyless request, as a browser would send it. */
async function visit(url: string, headers: Record<string, string> = {}) {
  const r = await t.app.inject({ method: 'GET', url, headers });
  return { status: r.statusCode, body: r.body, headers: r.headers };
}

const profileUrl = (slug: string) => `/profiles/${encodeURIComponent(slug)}`;
const eventUrl = (slug: string, eventSlug: string) => `${profileUrl(slug)}/events/${encodeURIComponent(eventSlug)}`;

/** Decodes the character references an HTML parser would decode in text and attribute values. */
function decodeEntities(s: string): string {
  const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };
  return s
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => named[name]!);
}

/** Every <a> of the page: decoded href and its text content (tags stripped, entities decoded). */
function anchors(htmlText: string): { href: string; text: string }[] {
  return [...htmlText.matchAll(/<a\b([^>]*)>([\s\S]*?)<\/a>/gi)].map((m) => {
    const href = /\bhref\s*=\s*"([^"]*)"/i.exec(m[1]!)?.[1] ?? /\bhref\s*=\s*'([^']*)'/i.exec(m[1]!)?.[1] ?? '';
    return { href: decodeEntities(href), text: decodeEntities(m[2]!.replace(/<[^>]*>/g, '')).trim() };
  });
}

const hrefsWithText = (htmlText: string, text: string) => anchors(htmlText).filter((a) => a.text.includes(text)).map((a) => a.href);

/** The markup of the <section> labelled by the heading with this id. */
function section(htmlText: string, headingId: string): string {
  const found = new RegExp(`<section aria-labelledby="${headingId}">([\\s\\S]*?)</section>`).exec(htmlText);
  expect(found, headingId).not.toBeNull();
  return found![1]!;
}

/** Every <script> opening tag of a page: only JSON-LD data blocks are allowed (the CSP runs no inline script). */
const scriptTags = (htmlText: string) => [...htmlText.matchAll(/<script\b[^>]*>/gi)].map((m) => m[0]);

/** The text of the page as a reader sees it (tags removed, entities decoded). */
const visibleText = (htmlText: string) => decodeEntities(htmlText.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ');

function cspDirectives(header: string | string[] | number | undefined): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const part of String(header ?? '').split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name.toLowerCase(), values);
  }
  return map;
}

/** The attribute names of every tag, parsed the way an HTML tokenizer splits quoted values. */
function attributeNames(htmlText: string): string[] {
  const names: string[] = [];
  for (const tag of htmlText.matchAll(/<[a-z][a-z0-9-]*((?:\s+[^\s=/>"']+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?)*)\s*\/?>/gi)) {
    for (const attr of tag[1]!.matchAll(/([^\s=/>"']+)(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+))?/g)) names.push(attr[1]!.toLowerCase());
  }
  return names;
}

const XSS = '<script>alert(1)</script><img src=x onerror=alert(2)>';
/** The payload's opening tag in any escaped form: named, decimal or hex character references. */
const ESCAPED_SCRIPT = /(&lt;|&#60;|&#x0*3c;)script(&gt;|&#62;|&#x0*3e;)alert\(1\)/i;

describe('GET /profiles/:slug', () => {
  test('the profile page needs no key and answers 200 text/html with the name, location, description and links', async () => {
    const g = await gallery('Galerie Nordlicht');
    expect((await g.api.put('/v1/profile', {
      description: 'Contemporary painting since 1972.',
      external_url: 'https://nordlicht.example/',
      social_instagram: 'https://instagram.example/nordlicht',
      social_twitter: 'https://twitter.example/nordlicht',
    })).status).toBe(200);

    const r = await visit(profileUrl(g.slug));
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^text\/html\b/);
    expect(r.body).toMatch(/^<!doctype html>/i);
    const text = visibleText(r.body);
    expect(text).toContain('Galerie Nordlicht');
    expect(text).toContain('Berlin');
    expect(text).toMatch(/Germany|\bDE\b/);
    expect(text).toContain('Contemporary painting since 1972.');
    const hrefs = anchors(r.body).map((a) => a.href);
    expect(hrefs).toContain('https://nordlicht.example/');
    expect(hrefs).toContain('https://instagram.example/nordlicht');
    expect(hrefs).toContain('https://twitter.example/nordlicht');
  });

  test('the profile page lists each artwork with title, artist, year, medium, availability and price', async () => {
    const g = await gallery();
    const works = [
      { title: 'Abstraktes Bild', artist_name: 'Gerhard Richter', creation_year: 1987, medium: 'Oil on canvas', availability: 'available', price: 12345, currency: 'EUR' },
      { title: 'Blue Horizon', artist_name: 'Agnes Nilsson', creation_year: 2011, medium: 'Etching on paper', availability: 'reserved', price: 67890, currency: 'USD' },
    ];
    for (const w of works) expect((await g.api.post('/v1/artworks', w)).status).toBe(201);

    const r = await visit(profileUrl(g.slug));
    expect(r.status).toBe(200);
    const text = visibleText(r.body);
    for (const w of works) {
      expect(text).toContain(w.title);
      expect(text).toContain(w.artist_name);
      expect(text).toContain(String(w.creation_year));
      expect(text).toContain(w.medium);
      expect(text).toContain(w.availability);
    }
    expect(text).toMatch(/12[,.\s\u00a0\u202f]?345/);
    expect(text).toMatch(/67[,.\s\u00a0\u202f]?890/);
  });

  test('artwork images are our copies in <picture> (AVIF, WebP, JPEG) with width and height; those below the first two load lazily', async () => {
    const g = await gallery();
    for (const n of [1, 2, 3, 4]) {
      const url = `https://img.example/${g.slug}-${n}.jpg`;
      expect((await g.api.post('/v1/artworks', { title: `Pictured ${n}`, image_url: url })).status).toBe(201);
      if (n < 4) await imageProcessed(t.handle.db, url);
    }
    const r = await visit(profileUrl(g.slug));
    expect(r.body).not.toContain('img.example');
    const imgs = [...r.body.matchAll(/<img\b[^>]*>/gi)].map((m) => m[0]);
    expect(imgs).toHaveLength(3);
    expect(imgs.map((tag) => /\bloading="lazy"/.test(tag))).toEqual([false, false, true]);
    for (const tag of imgs) {
      expect(tag).toMatch(/ src="https:\/\/catalog\.example\/images\/[0-9a-f]{64}-960\.jpg"/);
      expect(tag).toMatch(/ width="2400" height="1800"/);
      expect(tag).toMatch(/ sizes="[^"]+"/);
    }
    const pictures = [...r.body.matchAll(/<picture>[\s\S]*?<\/picture>/g)].map((m) => m[0]);
    expect(pictures[0]).toMatch(/<source type="image\/avif" srcset="[^"]*-480\.avif 480w, [^"]*-960\.avif 960w, [^"]*-1600\.avif 1600w"/);
    expect(pictures[0]).toMatch(/<source type="image\/webp" srcset="[^"]*-480\.webp 480w/);
    // The fourth is not fetched yet: a placeholder, not the gallery's URL.
    expect(r.body).toContain('aria-label="Image coming soon"');
  });

  test('upcoming and ongoing events are shown as upcoming, past ones under past exhibitions, undated ones in neither', async () => {
    const g = await gallery();
    const events = [
      { title: 'Future Opening Night', start_date: day(30) },
      { title: 'Running Exhibition', start_date: day(-10), end_date: day(10) },
      { title: 'Long Gone Show', start_date: '2020-01-10', end_date: '2020-02-10' },
      { title: 'Ended Yesterday', start_date: day(-5), end_date: day(-1) },
    ];
    for (const e of events) expect((await g.api.post('/v1/events', e)).status).toBe(201);
    expect((await g.api.post('/v1/events', { title: 'Some Day Maybe' })).status).toBe(201);
    const r = await visit(profileUrl(g.slug));
    const upcoming = visibleText(section(r.body, 'events-heading'));
    expect(upcoming).toContain('Future Opening Night');
    expect(upcoming).toContain('Running Exhibition');
    expect(upcoming).not.toContain('Long Gone Show');
    expect(upcoming).not.toContain('Ended Yesterday');
    const past = visibleText(section(r.body, 'past-heading'));
    expect(past).toContain('Past exhibitions');
    // Latest first.
    expect(past.indexOf('Ended Yesterday')).toBeGreaterThan(-1);
    expect(past.indexOf('Long Gone Show')).toBeGreaterThan(past.indexOf('Ended Yesterday'));
    expect(past).not.toContain('Future Opening Night');
    expect(visibleText(r.body)).not.toContain('Some Day Maybe');
  });

  test('an unknown slug answers 404 with a friendly HTML page', async () => {
    const r = await visit('/profiles/no-such-gallery-anywhere');
    expect(r.status).toBe(404);
    expect(String(r.headers['content-type'])).toMatch(/^text\/html\b/);
    expect(r.body).toMatch(/<html/i);
    expect(r.body).toMatch(/not found/i);
    expect(r.body).not.toContain('"error"');
  });

  test('a non-Latin profile slug works percent-encoded, and so do its event links', async () => {
    const g = await gallery('草間彌生', 'artist');
    expect(g.slug).toBe('草間彌生');
    const posted = await g.api.post('/v1/events', { title: '無限の網', start_date: day(20) });
    expect(posted.status).toBe(201);

    const url = profileUrl(g.slug);
    expect(url).toBe('/profiles/%E8%8D%89%E9%96%93%E5%BD%8C%E7%94%9F');
    const r = await visit(url);
    expect(r.status).toBe(200);
    expect(visibleText(r.body)).toContain('草間彌生');
    const link = hrefsWithText(r.body, '無限の網')[0];
    expect(link).toBeDefined();
    // Whatever form the page links in, following it reaches the event page.
    const followed = await visit(new URL(link!, 'https://catalog.example').pathname);
    expect(followed.status).toBe(200);
    expect(visibleText(followed.body)).toContain('無限の網');
    expect((await visit(eventUrl(g.slug, posted.body.slug))).status).toBe(200);
  });
});

describe('calendar links on the profile page', () => {
  test('with ical_url set the page links Subscribe (webcal:), Add to Google Calendar and the feed itself', async () => {
    const g = await gallery();
    expect((await g.api.put('/v1/profile', { ical_url: 'https://x.example/cal.ics' })).status).toBe(200);
    const r = await visit(profileUrl(g.slug));
    expect(r.status).toBe(200);
    expect(hrefsWithText(r.body, 'Subscribe to calendar')).toEqual(['webcal://x.example/cal.ics']);
    expect(hrefsWithText(r.body, 'Add to Google Calendar')).toEqual([
      `https://calendar.google.com/calendar/r?cid=${encodeURIComponent('webcal://x.example/cal.ics')}`,
    ]);
    expect(hrefsWithText(r.body, 'Add to Google Calendar')[0]).toBe(
      'https://calendar.google.com/calendar/r?cid=webcal%3A%2F%2Fx.example%2Fcal.ics',
    );
    expect(anchors(r.body).map((a) => a.href)).toContain('https://x.example/cal.ics');
  });

  test('an http ical_url with a query string becomes webcal: with the query intact', async () => {
    const g = await gallery();
    const ical = 'http://cal.example/feed.ics?user=7&lang=de';
    expect((await g.api.put('/v1/profile', { ical_url: ical })).status).toBe(200);
    const r = await visit(profileUrl(g.slug));
    expect(hrefsWithText(r.body, 'Subscribe to calendar')).toEqual(['webcal://cal.example/feed.ics?user=7&lang=de']);
    expect(hrefsWithText(r.body, 'Add to Google Calendar')).toEqual([
      `https://calendar.google.com/calendar/r?cid=${encodeURIComponent('webcal://cal.example/feed.ics?user=7&lang=de')}`,
    ]);
    // A raw "&" would be left to the parser's error recovery; it must be escaped in the attribute.
    expect(r.body).not.toContain('user=7&lang=de"');
  });

  test('without ical_url there are no calendar links, and clearing it removes them', async () => {
    const g = await gallery();
    const before = await visit(profileUrl(g.slug));
    expect(before.status).toBe(200);
    expect(before.body).not.toContain('Subscribe to calendar');
    expect(before.body).not.toContain('Add to Google Calendar');
    expect(before.body).not.toContain('webcal:');

    expect((await g.api.put('/v1/profile', { ical_url: 'https://x.example/cal.ics' })).status).toBe(200);
    expect((await visit(profileUrl(g.slug))).body).toContain('Subscribe to calendar');

    expect((await g.api.put('/v1/profile', { ical_url: null })).status).toBe(200);
    const cleared = await visit(profileUrl(g.slug));
    expect(cleared.body).not.toContain('Subscribe to calendar');
    expect(cleared.body).not.toContain('Add to Google Calendar');
    expect(cleared.body).not.toContain('calendar.google.com');

    expect((await g.api.put('/v1/profile', { ical_url: 'https://x.example/cal.ics' })).status).toBe(200);
    expect((await g.api.put('/v1/profile', { ical_url: '' })).status).toBe(200);
    const emptied = await visit(profileUrl(g.slug));
    expect(emptied.body).not.toContain('Subscribe to calendar');
    expect(emptied.body).not.toContain('webcal:');
  });
});

describe('escaping user text', () => {
  test('a script in the description and in an artwork title is shown as text, never as markup', async () => {
    const g = await gallery();
    expect((await g.api.put('/v1/profile', { description: XSS })).status).toBe(200);
    expect((await g.api.post('/v1/artworks', { title: XSS, artist_name: XSS, medium: XSS, image_url: 'https://img.example/x.jpg' })).status).toBe(201);

    const r = await visit(profileUrl(g.slug));
    expect(r.status).toBe(200);
    expect(r.body).not.toContain('<script>alert(1)');
    expect(r.body).not.toContain('<img src=x onerror');
    expect(scriptTags(r.body)).toEqual(['<script type="application/ld+json">']);
    expect(r.body).toMatch(ESCAPED_SCRIPT);
    // Escaped, the payload still reads as it was written.
    expect(visibleText(r.body)).toContain(XSS);
  });

  test('a quote in a title cannot break out of an attribute', async () => {
    const g = await gallery();
    const title = 'Untitled" onmouseover="alert(3)';
    expect((await g.api.post('/v1/artworks', { title, image_url: 'https://img.example/q.jpg' })).status).toBe(201);
    await imageProcessed(t.handle.db, 'https://img.example/q.jpg');
    const r = await visit(profileUrl(g.slug));
    expect(r.status).toBe(200);
    expect(r.body).toContain('<picture>');
    expect(r.body).not.toContain('" onmouseover="alert(3)');
    const names = attributeNames(r.body);
    expect(names).toContain('alt');
    expect(names).not.toContain('onmouseover');
    expect(decodeEntities(r.body)).toContain(`alt="${title}`);
  });

  test('a script in an event title and description is escaped on the profile and the event page', async () => {
    const g = await gallery();
    const posted = await g.api.post('/v1/events', { title: `Opening ${XSS}`, description: XSS, start_date: day(15) });
    expect(posted.status).toBe(201);
    for (const url of [profileUrl(g.slug), eventUrl(g.slug, posted.body.slug)]) {
      const r = await visit(url);
      expect(r.status).toBe(200);
      expect(r.body).not.toContain('<script>alert(1)');
      expect(r.body).not.toContain('<img src=x onerror');
      expect(r.body).toMatch(ESCAPED_SCRIPT);
    }
  });
});

describe('GET /profiles/:slug/events/:event_slug', () => {
  test('the event page shows the event and links its .ics download', async () => {
    const g = await gallery();
    const posted = await g.api.post('/v1/events', {
      title: 'Summer Exhibition', event_type: 'exhibition', description: 'Works on paper.',
      location_city: 'Paris', location_country: 'FR', start_date: '2027-06-01', end_date: '2027-08-31',
    });
    expect(posted.status).toBe(201);
    const url = eventUrl(g.slug, posted.body.slug);
    const r = await visit(url);
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^text\/html\b/);
    const text = visibleText(r.body);
    expect(text).toContain('Summer Exhibition');
    expect(text).toContain('Works on paper.');
    expect(text).toContain('Paris');
    expect(text).toContain('2027');
    const ics = anchors(r.body).map((a) => a.href).filter((href) => href.endsWith('/event.ics'));
    expect(ics).toHaveLength(1);
    expect(new URL(ics[0]!, 'https://catalog.example').pathname).toBe(`${url}/event.ics`);
    const download = await visit(`${url}/event.ics`);
    expect(download.status).toBe(200);
    expect(download.body).toContain('BEGIN:VEVENT');
  });

  test('an unknown event slug answers 404 HTML', async () => {
    const g = await gallery();
    const r = await visit(eventUrl(g.slug, 'no-such-event'));
    expect(r.status).toBe(404);
    expect(String(r.headers['content-type'])).toMatch(/^text\/html\b/);
    expect((await visit(`${eventUrl(g.slug, 'no-such-event')}/event.ics`)).status).toBe(404);
  });

  test("another entity's event slug under this profile answers 404", async () => {
    const a = await gallery();
    const b = await gallery();
    const posted = await b.api.post('/v1/events', { title: 'Only At B', start_date: day(5) });
    expect(posted.status).toBe(201);
    expect((await visit(eventUrl(b.slug, posted.body.slug))).status).toBe(200);
    expect((await visit(eventUrl(a.slug, posted.body.slug))).status).toBe(404);
  });
});

describe('paused entities', () => {
  test('a paused entity has no public profile, feed or event pages, and they return on resume', async () => {
    const g = await gallery();
    const posted = await g.api.post('/v1/events', { title: 'Paused Show', start_date: day(12) });
    expect(posted.status).toBe(201);
    const urls = [
      profileUrl(g.slug),
      `${profileUrl(g.slug)}/events.ics`,
      eventUrl(g.slug, posted.body.slug),
      `${eventUrl(g.slug, posted.body.slug)}/event.ics`,
    ];
    for (const url of urls) expect((await visit(url)).status, url).toBe(200);

    await setPaused(t.handle.db, g.entityId, true);
    for (const url of urls) {
      const r = await visit(url);
      expect(r.status, url).toBe(404);
      expect(r.body, url).not.toContain('Paused Show');
    }

    await setPaused(t.handle.db, g.entityId, false);
    for (const url of urls) expect((await visit(url)).status, url).toBe(200);
  });
});

describe('security headers', () => {
  test('public pages send a CSP whose script-src allows self and no inline script, and nosniff', async () => {
    const g = await gallery();
    const posted = await g.api.post('/v1/events', { title: 'Header Check', start_date: day(3) });
    for (const url of [profileUrl(g.slug), eventUrl(g.slug, posted.body.slug), '/profiles/unknown-header-check']) {
      const r = await visit(url);
      const csp = cspDirectives(r.headers['content-security-policy']);
      const scriptSrc = csp.get('script-src');
      expect(scriptSrc, url).toBeDefined();
      expect(scriptSrc, url).toContain("'self'");
      expect(scriptSrc, url).not.toContain("'unsafe-inline'");
      expect(scriptSrc, url).not.toContain("'unsafe-eval'");
      expect(r.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });

  test('the pages carry no inline script the CSP would have to allow', async () => {
    const g = await gallery();
    const r = await visit(profileUrl(g.slug));
    expect(scriptTags(r.body)).toEqual(['<script type="application/ld+json">']);
    const names = attributeNames(r.body);
    expect(names).toContain('href');
    expect(names.filter((n) => n.startsWith('on'))).toEqual([]);
  });
});

describe('ETags', () => {
  test('the profile page answers 304 to its own ETag, and a new artwork changes the ETag', async () => {
    const g = await gallery();
    const first = await visit(profileUrl(g.slug));
    const etag = first.headers.etag;
    expect(etag).toBeTruthy();

    const again = await visit(profileUrl(g.slug), { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');

    expect((await g.api.post('/v1/artworks', { title: 'Changes The Page' })).status).toBe(201);
    const changed = await visit(profileUrl(g.slug), { 'if-none-match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.body).toContain('Changes The Page');
    expect(changed.headers.etag).toBeTruthy();
    expect(changed.headers.etag).not.toBe(etag);
  });

  test('the events feed answers 304 to its own ETag, and a new event changes the ETag', async () => {
    const g = await gallery();
    expect((await g.api.post('/v1/events', { title: 'Feed One', start_date: '2027-03-01' })).status).toBe(201);
    const url = `${profileUrl(g.slug)}/events.ics`;
    const first = await visit(url);
    expect(first.status).toBe(200);
    const etag = first.headers.etag;
    expect(etag).toBeTruthy();

    const again = await visit(url, { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');

    expect((await g.api.post('/v1/events', { title: 'Feed Two', start_date: '2027-04-01' })).status).toBe(201);
    const changed = await visit(url, { 'if-none-match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.body).toContain('Feed Two');
    expect(changed.headers.etag).not.toBe(etag);
  });

  test('the event page answers 304 to its own ETag, and an edit of the event changes it', async () => {
    const g = await gallery();
    const posted = await g.api.post('/v1/events', { title: 'Etag Event', start_date: day(40) });
    const url = eventUrl(g.slug, posted.body.slug);
    const first = await visit(url);
    const etag = first.headers.etag;
    expect(etag).toBeTruthy();
    expect((await visit(url, { 'if-none-match': etag! })).status).toBe(304);

    expect((await g.api.post('/v1/events', { title: 'Etag Event', description: 'Now with a description.' })).status).toBe(201);
    const changed = await visit(url, { 'if-none-match': etag! });
    expect(changed.status).toBe(200);
    expect(changed.body).toContain('Now with a description.');
    expect(changed.headers.etag).not.toBe(etag);
  });
});

describe('GET /assets/site.css', () => {
  test('the stylesheet is served as text/css without a key', async () => {
    const r = await visit('/assets/site.css');
    expect(r.status).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^text\/css\b/);
    expect(r.body).toMatch(/\{[^}]*:[^}]*\}/);
  });

  test('the profile page links the stylesheet it is served with', async () => {
    const g = await gallery();
    const r = await visit(profileUrl(g.slug));
    expect(r.body).toMatch(/<link\b[^>]*rel="stylesheet"[^>]*href="\/assets\/site\.css"/);
  });
});

/** The JSON-LD of a page, parsed. */
function jsonLd(htmlText: string): any {
  const found = /<script type="application\/ld\+json">([\s\S]*?)<\/script>/.exec(htmlText);
  expect(found).not.toBeNull();
  return JSON.parse(found![1]!);
}

/** The content of a <meta> by name or property. */
const meta = (htmlText: string, key: string) =>
  decodeEntities(new RegExp(`<meta (?:name|property)="${key.replace(/[.:]/g, '\\$&')}" content="([^"]*)">`).exec(htmlText)?.[1] ?? '');
const canonical = (htmlText: string) => decodeEntities(/<link rel="canonical" href="([^"]*)">/.exec(htmlText)?.[1] ?? '');

describe('GET /profiles/:slug/artworks/:id', () => {
  test("each card links to the artwork's page, which shows every field and links the gallery's own page for it", async () => {
    const g = await gallery('Galerie Werk');
    const posted = await g.api.post('/v1/artworks', {
      title: 'Abstraktes Bild', artist_name: 'Gerhard Richter', creation_year: 1987, medium: 'Oil on canvas', dimensions: '200 × 140 cm',
      availability: 'available', price: 125000, currency: 'EUR', description: 'Squeegee painting.', image_url: 'https://img.example/ab.jpg',
      external_url: 'https://werk.example/works/ab',
    });
    expect(posted.status).toBe(201);
    const hash = await imageProcessed(t.handle.db, 'https://img.example/ab.jpg');
    const profile = await visit(profileUrl(g.slug));
    const link = hrefsWithText(profile.body, 'Abstraktes Bild')[0];
    expect(link).toBe(`${profileUrl(g.slug)}/artworks/${posted.body.id}`);

    const r = await visit(link!);
    expect(r.status).toBe(200);
    const text = visibleText(r.body);
    for (const shown of ['Abstraktes Bild', 'Gerhard Richter', '1987', 'Oil on canvas', '200 × 140 cm', 'available', 'Squeegee painting.']) expect(text).toContain(shown);
    expect(text).toMatch(/125[,.\s\u00a0\u202f]?000/);
    expect(r.body).toContain(`src="https://catalog.example/images/${hash}-960.jpg"`);
    expect(r.body).not.toContain('img.example');
    expect(anchors(r.body).map((a) => a.href)).toEqual(expect.arrayContaining(['https://werk.example/works/ab', profileUrl(g.slug)]));

    expect(canonical(r.body)).toBe(`https://catalog.example${link}`);
    expect(meta(r.body, 'og:image')).toBe(`https://catalog.example/images/${hash}-1600.jpg`);
    expect(meta(r.body, 'twitter:card')).toBe('summary_large_image');
    const data = jsonLd(r.body);
    expect(data['@type']).toBe('VisualArtwork');
    expect(data).toMatchObject({ name: 'Abstraktes Bild', creator: { '@type': 'Person', name: 'Gerhard Richter' }, dateCreated: '1987', artMedium: 'Oil on canvas', image: `https://catalog.example/images/${hash}-1600.jpg` });
    expect(data.offers).toMatchObject({ price: 125000, priceCurrency: 'EUR', availability: 'https://schema.org/InStock' });
  });

  test("a sold work shows no price; another entity's artwork, or an id that is no number, is 404", async () => {
    const g = await gallery();
    const other = await gallery();
    const sold = await g.api.post('/v1/artworks', { title: 'Gone', availability: 'sold', price: 777777, currency: 'EUR' });
    const r = await visit(`${profileUrl(g.slug)}/artworks/${sold.body.id}`);
    expect(r.status).toBe(200);
    expect(visibleText(r.body)).not.toMatch(/777[,.\s\u00a0\u202f]?777/);
    expect(jsonLd(r.body).offers).toEqual(expect.not.objectContaining({ price: expect.anything() }));
    expect((await visit(`${profileUrl(other.slug)}/artworks/${sold.body.id}`)).status).toBe(404);
    expect((await visit(`${profileUrl(g.slug)}/artworks/1e3`)).status).toBe(404);
    expect((await visit(`${profileUrl(g.slug)}/artworks/-1`)).status).toBe(404);
  });
});

describe('metadata of the public pages', () => {
  test('the profile page has a title, description, canonical, Open Graph and Twitter tags and ArtGallery JSON-LD with its upcoming events', async () => {
    const g = await gallery('Galerie Meta');
    expect((await g.api.put('/v1/profile', { description: 'Painting & sculpture since 1990.', external_url: 'https://meta.example/' })).status).toBe(200);
    expect((await g.api.post('/v1/artworks', { title: 'Pictured', image_url: 'https://img.example/p.jpg' })).status).toBe(201);
    const hash = await imageProcessed(t.handle.db, 'https://img.example/p.jpg', 1200, 900);
    expect((await g.api.post('/v1/events', { title: 'Big Show', event_type: 'exhibition', start_date: day(10), end_date: day(40) })).status).toBe(201);
    const r = await visit(profileUrl(g.slug));
    expect(decodeEntities(/<title>([^<]*)<\/title>/.exec(r.body)![1]!)).toContain('Galerie Meta');
    expect(meta(r.body, 'description')).toBe('Painting & sculpture since 1990.');
    expect(canonical(r.body)).toBe(`https://catalog.example${profileUrl(g.slug)}`);
    expect(meta(r.body, 'og:title')).toContain('Galerie Meta');
    expect(meta(r.body, 'og:url')).toBe(canonical(r.body));
    expect(meta(r.body, 'og:type')).toBe('profile');
    // A 1200 px original: our largest copy is 1200 px.
    expect(meta(r.body, 'og:image')).toBe(`https://catalog.example/images/${hash}-1200.jpg`);
    expect(meta(r.body, 'twitter:title')).toContain('Galerie Meta');
    const data = jsonLd(r.body);
    expect(data['@context']).toBe('https://schema.org');
    expect(data).toMatchObject({ '@type': 'ArtGallery', name: 'Galerie Meta', sameAs: ['https://meta.example/'], address: { addressLocality: 'Berlin', addressCountry: 'DE' } });
    expect(data.event).toEqual([expect.objectContaining({ '@type': 'ExhibitionEvent', name: 'Big Show', startDate: day(10), endDate: day(40) })]);
  });

  test("the profile's JSON-LD cuts each event's description like a meta description; the event's own page keeps it whole", async () => {
    const g = await gallery('Galerie Long Texts');
    const description = `${'Farbe, Licht und Raum. '.repeat(400)}Ende.`;
    const created = await g.api.post('/v1/events', { title: 'Long Show', event_type: 'exhibition', start_date: day(5), description });
    expect(created.status).toBe(201);
    const profile = await visit(profileUrl(g.slug));
    const [node] = jsonLd(profile.body).event;
    expect(node.name).toBe('Long Show');
    expect(node.description.length).toBeLessThanOrEqual(200);
    expect(node.description).toMatch(/^Farbe, Licht und Raum\. .*…$/);
    expect(profile.body.length).toBeLessThan(description.length);
    const eventPage = await visit(new URL(node.url).pathname);
    expect(jsonLd(eventPage.body).description).toBe(description);
  });

  test('an artist is a Person; an event page has Event JSON-LD and its canonical; the 404 page is noindex', async () => {
    const a = await gallery('Solo Artist', 'artist');
    expect(jsonLd((await visit(profileUrl(a.slug))).body)['@type']).toBe('Person');
    const posted = await a.api.post('/v1/events', { title: 'Artist Talk', event_type: 'talk', start_date: '2027-03-03', location_city: 'Paris', location_country: 'FR' });
    const r = await visit(eventUrl(a.slug, posted.body.slug));
    expect(canonical(r.body)).toBe(`https://catalog.example${eventUrl(a.slug, posted.body.slug)}`);
    expect(jsonLd(r.body)).toMatchObject({ '@type': 'Event', name: 'Artist Talk', startDate: '2027-03-03', location: { '@type': 'Place', address: { addressLocality: 'Paris', addressCountry: 'FR' } }, organizer: { '@type': 'Person', name: 'Solo Artist' } });
    expect((await visit('/profiles/nobody-here')).body).toContain('<meta name="robots" content="noindex">');
  });

  test('user text cannot close the JSON-LD script element', async () => {
    const g = await gallery();
    expect((await g.api.put('/v1/profile', { description: '</script><script>alert(1)</script>' })).status).toBe(200);
    const r = await visit(profileUrl(g.slug));
    expect(r.body.match(/<\/script>/g)).toHaveLength(1);
    expect(jsonLd(r.body).description).toBe('</script><script>alert(1)</script>');
  });

  test('a description in another language is marked with its lang; the interface stays English', async () => {
    const g = await gallery();
    expect((await g.api.put('/v1/profile', { description: 'Die Galerie zeigt seit 1972 Malerei und Skulptur, mit einem Schwerpunkt auf der Kunst der Gegenwart.' })).status).toBe(200);
    const r = await visit(profileUrl(g.slug));
    expect(r.body).toMatch(/<html lang="en">/);
    expect(r.body).toMatch(/<p class="description" lang="de">/);
    const ja = await gallery('日本の画廊', 'gallery');
    expect((await ja.api.put('/v1/profile', { description: '現代美術のギャラリーです。' })).status).toBe(200);
    expect((await visit(profileUrl(ja.slug))).body).toMatch(/<p class="description" lang="ja">/);
  });
});

describe('pages past the end, favicon, robots.txt and sitemaps', () => {
  test('a profile page past the last page of artworks is 404; the last one is 200', async () => {
    const g = await gallery();
    expect((await g.api.post('/v1/artworks/batch', { items: Array.from({ length: 61 }, (_, i) => ({ title: `W ${i}` })) })).status).toBe(200);
    expect((await visit(`${profileUrl(g.slug)}?page=2`)).status).toBe(200);
    const past = await visit(`${profileUrl(g.slug)}?page=3`);
    expect(past.status).toBe(404);
    expect(past.body).not.toContain('Artworks (');
    expect(canonical((await visit(`${profileUrl(g.slug)}?page=2`)).body)).toBe(`https://catalog.example${profileUrl(g.slug)}?page=2`);
  });

  test('the favicon is served and linked from every page', async () => {
    const icon = await visit('/favicon.svg');
    expect(icon.status).toBe(200);
    expect(String(icon.headers['content-type'])).toMatch(/^image\/svg\+xml/);
    expect((await visit('/favicon.ico')).status).toBe(200);
    const g = await gallery();
    expect((await visit(profileUrl(g.slug))).body).toContain('<link rel="icon" href="/favicon.svg"');
  });

  test('robots.txt names the sitemap; the sitemap lists every public page of active entities and leaves paused ones out', async () => {
    const robots = await visit('/robots.txt');
    expect(robots.status).toBe(200);
    expect(robots.body).toContain('Sitemap: https://catalog.example/sitemap.xml');
    expect(robots.body).toContain('Disallow: /v1/');

    const shown = await gallery();
    const paused = await gallery();
    const art = await shown.api.post('/v1/artworks', { title: 'Mapped' });
    const ev = await shown.api.post('/v1/events', { title: 'Mapped Event', start_date: day(3) });
    await setPaused(t.handle.db, paused.entityId, true);

    const index = await visit('/sitemap.xml');
    expect(index.status).toBe(200);
    expect(String(index.headers['content-type'])).toMatch(/^application\/xml/);
    const parts = [...index.body.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => decodeEntities(m[1]!));
    expect(parts).toContain(`https://catalog.example${profileUrl(shown.slug)}/sitemap.xml`);
    expect(parts).not.toContain(`https://catalog.example${profileUrl(paused.slug)}/sitemap.xml`);

    const part = await visit(`${profileUrl(shown.slug)}/sitemap.xml`);
    const urls = [...part.body.matchAll(/<loc>([^<]*)<\/loc>/g)].map((m) => decodeEntities(m[1]!));
    expect(urls).toEqual(expect.arrayContaining([
      `https://catalog.example${profileUrl(shown.slug)}`,
      `https://catalog.example${profileUrl(shown.slug)}/artworks/${art.body.id}`,
      `https://catalog.example${eventUrl(shown.slug, ev.body.slug)}`,
    ]));
    expect((await visit(`${profileUrl(paused.slug)}/sitemap.xml`)).status).toBe(404);
    expect((await visit(`${profileUrl(shown.slug)}/sitemap.xml?part=2`)).status).toBe(404);

    // A new entity is in the next sitemap index at once.
    const later = await gallery();
    expect((await visit('/sitemap.xml')).body).toContain(`${profileUrl(later.slug)}/sitemap.xml`);
  });
});
