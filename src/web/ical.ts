import ical from 'ical-generator';
import type { EntityRow, EventRow } from '../db/types.js';
import { eventPath, formatPlace, profilePath } from './format.js';

const DAY_MS = 86_400_000;
const utcDate = (isoDate: string, plusDays = 0) => new Date(Date.parse(`${isoDate}T00:00:00Z`) + plusDays * DAY_MS);

/**
 * An RFC 5545 feed of dated events as all-day events (DTEND exclusive). Every value is derived from
 * stored data, DTSTAMP included, so the same catalog always yields the same bytes (and ETag).
 */
export function calendarFeed(entity: EntityRow, events: EventRow[], baseUrl: string): string {
  const host = new URL(baseUrl).hostname || 'art-catalog';
  const calendar = ical({
    name: `${entity.name} · events`,
    prodId: { company: 'Art Catalog', product: 'Events feed', language: 'EN' },
    url: `${baseUrl}${profilePath(entity.slug)}`,
  });
  for (const event of events) {
    if (!event.start_date) continue;
    const place = formatPlace(event.location_city, event.location_country);
    calendar.createEvent({
      id: `event-${event.id}@${host}`,
      allDay: true,
      start: utcDate(event.start_date),
      end: utcDate(event.end_date ?? event.start_date, 1),
      stamp: new Date(event.updated_at),
      summary: event.title,
      ...(event.description ? { description: event.description } : {}),
      ...(place ? { location: place } : {}),
      url: `${baseUrl}${eventPath(entity.slug, event.slug)}`,
    });
  }
  return calendar.toString();
}
