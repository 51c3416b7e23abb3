import { sql } from 'kysely';
import { read } from '../db/run.js';
import { statement, statementPerPageSize, type Params } from '../db/statement.js';
import type { ArtworkRow, Db, EntityRow, EventRow, EventsTable } from '../db/types.js';
import { tableColumns } from '../db/columns.js';
import { all, first } from '../db/work.js';
import { daysFrom } from '../domain/days.js';

/**
 * What the public pages, feeds and sitemaps read (docs/public-pages.md, Built once per change). Each route first reads its entity's
 * data version (one indexed query); everything else runs only when that version has no cached page.
 */

/** An active entity and the version of everything its public pages show. */
export interface PublicEntity {
  entity: EntityRow;
  /**
   * Changes with every committed write of the entity in any process: the changelog count (every API
   * write adds entries and bumps it in its transaction), the stats' versions (which an image's state
   * change also bumps, store/images.ts) and the row's `updated_at` (operator edits).
   */
  version: string;
  /** How many artworks the entity shows (its pages and sitemap parts past the end do not exist). */
  artworks: number;
}

// The stats may be kept in several rows per entity: always their sum.
const entityWithChanges = statement((db, p: Params<{ slug: string }>) => db.selectFrom('entities').selectAll('entities')
  .select((eb) => [
    eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id')
      .select((s) => s.fn.sum<number | string>('changelog').as('changes')).as('changes'),
    eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id')
      .select((s) => s.fn.sum<number | string>('version').as('versions')).as('versions'),
    eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id')
      .select((s) => s.fn.sum<number | string>('artworks').as('artworks')).as('artwork_count'),
  ])
  .where('slug', '=', p.slug));

/** The entity behind a public slug and its data version; undefined when unknown or paused. */
export function publicEntity(db: Db, slug: string): Promise<PublicEntity | undefined> {
  return read(db, function* () {
    const row = yield* first(entityWithChanges, { slug });
    if (!row || row.paused_at) return undefined;
    const { changes, versions, artwork_count, ...entity } = row;
    return { entity, version: `${Number(changes ?? 0)}.${Number(versions ?? 0)}.${Date.parse(entity.updated_at)}`, artworks: Number(artwork_count ?? 0) };
  });
}

/** Whether an event is upcoming (ends today or later) or past, by its end date, else its start date. */
const byDate = (db: Db, entityId: Params<{ entityId: number }>['entityId'], when: '>=' | '<', day: Params<{ day: string }>['day']) =>
  db.selectFrom('events').where('entity_id', '=', entityId)
    .where((eb) => eb(eb.fn.coalesce('end_date', 'start_date'), when, day));

/** How many upcoming and past events a profile page shows. */
export const PROFILE_EVENTS_SHOWN = 20;

/**
 * A profile page shows its events' titles, dates and places, and the upcoming ones' descriptions only
 * as 200-character summaries: descriptions are read cut. Whole, twenty 10 KB descriptions each way were
 * ~400 KB per page copied from the reader thread and scanned on the event loop (docs/performance.md).
 * 2,000 characters hold a summary unless nearly all of them are whitespace.
 */
const PROFILE_DESCRIPTION_READ = 2_000;

const PROFILE_EVENT_COLUMNS = tableColumns<EventsTable>()(['id', 'entity_id', 'title', 'slug', 'event_type', 'location_city',
  'location_country', 'start_date', 'end_date', 'external_url', 'image_url', 'ical_url', 'slug_version', 'last_synced_at',
  'created_at', 'updated_at', 'feed_id'], ['description']);

const profileEventColumns = (db: Db, entityId: Params<{ entityId: number }>['entityId'], when: '>=' | '<', day: Params<{ day: string }>['day']) =>
  byDate(db, entityId, when, day)
    .select(PROFILE_EVENT_COLUMNS)
    .select(sql<string | null>`substr(description, 1, ${sql.lit(PROFILE_DESCRIPTION_READ)})`.as('description'));

const upcomingShown = statementPerPageSize(PROFILE_EVENTS_SHOWN, (db, p: Params<{ entityId: number; day: string }>, limit) =>
  profileEventColumns(db, p.entityId, '>=', p.day).orderBy('start_date').orderBy('id').limit(sql.lit(limit)), { cost: 'scan' });
const pastShown = statementPerPageSize(PROFILE_EVENTS_SHOWN, (db, p: Params<{ entityId: number; day: string }>, limit) =>
  profileEventColumns(db, p.entityId, '<', p.day).orderBy('start_date', 'desc').orderBy('id', 'desc').limit(sql.lit(limit)), { cost: 'scan' });

/** A profile's upcoming events (soonest first) and its latest past ones (latest first). */
export function profileEvents(db: Db, entityId: number, today: string): Promise<{ upcoming: EventRow[]; past: EventRow[] }> {
  return read(db, function* () {
    const upcoming = yield* all(upcomingShown(PROFILE_EVENTS_SHOWN), { entityId, day: today });
    const past = yield* all(pastShown(PROFILE_EVENTS_SHOWN), { entityId, day: today });
    return { upcoming, past };
  });
}

const artworkOfEntity = statement((db, p: Params<{ entityId: number; id: number }>) =>
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id));

export const publicArtwork = (db: Db, entityId: number, id: number): Promise<ArtworkRow | undefined> =>
  read(db, () => first(artworkOfEntity, { entityId, id }));

const eventOfEntity = statement((db, p: Params<{ entityId: number; slug: string }>) =>
  db.selectFrom('events').selectAll().where('entity_id', '=', p.entityId).where('slug', '=', p.slug));

export const publicEvent = (db: Db, entityId: number, slug: string): Promise<EventRow | undefined> =>
  read(db, () => first(eventOfEntity, { entityId, slug }));

/** docs/public-pages.md, Pages and feeds: a calendar holds events dated at most this many days ago or later, at most CALENDAR_EVENTS_MAX. */
export const CALENDAR_WINDOW_DAYS = 365;
export const CALENDAR_EVENTS_MAX = 1_000;
/** Descriptions are read one character past the calendar's cut, so the calendar knows to add "…". */
const CALENDAR_DESCRIPTION_READ = 2_001;

export type CalendarEventRow = Pick<EventRow, 'id' | 'slug' | 'title' | 'description' | 'location_city' | 'location_country' | 'start_date' | 'end_date' | 'updated_at'>;

const calendarColumns = (db: Db, entityId: Params<{ entityId: number }>['entityId'], when: '>=' | '<', day: Params<{ day: string }>['day']) =>
  byDate(db, entityId, when, day).where('start_date', 'is not', null)
    .select(['id', 'slug', 'title', 'location_city', 'location_country', 'start_date', 'end_date', 'updated_at'])
    .select(sql<string | null>`substr(description, 1, ${sql.lit(CALENDAR_DESCRIPTION_READ)})`.as('description'));

const calendarUpcoming = statementPerPageSize(CALENDAR_EVENTS_MAX, (db, p: Params<{ entityId: number; day: string }>, limit) =>
  calendarColumns(db, p.entityId, '>=', p.day).orderBy((eb) => eb.fn.coalesce('end_date', 'start_date')).orderBy('id').limit(sql.lit(limit)), { cost: 'scan' });
const calendarPast = statementPerPageSize(CALENDAR_EVENTS_MAX, (db, p: Params<{ entityId: number; day: string; from: string }>, limit) =>
  calendarColumns(db, p.entityId, '<', p.day).where((eb) => eb(eb.fn.coalesce('end_date', 'start_date'), '>=', p.from))
    .orderBy((eb) => eb.fn.coalesce('end_date', 'start_date'), 'desc').orderBy('id', 'desc').limit(sql.lit(limit)), { cost: 'scan' });

const distance = (from: number, e: CalendarEventRow) => Math.abs(Date.parse(e.end_date ?? e.start_date!) - from);

/**
 * The events of a calendar (docs/public-pages.md, Pages and feeds): dated, their date (end, else start) at most 365 days past or
 * later, the 1,000 nearest to today, in start-date order; descriptions read to 2,001 characters only.
 */
export function calendarEvents(db: Db, entityId: number, today: string): Promise<CalendarEventRow[]> {
  return read(db, function* () {
    const upcoming = yield* all(calendarUpcoming(CALENDAR_EVENTS_MAX), { entityId, day: today });
    const past = yield* all(calendarPast(CALENDAR_EVENTS_MAX), { entityId, day: today, from: daysFrom(today, -CALENDAR_WINDOW_DAYS) });
    // Each event's distance computed once, not in every comparison (2,000 rows: ~40,000 date parses).
    const from = Date.parse(today);
    return [...upcoming, ...past]
      .map((event) => ({ event, distance: distance(from, event) }))
      .sort((a, b) => a.distance - b.distance || a.event.id - b.event.id)
      .slice(0, CALENDAR_EVENTS_MAX)
      .map(({ event }) => event)
      .sort((a, b) => (a.start_date! < b.start_date! ? -1 : a.start_date! > b.start_date! ? 1 : a.id - b.id));
  });
}

/** One active entity for the start page and the sitemap index: its latest change and its artwork count. */
export interface ActiveEntity {
  slug: string;
  name: string;
  type: EntityRow['type'];
  lastModified: string;
  artworks: number;
}

const activeEntityRows = statement((db) => db.selectFrom('entities')
  .select(['slug', 'name', 'type', 'updated_at'])
  .select((eb) => [
    eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id').select((s) => s.fn.sum<number | string>('artworks').as('a')).as('artworks'),
    eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id').select((s) => s.fn.max('artworks_synced_at').as('m')).as('artworks_synced_at'),
    eb.selectFrom('entity_stats').whereRef('entity_stats.entity_id', '=', 'entities.id').select((s) => s.fn.max('events_synced_at').as('m')).as('events_synced_at'),
  ])
  .where('paused_at', 'is', null).orderBy('id'), { cost: 'scan' });

/** Every active entity (operators create them; they are few next to records). */
export function activeEntities(db: Db): Promise<ActiveEntity[]> {
  return read(db, function* () {
    const rows = yield* all(activeEntityRows, {});
    return rows.map((r) => ({
      slug: r.slug, name: r.name, type: r.type,
      artworks: Number(r.artworks ?? 0),
      lastModified: [r.updated_at, r.artworks_synced_at, r.events_synced_at].filter((t): t is string => typeof t === 'string').sort().at(-1)!,
    }));
  });
}

// The platform's version for the sitemap index: entities added, edited or paused, and every write.
const platformChanges = statement((db) => db.selectFrom('entities').select((eb) => [
  eb.fn.countAll<number | string>().as('n'),
  eb.fn.max('updated_at').as('updated'),
  eb.selectFrom('entity_stats').select((s) => s.fn.sum<number | string>('changelog').as('c')).as('changes'),
]), { cost: 'scan' });

export function platformVersion(db: Db): Promise<string> {
  return read(db, function* () {
    const row = yield* first(platformChanges, {});
    return `${Number(row?.n ?? 0)}.${Number(row?.changes ?? 0)}.${row?.updated ? Date.parse(row.updated) : 0}`;
  });
}

/** URLs per sitemap file: well under the protocol's 50,000, so one part is cheap to build. */
export const SITEMAP_PART_SIZE = 10_000;

export interface Dated { key: string; updated_at: string }

const artworkIdsPage = statement((db, p: Params<{ entityId: number; offset: number }>) => db.selectFrom('artworks')
  .select([sql<string>`cast(id as text)`.as('key'), 'updated_at']).where('entity_id', '=', p.entityId)
  .orderBy('id').limit(sql.lit(SITEMAP_PART_SIZE)).offset(p.offset), { cost: 'scan' });
const eventSlugs = statement((db, p: Params<{ entityId: number }>) => db.selectFrom('events')
  .select(['slug as key', 'updated_at']).where('entity_id', '=', p.entityId).orderBy('id').limit(sql.lit(SITEMAP_PART_SIZE)), { cost: 'scan' });

/** One part of an entity's sitemap: artworks by id in slices; the first part also has the events. */
export function sitemapRecords(db: Db, entityId: number, part: number): Promise<{ artworks: Dated[]; events: Dated[] }> {
  return read(db, function* () {
    const artworks = yield* all(artworkIdsPage, { entityId, offset: (part - 1) * SITEMAP_PART_SIZE });
    const events = part === 1 ? yield* all(eventSlugs, { entityId }) : [];
    return { artworks, events };
  });
}
