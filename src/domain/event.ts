import { WRITABLE_EVENT_FIELDS, type EventFields, type EventPostBody } from '../schemas/events.js';
import { Problems, checkDateOrder, checkText, normalizeTitle, pick, upperCase } from './rules.js';

export type EventInput = Partial<EventFields> & { title: string };

export const EVENT_CHANGE_FIELDS = [...WRITABLE_EVENT_FIELDS, 'last_synced_at'] as const;

/** The event a POST describes: its writable fields, normalized. */
export function eventFromPost(body: EventPostBody): EventInput {
  const input = pick(body as EventInput, WRITABLE_EVENT_FIELDS) as EventInput;
  const problems = new Problems();
  checkText(input, problems);
  input.title = normalizeTitle(input.title, problems);
  checkDateOrder(input.start_date, input.end_date, problems);
  problems.throwIfAny();
  if (input.location_country != null) input.location_country = upperCase(input.location_country);
  return input;
}

/** Re-checked after a merge: a re-post may send only one of the two dates. */
export function checkMergedDates(event: { start_date: string | null; end_date: string | null }): void {
  const problems = new Problems();
  checkDateOrder(event.start_date, event.end_date, problems);
  problems.throwIfAny();
}
