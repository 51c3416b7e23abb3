import { fieldChanges, isRealChange, mergeNonNull, withoutNulls } from '../domain/diff.js';
import { notFound } from '../domain/errors.js';
import { EVENT_CHANGE_FIELDS, checkMergedDates, type EventInput } from '../domain/event.js';
import { slugify } from '../domain/slug.js';
import type { EventType } from '../schemas/events.js';
import type { Db, EventRow, Trx } from '../db/types.js';
import { commitWrite, type Actor } from './changelog.js';
import { readStats } from './stats.js';
import { lockForUpdate, nowIso, pageOffset } from './sql.js';

/** An event's slug: the normalized slug of the entity's slug and the title (decisions §6). */
export const eventSlug = (entitySlug: string, title: string): string => slugify(`${entitySlug} ${title}`);

/** Creates the event, or merges into the entity's event with the same slug. */
export function postEvent(db: Db, actor: Actor, input: EventInput): Promise<{ event: EventRow; created: boolean; changed: boolean }> {
  return db.transaction().execute(async (trx) => {
    const at = nowIso();
    const slug = eventSlug(actor.entitySlug, input.title);
    const inserted = await trx.insertInto('events')
      .values({
        ...emptyEvent(), ...withoutNulls(input), title: input.title,
        entity_id: actor.entityId, slug, last_synced_at: at, created_at: at, updated_at: at,
      })
      .onConflict((oc) => oc.columns(['entity_id', 'slug']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) {
      await recordEventChange(trx, actor, null, inserted, at);
      return { event: inserted, created: true, changed: true };
    }
    const existing = await lockForUpdate(trx,
      trx.selectFrom('events').selectAll().where('entity_id', '=', actor.entityId).where('slug', '=', slug),
    ).executeTakeFirstOrThrow();
    const merged = mergeNonNull(existing, input);
    checkMergedDates(merged);
    const { id, entity_id, created_at, ...columns } = merged;
    const event = await trx.updateTable('events')
      .set({ ...columns, last_synced_at: at, updated_at: at })
      .where('id', '=', id).returningAll().executeTakeFirstOrThrow();
    const changes = await recordEventChange(trx, actor, existing, event, at);
    return { event, created: false, changed: isRealChange(changes) };
  });
}

export async function deleteEvent(db: Db, actor: Actor, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const deleted = await trx.deleteFrom('events')
      .where('entity_id', '=', actor.entityId).where('id', '=', id)
      .returningAll().executeTakeFirst();
    if (!deleted) throw notFound('Event');
    await commitWrite(trx, actor, [{
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

async function recordEventChange(trx: Trx, actor: Actor, before: EventRow | null, after: EventRow, at: string) {
  const changes = fieldChanges(before, after, EVENT_CHANGE_FIELDS);
  await commitWrite(trx, actor, [{ entityType: 'event', recordId: after.id, action: before ? 'update' : 'create', fieldChanges: changes }],
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
