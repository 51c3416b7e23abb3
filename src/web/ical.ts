import type { EntityRow, EventRow } from '../db/types.js';
import { eventPath, formatPlace, profilePath } from './format.js';

/**
 * A small RFC 5545 writer for the public feeds. ical-generator folded the whole calendar text one
 * character at a time (string concatenation over megabytes): 1,000 events × 10 KB took seconds of
 * event loop. Here each line is escaped with one regex and folded by slicing its UTF-8 bytes, so the
 * cost is linear and small (README "Stack deviations" has the numbers).
 */

/** The fields of an event a feed shows. */
export type FeedEvent = Pick<EventRow, 'id' | 'slug' | 'title' | 'description' | 'location_city' | 'location_country' | 'start_date' | 'end_date' | 'updated_at'>;

const CRLF = '\r\n';
const FOLD = Buffer.from('\r\n ');
/** RFC 5545 §3.1: lines longer than 75 octets (without the CRLF) are folded. */
const LINE_OCTETS = 75;
const DAY_MS = 86_400_000;

/** TEXT values (§3.3.11): backslash, semicolon, comma and newlines escaped; other controls dropped. */
export function escapeText(value: string): string {
  // Control characters are what could forge content lines; matching them is the point here.
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\\;,]|\r\n|[\r\n]|[\u0000-\u0008\u000b-\u001f\u007f]/g, (ch) => {
    if (ch === '\\' || ch === ';' || ch === ',') return `\\${ch}`;
    return ch === '\n' || ch === '\r' || ch === '\r\n' ? '\\n' : '';
  });
}

/**
 * One content line, folded at 75 octets: a cut never falls inside a UTF-8 sequence (continuation
 * bytes are 10xxxxxx), and each continuation line starts with a space that counts in its 75.
 */
export function foldLine(line: string): Buffer {
  const bytes = Buffer.from(line, 'utf8');
  if (bytes.length <= LINE_OCTETS) return Buffer.concat([bytes, FOLD.subarray(0, 2)]);
  const parts: Buffer[] = [];
  let start = 0;
  let room = LINE_OCTETS;
  while (bytes.length - start > room) {
    let end = start + room;
    while ((bytes[end]! & 0xc0) === 0x80) end--;
    parts.push(bytes.subarray(start, end), FOLD);
    start = end;
    room = LINE_OCTETS - 1;
  }
  parts.push(bytes.subarray(start), FOLD.subarray(0, 2));
  return Buffer.concat(parts);
}

const compactDate = (isoDate: string) => isoDate.replaceAll('-', '');
const nextDay = (isoDate: string) => new Date(Date.parse(`${isoDate}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10);
/** A UTC DATE-TIME (§3.3.5 form 2), no VTIMEZONE needed. */
const utcStamp = (iso: string) => `${new Date(iso).toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;

export interface FeedContext {
  entity: Pick<EntityRow, 'name' | 'slug'>;
  baseUrl: string;
}

export function feedHeader({ entity, baseUrl }: FeedContext): Buffer {
  return Buffer.concat([
    'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Art Catalog//Events feed//EN', 'CALSCALE:GREGORIAN', 'METHOD:PUBLISH',
    `NAME:${escapeText(`${entity.name} · events`)}`, `X-WR-CALNAME:${escapeText(`${entity.name} · events`)}`,
    `URL:${baseUrl}${profilePath(entity.slug)}`,
  ].map(foldLine));
}

export const FEED_FOOTER = Buffer.from(`END:VCALENDAR${CRLF}`);

/**
 * One dated event as an all-day VEVENT (DTEND exclusive). Every value comes from stored data, DTSTAMP
 * included, so the same catalog always yields the same bytes.
 */
export function feedEvent({ entity, baseUrl }: FeedContext, event: FeedEvent & { start_date: string }): Buffer {
  const host = new URL(baseUrl).hostname || 'art-catalog';
  const place = formatPlace(event.location_city, event.location_country);
  const lines = [
    'BEGIN:VEVENT',
    `UID:event-${event.id}@${host}`,
    `DTSTAMP:${utcStamp(event.updated_at)}`,
    `DTSTART;VALUE=DATE:${compactDate(event.start_date)}`,
    `DTEND;VALUE=DATE:${compactDate(nextDay(event.end_date ?? event.start_date))}`,
    `SUMMARY:${escapeText(event.title)}`,
  ];
  if (event.description) lines.push(`DESCRIPTION:${escapeText(event.description)}`);
  if (place) lines.push(`LOCATION:${escapeText(place)}`);
  lines.push(`URL:${baseUrl}${eventPath(entity.slug, event.slug)}`, 'END:VEVENT');
  return Buffer.concat(lines.map(foldLine));
}

/** Writing gives the event loop back after this long, so a cold feed never holds other requests. */
const SLICE_MS = 4;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A calendar of the dated events, in the given order, written in slices of a few milliseconds with
 * the event loop given back between them (decisions §9: no request blocks others for long).
 */
export async function calendarFeed(context: FeedContext, events: FeedEvent[]): Promise<Buffer> {
  const parts = [feedHeader(context)];
  let sliceStart = performance.now();
  for (const event of events) {
    if (event.start_date !== null) parts.push(feedEvent(context, { ...event, start_date: event.start_date }));
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  parts.push(FEED_FOOTER);
  return Buffer.concat(parts);
}

/** Longest description a feed carries (decisions §9), in characters, the ellipsis included. */
export const FEED_DESCRIPTION_MAX = 2_000;

/** A description cut to FEED_DESCRIPTION_MAX characters (UTF-16 units) with "…", never inside a surrogate pair. */
export function cutDescription(text: string | null): string | null {
  if (text === null || text.length <= FEED_DESCRIPTION_MAX) return text;
  let end = FEED_DESCRIPTION_MAX - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
