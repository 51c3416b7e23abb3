import { WRITABLE_EVENT_FIELDS, type EventFields, type EventPostBody, type EventPutBody } from '../schemas/events.js';
import { Problems, checkDateOrder, checkText, normalizeTitle, pick, upperCase } from './rules.js';

export type EventPatch = Partial<EventFields>;
export type EventInput = EventPatch & { title: string };

export const EVENT_CHANGE_FIELDS = [...WRITABLE_EVENT_FIELDS, 'last_synced_at'] as const;

function normalize(patch: EventPatch): EventPatch {
  const problems = new Problems();
  checkText(patch, problems);
  if (patch.title != null) patch.title = normalizeTitle(patch.title, problems);
  checkDateOrder(patch.start_date, patch.end_date, problems);
  problems.throwIfAny();
  if (patch.location_country != null) patch.location_country = upperCase(patch.location_country);
  return patch;
}

/** The event a POST describes: its writable fields, normalized. */
export const eventFromPost = (body: EventPostBody): EventInput =>
  normalize(pick(body as EventInput, WRITABLE_EVENT_FIELDS)) as EventInput;

/** The changes a PUT asks for: `null` clears a field, an absent field stays. */
export const eventFromPut = (body: EventPutBody): EventPatch => normalize(pick(body as EventPatch, WRITABLE_EVENT_FIELDS));

/** Re-checked after a merge: a re-post may send only one of the two dates. */
export function checkMergedDates(event: { start_date: string | null; end_date: string | null }): void {
  const problems = new Problems();
  checkDateOrder(event.start_date, event.end_date, problems);
  problems.throwIfAny();
}
