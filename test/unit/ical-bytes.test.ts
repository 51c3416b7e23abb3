import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { calendarText, type FeedEvent } from '../../src/web/ical.js';

// The feed's exact bytes for a fixed catalog, frozen: the writer may change how it builds them (it went
// from a Buffer per line to one growing Buffer, docs/performance.md), never what it writes. If the
// format changes on purpose, check the new text by hand (and with test/api/ical.test.ts) before updating.
const pieces = ['Licht', 'und', 'Raum;', 'a,b', 'back\\slash', '草間彌生', 'Ünïcødé', '🎨', 'é', 'x'.repeat(70), '\r\n', '\n', '\u0001', ' '];

function fixture(): FeedEvent[] {
  let seed = 27;
  const next = (n: number) => { seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31; return seed % n; };
  const text = (words: number) => Array.from({ length: words }, () => pieces[next(pieces.length)]).join(' ');
  return Array.from({ length: 60 }, (_, i): FeedEvent => ({
    id: i + 1,
    slug: `event-${i}`,
    title: i % 7 === 0 ? `${'t'.repeat(60 + (i % 20))}é${i}` : text(1 + next(12)),
    description: i % 5 === 0 ? null : text(next(400)).slice(0, 2_000),
    location_city: i % 3 === 0 ? null : ['Berlin', 'Köln', 'Seoul', '東京'][i % 4]!,
    location_country: i % 4 === 0 ? null : ['DE', 'KR', 'JP', 'FR'][i % 4]!,
    start_date: i === 13 ? null : `2027-0${1 + (i % 9)}-${String(1 + (i % 28)).padStart(2, '0')}`,
    end_date: i % 2 ? null : `2027-0${1 + (i % 9)}-28`,
    updated_at: `2026-11-${String(1 + (i % 27)).padStart(2, '0')}T10:${String(i % 60).padStart(2, '0')}:00.123Z`,
  }));
}

describe('calendar feed bytes', () => {
  test('a fixed catalog gives the same bytes as the writer always wrote', async () => {
    const feed = await calendarText({ entity: { name: 'Galerie Müller; Söhne', slug: 'galerie-muller-sohne' }, baseUrl: 'https://catalog.example' }, fixture());
    expect(feed.length).toBe(FEED_LENGTH);
    expect(createHash('sha256').update(feed).digest('hex')).toBe(FEED_SHA256);
    for (const line of feed.toString('utf8').split('\r\n')) expect(Buffer.byteLength(line)).toBeLessThanOrEqual(75);
  });
});

const FEED_LENGTH = 72_264;
const FEED_SHA256 = 'b9ac7247ba41ca45ef874336b2546db89a3ab3e89f0ec9ca821c7040e4c4e533';
