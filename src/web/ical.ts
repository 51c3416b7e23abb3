import type { EntityRow, EventRow } from '../db/types.js';
import { eventPath, formatPlace, profilePath } from './format.js';
import { daysFrom } from '../domain/days.js';

/**
 * A small RFC 5545 writer for the public calendars. ical-generator folded the whole calendar text one
 * character at a time (string concatenation over megabytes): 1,000 events × 10 KB took seconds of
 * event loop. Here each line is escaped with one regex and folded by slicing its UTF-8 bytes, so the
 * cost is linear and small (docs/architecture.md, Stack deviation: our own iCalendar writer).
 */

/** The fields of an event a calendar shows. */
export type FeedEvent = Pick<EventRow, 'id' | 'slug' | 'title' | 'description' | 'location_city' | 'location_country' | 'start_date' | 'end_date' | 'updated_at'>;

const FOLD = Buffer.from('\r\n ');
/** RFC 5545 §3.1: lines longer than 75 octets (without the CRLF) are folded. */
const LINE_OCTETS = 75;

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
 * Writes content lines into one growing Buffer, each folded at 75 octets as it is copied in: a cut
 * never falls inside a UTF-8 sequence (continuation bytes are 10xxxxxx), and each continuation line
 * starts with a space that counts in its 75. One Buffer per calendar, not one per line, per event and per
 * calendar: rebuilding a calendar of 1,000 events after every write allocated ~4 times its 2.4 MB each time,
 * and the mark-compacts that followed were the stall scenario's worst answers (docs/performance.md).
 */
class LineWriter {
  private out: Buffer;
  private length = 0;
  /** A line's UTF-8 bytes before folding; at most 3 bytes per UTF-16 unit. */
  private scratch = Buffer.allocUnsafe(1024);

  constructor(sizeHint: number) {
    this.out = Buffer.allocUnsafe(Math.max(1024, sizeHint));
  }

  line(text: string): void {
    if (this.scratch.length < text.length * 3) this.scratch = Buffer.allocUnsafe(text.length * 3);
    const bytes = this.scratch;
    const size = bytes.write(text, 0, 'utf8');
    // Room for the line, a fold (3 bytes) per 74 octets and the CRLF.
    this.reserve(size + 3 * Math.ceil(size / (LINE_OCTETS - 1)) + 2);
    let start = 0;
    let room = LINE_OCTETS;
    while (size - start > room) {
      let end = start + room;
      while ((bytes[end]! & 0xc0) === 0x80) end--;
      this.length += bytes.copy(this.out, this.length, start, end);
      this.length += FOLD.copy(this.out, this.length);
      start = end;
      room = LINE_OCTETS - 1;
    }
    this.length += bytes.copy(this.out, this.length, start, size);
    this.out[this.length++] = 0x0d;
    this.out[this.length++] = 0x0a;
  }

  /** The bytes written; copied to their own Buffer when the slack is large (a cache counts what it keeps by its length). */
  finish(): Buffer {
    const written = this.out.subarray(0, this.length);
    return this.out.length - this.length > this.length / 8 ? Buffer.from(written) : written;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.out.length) return;
    const grown = Buffer.allocUnsafe(Math.max(Math.ceil(this.out.length * 1.5), this.length + bytes));
    this.out.copy(grown, 0, 0, this.length);
    this.out = grown;
  }
}

const compactDate = (isoDate: string) => isoDate.replaceAll('-', '');
/** A UTC DATE-TIME (§3.3.5 form 2), no VTIMEZONE needed. */
const utcStamp = (iso: string) => `${new Date(iso).toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;

export interface FeedContext {
  entity: Pick<EntityRow, 'name' | 'slug'>;
  baseUrl: string;
}

function writeHeader(out: LineWriter, { entity, baseUrl }: FeedContext): void {
  for (const line of [
    'BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Art Catalog//Events feed//EN', 'CALSCALE:GREGORIAN', 'METHOD:PUBLISH',
    `NAME:${escapeText(`${entity.name} · events`)}`, `X-WR-CALNAME:${escapeText(`${entity.name} · events`)}`,
    `URL:${baseUrl}${profilePath(entity.slug)}`,
  ]) out.line(line);
}

/**
 * One dated event as an all-day VEVENT (DTEND exclusive). Every value comes from stored data, DTSTAMP
 * included, so the same catalog always yields the same bytes.
 */
function writeEvent(out: LineWriter, { entity, baseUrl }: FeedContext, host: string, event: FeedEvent, start: string): void {
  const place = formatPlace(event.location_city, event.location_country);
  out.line('BEGIN:VEVENT');
  out.line(`UID:event-${event.id}@${host}`);
  out.line(`DTSTAMP:${utcStamp(event.updated_at)}`);
  out.line(`DTSTART;VALUE=DATE:${compactDate(start)}`);
  out.line(`DTEND;VALUE=DATE:${compactDate(daysFrom(event.end_date ?? start, 1))}`);
  out.line(`SUMMARY:${escapeText(event.title)}`);
  if (event.description) out.line(`DESCRIPTION:${escapeText(event.description)}`);
  if (place) out.line(`LOCATION:${escapeText(place)}`);
  out.line(`URL:${baseUrl}${eventPath(entity.slug, event.slug)}`);
  out.line('END:VEVENT');
}

/** About what a calendar of these events takes, so that its Buffer rarely grows: text plus ~350 bytes of lines an event. */
const sizeHint = (events: readonly FeedEvent[]): number =>
  events.reduce((sum, e) => sum + 400 + 1.1 * (e.title.length + (e.description?.length ?? 0)), 400);

/** Writing gives the event loop back after this long, so a cold calendar never holds other requests. */
const SLICE_MS = 4;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A calendar of the dated events, in the given order, written in slices of a few milliseconds with
 * the event loop given back between them (docs/architecture.md, The event-loop budget).
 */
export async function calendarText(context: FeedContext, events: FeedEvent[]): Promise<Buffer> {
  const out = new LineWriter(sizeHint(events));
  const host = new URL(context.baseUrl).hostname || 'art-catalog';
  writeHeader(out, context);
  let sliceStart = performance.now();
  for (const event of events) {
    if (event.start_date !== null) writeEvent(out, context, host, event, event.start_date);
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
  }
  out.line('END:VCALENDAR');
  return out.finish();
}

/** Longest description a calendar carries (docs/public-pages.md, Pages and feeds), in characters, the ellipsis included. */
export const CALENDAR_DESCRIPTION_MAX = 2_000;

/** A description cut to CALENDAR_DESCRIPTION_MAX characters (UTF-16 units) with "…", never inside a surrogate pair. */
export function cutDescription(text: string | null): string | null {
  if (text === null || text.length <= CALENDAR_DESCRIPTION_MAX) return text;
  let end = CALENDAR_DESCRIPTION_MAX - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}
