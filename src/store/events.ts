import { fieldChanges, isRealChange, mergeNonNull, withoutNulls } from '../domain/diff.js';
import { notFound } from '../domain/errors.js';
import { EVENT_CHANGE_FIELDS, checkMergedDates, type EventInput } from '../domain/event.js';
import { slugify } from '../domain/slug.js';
import type { EventType } from '../schemas/events.js';
import { columns, first, statement, transaction, type Work } from '../db/statements.js';
import type { Db, EventRow } from '../db/types.js';
import { commitWrite, type Actor } from './changelog.js';
import { readStats } from './stats.js';
import { lockForUpdate, nowIso, pageOffset } from './sql.js';

/** An event's slug: the normalized slug of the entity's slug and the title (decisions §6). */
export const eventSlug = (entitySlug: string, title: string): string => slugify(`${entitySlug} ${title}`);

type NewEvent = Omit<EventRow, 'id'>;
const STORED_COLUMNS = [
  'title', 'slug', 'event_type', 'description', 'location_city', 'location_country', 'start_date', 'end_date',
  'external_url', 'image_url', 'ical_url', 'last_synced_at', 'updated_at',
] as const;

const insertEvent = statement((db, p: NewEvent) => db.insertInto('events')
  .values(columns(p, [...STORED_COLUMNS, 'entity_id', 'created_at']))
  .onConflict((oc) => oc.columns(['entity_id', 'slug']).doNothing())
  .returningAll());

const eventBySlug = statement((db, p: { entityId: number; slug: string }) => lockForUpdate(db,
  db.selectFrom('events').selectAll().where('entity_id', '=', p.entityId).where('slug', '=', p.slug)));

const saveEvent = statement((db, p: EventRow) => db.updateTable('events')
  .set(columns(p, STORED_COLUMNS)).where('id', '=', p.id).returningAll());

const deleteEventById = statement((db, p: { entityId: number; id: number }) =>
  db.deleteFrom('events').where('entity_id', '=', p.entityId).where('id', '=', p.id).returningAll());

/** Creates the event, or merges into the entity's event with the same slug. */
export function postEvent(db: Db, actor: Actor, input: EventInput): Promise<PostedEvent> {
  return transaction(db, () => postEventWork(actor, input));
}

export interface PostedEvent {
  event: EventRow;
  created: boolean;
  changed: boolean;
}

/** The write of one POST, to run in a transaction of its own or in a batch's savepoint. */
export function* postEventWork(actor: Actor, input: EventInput): Work<PostedEvent> {
  const at = nowIso();
  const slug = eventSlug(actor.entitySlug, input.title);
  const inserted = yield* first(insertEvent, {
    ...emptyEvent(), ...withoutNulls(input), title: input.title,
    entity_id: actor.entityId, slug, last_synced_at: at, created_at: at, updated_at: at,
  });
  if (inserted) {
    yield* recordEventChange(actor, null, inserted, at);
    return { event: inserted, created: true, changed: true };
  }
  const existing = yield* first(eventBySlug, { entityId: actor.entityId, slug });
  if (!existing) throw new Error('event vanished between insert and select');
  const merged = mergeNonNull(existing, input);
  checkMergedDates(merged);
  const event = yield* first(saveEvent, { ...merged, last_synced_at: at, updated_at: at });
  if (!event) throw new Error(`event ${merged.id} vanished inside its write`);
  const changes = yield* recordEventChange(actor, existing, event, at);
  return { event, created: false, changed: isRealChange(changes) };
}

export function deleteEvent(db: Db, actor: Actor, id: number): Promise<void> {
  return transaction(db, function* () {
    const deleted = yield* first(deleteEventById, { entityId: actor.entityId, id });
    if (!deleted) throw notFound('Event');
    yield* commitWrite(actor, [{
      entityType: 'event', recordId: id, action: 'delete',
      fieldChanges: fieldChanges(deleted, null, EVENT_CHANGE_FIELDS),
    }], { events: -1, synced: 'events' }, nowIso());
  });
}

export async function getEvent(db: Db, entityId: number, id: number): Promise<EventType> {
  const row = await db.selectFrom('events').selectAll()
    .where('entity_id', '=', entityId).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Event');
  return toEvent(row);
}

export interface EventListQuery {
  page: number;
  limit: number;
  /** upcoming: ends today (UTC) or later; past: ended before today. Undated events are in neither. */
  when?: 'upcoming' | 'past' | undefined;
  today: string;
}

export async function listEvents(db: Db, entityId: number, { page, limit, when, today }: EventListQuery) {
  let query = db.selectFrom('events').where('entity_id', '=', entityId);
  if (when) {
    query = query.where((eb) => eb(eb.fn.coalesce('end_date', 'start_date'), when === 'upcoming' ? '>=' : '<', today));
  }
  const ordered = when === 'upcoming' ? query.orderBy('start_date', 'asc').orderBy('id')
    : when === 'past' ? query.orderBy('start_date', 'desc').orderBy('id', 'desc')
      : query.orderBy('id');
  const [events, total] = await Promise.all([
    ordered.select(['id', 'title', 'event_type', 'location_city', 'location_country', 'start_date', 'end_date'])
      .limit(limit).offset(pageOffset(page, limit)).execute(),
    // All events: the kept count; a date filter counts its matches (an entity's events are few).
    when ? query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow().then((c) => Number(c.n))
      : readStats(db, entityId).then((s) => s.events),
  ]);
  return { events, total };
}

export function toEvent(row: EventRow): EventType {
  const { entity_id, ...event } = row;
  return event;
}

function* recordEventChange(actor: Actor, before: EventRow | null, after: EventRow, at: string) {
  const changes = fieldChanges(before, after, EVENT_CHANGE_FIELDS);
  yield* commitWrite(actor, [{ entityType: 'event', recordId: after.id, action: before ? 'update' : 'create', fieldChanges: changes }],
    { events: before ? 0 : 1, synced: 'events' }, at);
  return changes;
}

const emptyEvent = () => ({
  event_type: null, description: null, location_city: null, location_country: null, start_date: null,
  end_date: null, external_url: null, image_url: null, ical_url: null,
});

/** The public side: upcoming events (ending today or later) of an entity, soonest first. */
export const upcomingEvents = (db: Db, entityId: number, today: string, limit: number): Promise<EventRow[]> =>
  db.selectFrom('events').selectAll().where('entity_id', '=', entityId)
    .where((eb) => eb(eb.fn.coalesce('end_date', 'start_date'), '>=', today))
    .orderBy('start_date').orderBy('id').limit(limit).execute();

/** Every dated event of an entity, for its calendar feed. */
export const datedEvents = (db: Db, entityId: number): Promise<EventRow[]> =>
  db.selectFrom('events').selectAll().where('entity_id', '=', entityId)
    .where('start_date', 'is not', null).orderBy('start_date').orderBy('id').execute();

export const findEventBySlug = (db: Db, entityId: number, slug: string): Promise<EventRow | undefined> =>
  db.selectFrom('events').selectAll().where('entity_id', '=', entityId).where('slug', '=', slug).executeTakeFirst();
