import { sql } from 'kysely';
import { fieldChanges, isRealChange, mergeDefined, mergeNonNull, withoutNulls } from '../domain/diff.js';
import { ApiError, notFound } from '../domain/errors.js';
import { EVENT_CHANGE_FIELDS, checkMergedDates, type EventInput, type EventPatch } from '../domain/event.js';
import { SLUG_VERSION, eventSlug } from '../domain/slug.js';
import type { EventListItemType, EventType } from '../schemas/events.js';
import { isUniqueViolation } from '../db/errors.js';
import { nowIso } from '../clock.js';
import { columns } from '../db/columns.js';
import { read, transaction } from '../db/run.js';
import { statement, statementPerPageSize, type Params } from '../db/statement.js';
import { all, first, type Work } from '../db/work.js';
import type { Db, EventRow, ImageStatus } from '../db/types.js';
import { imageStatusIs } from './images.js';
import { recordWrite, type Actor } from './changelog.js';
import { checkUnchanged, liveFeed, moveToTrash, takeFromTrash, trashedRecord, type UnchangedSince } from './trash.js';
import type { ListedPage, PageRequest } from './pages.js';
import { statsOf } from './stats.js';
import { INLINE_OFFSET_MAX, lockForUpdate, pageOffset } from './sql.js';

type NewEvent = Omit<EventRow, 'id'>;
const STORED_COLUMNS = [
  'title', 'slug', 'slug_version', 'event_type', 'description', 'location_city', 'location_country', 'start_date', 'end_date',
  'external_url', 'image_url', 'ical_url', 'last_synced_at', 'updated_at', 'feed_id',
] as const;

const insertEvent = statement((db, p: Params<NewEvent>) => db.insertInto('events')
  .values(columns(p, [...STORED_COLUMNS, 'entity_id', 'created_at']))
  .onConflict((oc) => oc.columns(['entity_id', 'slug']).doNothing())
  .returningAll());

const eventBySlug = statement((db, p: Params<{ entityId: number; slug: string }>) => lockForUpdate(db,
  db.selectFrom('events').selectAll().where('entity_id', '=', p.entityId).where('slug', '=', p.slug)));

const saveEvent = statement((db, p: Params<EventRow>) => db.updateTable('events')
  .set(columns(p, STORED_COLUMNS)).where('id', '=', p.id).returningAll());

const deleteEventById = statement((db, p: Params<{ entityId: number; id: number }>) =>
  db.deleteFrom('events').where('entity_id', '=', p.entityId).where('id', '=', p.id).returningAll());

const ownEvent = (db: Db, p: Params<{ entityId: number; id: number }>) =>
  db.selectFrom('events').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id);
const eventById = statement(ownEvent);
const eventByIdForUpdate = statement((db, p: Params<{ entityId: number; id: number }>) => lockForUpdate(db, ownEvent(db, p)));
const eventIdBySlug = statement((db, p: Params<{ entityId: number; slug: string }>) =>
  db.selectFrom('events').select('id').where('entity_id', '=', p.entityId).where('slug', '=', p.slug));

/** Creates the event, or merges into the entity's event with the same slug. */
export function postEvent(db: Db, actor: Actor, input: EventInput): Promise<PostedEvent> {
  return transaction(db, () => postEventWork(db, actor, input));
}

export interface PostedEvent {
  event: EventRow;
  created: boolean;
  changed: boolean;
}

/** The write of one POST, to run in a transaction of its own or in a batch's savepoint. */
export function* postEventWork(db: Db, actor: Actor, input: EventInput): Work<PostedEvent> {
  const at = nowIso();
  const slug = eventSlug(actor.entitySlug, input.title);
  const inserted = yield* first(insertEvent, {
    ...emptyEvent(), ...withoutNulls(input), title: input.title,
    entity_id: actor.entityId, slug, slug_version: SLUG_VERSION, last_synced_at: at, created_at: at, updated_at: at,
    feed_id: actor.feedId ?? null,
  });
  if (inserted) {
    yield* recordEventChange(db, actor, null, inserted, at);
    return { event: inserted, created: true, changed: true };
  }
  const existing = yield* first(eventBySlug, { entityId: actor.entityId, slug });
  if (!existing) throw new Error('event vanished between insert and select');
  const merged = mergeNonNull(existing, input);
  checkMergedDates(merged);
  // A feed's row that changes an event makes it the feed's own (docs/api.md, Feeds).
  merged.feed_id = actor.feedId ?? existing.feed_id;
  const event = yield* first(saveEvent, { ...merged, last_synced_at: at, updated_at: at });
  if (!event) throw new Error(`event ${merged.id} vanished inside its write`);
  const changes = yield* recordEventChange(db, actor, existing, event, at);
  return { event, created: false, changed: isRealChange(changes) };
}

export async function deleteEvent(db: Db, actor: Actor, id: number, unchanged?: UnchangedSince): Promise<void> {
  await transaction(db, () => deleteEventWork(db, actor, id, unchanged));
}

/** A delete (to the trash) inside a caller's transaction; the row as it was. */
export function* deleteEventWork(db: Db, actor: Actor, id: number, unchanged?: UnchangedSince): Work<EventRow> {
  const deleted = yield* first(deleteEventById, { entityId: actor.entityId, id });
  if (!deleted) throw notFound('Event');
  checkUnchanged(deleted, unchanged);
  const at = nowIso();
  yield* moveToTrash(actor, 'events', deleted, at);
  yield* recordWrite(db, actor, [{
    entityType: 'event', recordId: id, action: 'delete',
    fieldChanges: fieldChanges(deleted, null, EVENT_CHANGE_FIELDS),
  }], { events: -1, synced: 'events' }, at);
  return deleted;
}

const insertRestored = statement((db, p: Params<EventRow>) => db.insertInto('events')
  .values(columns(p, [...STORED_COLUMNS, 'entity_id', 'created_at', 'id'])));

const restoreConflict = (existingId: number | undefined) => new ApiError('duplicate',
  'A live event of this entity now has this title (the same slug): nothing was restored.', existingId === undefined ? {} : { existing_id: existingId });

/**
 * Brings an event back from the trash with its id and fields (docs/api.md, Trash), its slug derived
 * again from its title, recorded as a `create`. 409 `duplicate` when a live event now has that slug;
 * 404 when the trash does not hold it.
 */
export async function restoreEvent(db: Db, actor: Actor, id: number): Promise<EventRow> {
  try {
    return await transaction(db, () => restoreEventWork(db, actor, id));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw restoreConflict(await read(db, function* () {
      const stored = yield* trashedRecord<EventRow>(actor.entityId, 'events', id);
      return stored && (yield* first(eventIdBySlug, { entityId: actor.entityId, slug: eventSlug(actor.entitySlug, stored.title) }))?.id;
    }));
  }
}

/** `restoreEvent` inside a caller's transaction (an undo's batch); a unique violation is the database's error. */
export function* restoreEventWork(db: Db, actor: Actor, id: number): Work<EventRow> {
  const stored = yield* takeFromTrash<EventRow>(actor.entityId, 'events', id);
  const at = nowIso();
  const slug = eventSlug(actor.entitySlug, stored.title);
  const holder = yield* first(eventIdBySlug, { entityId: actor.entityId, slug });
  if (holder) throw restoreConflict(holder.id);
  const feedId = yield* liveFeed(actor.entityId, stored.feed_id);
  const event: EventRow = {
    ...emptyEvent(), ...stored, id, entity_id: actor.entityId, slug, slug_version: SLUG_VERSION, last_synced_at: at, updated_at: at,
    feed_id: feedId,
  };
  yield* all(insertRestored, event);
  yield* recordEventChange(db, actor, null, event, at);
  return event;
}

/**
 * Applies a PUT (docs/api.md, Events): `null` clears a field; a new title re-derives the slug, and another
 * event of the entity with that slug is a 409. One changelog `update` entry. `change` may be worked out
 * from the locked row (an undo puts back only what nobody changed since).
 */
export async function updateEvent(db: Db, actor: Actor, id: number, change: EventPatch | ((existing: EventRow) => EventPatch)): Promise<EventRow> {
  let patch = typeof change === 'function' ? {} : change;
  try {
    return await transaction(db, () => updateEventWork(db, actor, id, (existing) => (patch = typeof change === 'function' ? change(existing) : change)));
  } catch (error) {
    const title = patch.title;
    if (!isUniqueViolation(error) || title == null) throw error;
    const other = await read(db, () => first(eventIdBySlug, { entityId: actor.entityId, slug: eventSlug(actor.entitySlug, title) }));
    throw new ApiError('duplicate', 'Another event of this entity already has this title (the same slug).', other ? { existing_id: other.id } : {});
  }
}

/** `updateEvent` inside a caller's transaction (an undo's batch); a unique violation is the database's error. */
export function* updateEventWork(db: Db, actor: Actor, id: number, patchOf: (existing: EventRow) => EventPatch): Work<EventRow> {
  const existing = yield* first(eventByIdForUpdate, { entityId: actor.entityId, id });
  if (!existing) throw notFound('Event');
  const patch = patchOf(existing);
  const at = nowIso();
  const merged = mergeDefined<EventRow>(existing, patch);
  checkMergedDates(merged);
  if (patch.title !== undefined) {
    merged.slug = eventSlug(actor.entitySlug, merged.title);
    merged.slug_version = SLUG_VERSION;
  }
  const event = yield* first(saveEvent, { ...merged, last_synced_at: at, updated_at: at });
  if (!event) throw new Error(`event ${id} vanished inside its write`);
  yield* recordEventChange(db, actor, existing, event, at);
  return event;
}

export async function getEvent(db: Db, entityId: number, id: number): Promise<Omit<EventType, 'image'>> {
  const row = await read(db, () => first(eventById, { entityId, id }));
  if (!row) throw notFound('Event');
  return toEvent(row);
}

export interface EventListQuery extends PageRequest {
  /** upcoming: ends today (UTC) or later; past: ended before today. Undated events are in neither. */
  when?: 'upcoming' | 'past' | undefined;
  today: string;
  imageStatus?: ImageStatus | undefined;
}

export type EventListRow = Omit<EventListItemType, 'image'> & { image_url: string | null };

const LISTED = ['id', 'title', 'event_type', 'location_city', 'location_country', 'start_date', 'end_date', 'image_url'] as const;
const EVENT_PAGE_MAX = 100;

type ByImage = { imageStatus: ImageStatus | null };
const entityEvents = (db: Db, p: Params<{ entityId: number } & ByImage>) => db.selectFrom('events')
  .where('entity_id', '=', p.entityId).where((eb) => imageStatusIs(db, eb, 'events', p.imageStatus));

const eventsAfter = statementPerPageSize(EVENT_PAGE_MAX + 1, (db, p: Params<{ entityId: number; after: number } & ByImage>, limit) =>
  entityEvents(db, p).select(LISTED).where('id', '>', p.after).orderBy('id').limit(sql.lit(limit)));

const eventsByPage = statementPerPageSize(EVENT_PAGE_MAX + 1, (db, p: Params<{ entityId: number; offset: number } & ByImage>, limit) =>
  entityEvents(db, p).select(LISTED).orderBy('id').limit(sql.lit(limit)).offset(p.offset),
{ cost: 'scan', inlineWhen: (p) => p.offset <= INLINE_OFFSET_MAX });

const dated = (db: Db, p: Params<{ entityId: number; today: string } & ByImage>, when: 'upcoming' | 'past') => entityEvents(db, p)
  .where((eb) => eb(eb.fn.coalesce('end_date', 'start_date'), when === 'upcoming' ? '>=' : '<', p.today));
const imageCount = statement((db, p: Params<{ entityId: number } & ByImage>) =>
  entityEvents(db, p).select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });

const datedPage = (when: 'upcoming' | 'past') => statementPerPageSize(EVENT_PAGE_MAX + 1, (db, p: Params<{ entityId: number; today: string; offset: number } & ByImage>, limit) => {
  const query = dated(db, p, when).select(LISTED);
  const ordered = when === 'upcoming' ? query.orderBy('start_date', 'asc').orderBy('id') : query.orderBy('start_date', 'desc').orderBy('id', 'desc');
  return ordered.limit(sql.lit(limit)).offset(p.offset);
}, { cost: 'scan' });
const upcomingPage = datedPage('upcoming');
const pastPage = datedPage('past');
// An entity's dated events are counted (they are few next to artworks); all events are a kept count.
const datedCount = (when: 'upcoming' | 'past') => statement((db, p: Params<{ entityId: number; today: string } & ByImage>) =>
  dated(db, p, when).select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });
const upcomingCount = datedCount('upcoming');
const pastCount = datedCount('past');

/**
 * A page of events: by id (`page` or `after`), or upcoming (by start date) or past (by start date
 * descending) by `page`. One row more than the page tells whether another follows.
 */
export function listEvents(db: Db, entityId: number, { page, after, limit, when, today, imageStatus: status }: EventListQuery): Promise<ListedPage & { events: EventListRow[] }> {
  const imageStatus = status ?? null;
  return read(db, function* () {
    const offset = pageOffset(page ?? 1, limit);
    const rows = when ? yield* all((when === 'upcoming' ? upcomingPage : pastPage)(limit + 1), { entityId, today, offset, imageStatus })
      : after !== undefined ? yield* all(eventsAfter(limit + 1), { entityId, after, imageStatus })
        : yield* all(eventsByPage(limit + 1), { entityId, offset, imageStatus });
    const total = when
      ? Number((yield* first(when === 'upcoming' ? upcomingCount : pastCount, { entityId, today, imageStatus }))?.n ?? 0)
      : imageStatus ? Number((yield* first(imageCount, { entityId, imageStatus }))?.n ?? 0) : (yield* statsOf(entityId)).events;
    const events = rows.slice(0, limit);
    return { events, total, hasMore: rows.length > limit, nextAfter: events.at(-1)?.id ?? null };
  });
}

export function toEvent(row: EventRow): Omit<EventType, 'image'> {
  const { entity_id, ...event } = row;
  return event;
}

function* recordEventChange(db: Db, actor: Actor, before: EventRow | null, after: EventRow, at: string) {
  const changes = fieldChanges(before, after, EVENT_CHANGE_FIELDS);
  yield* recordWrite(db, actor, [{ entityType: 'event', recordId: after.id, action: before ? 'update' : 'create', fieldChanges: changes }],
    { events: before ? 0 : 1, synced: 'events' }, at);
  return changes;
}

const emptyEvent = (): Omit<NewEvent, 'title' | 'entity_id' | 'slug' | 'slug_version' | 'last_synced_at' | 'created_at' | 'updated_at'> => ({
  event_type: null, description: null, location_city: null, location_country: null, start_date: null,
  end_date: null, external_url: null, image_url: null, ical_url: null, feed_id: null,
});
