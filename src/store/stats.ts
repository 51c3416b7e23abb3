import { sql, type RawBuilder } from 'kysely';
import type { Availability } from '../schemas/artworks.js';
import type { EntityStatsTable } from '../db/types.js';
import { STATS_SLOTS } from '../db/migrations/006_parallel_writes.js';
import { statement, type Params } from '../db/statement.js';
import { first, type Work } from '../db/work.js';

/** How one write moves an entity's counts; every field is optional. */
export interface StatsDelta {
  artworks?: number;
  events?: number;
  /** Availability before and after (null: none), to move the per-availability counts. */
  availability?: { before: Availability | null; after: Availability | null };
  changelog?: number;
  /** Which kind was written, for its last-synced time. */
  synced?: 'artworks' | 'events';
  artistLinked?: boolean;
}

/** What a write, or all writes of a batch, add to an entity's counts. */
export interface StatsUpdate {
  entityId: number;
  artworks: number;
  events: number;
  changelog: number;
  available: number;
  reserved: number;
  sold: number;
  not_for_sale: number;
  /** null keeps the stored time. */
  artworksSyncedAt: string | null;
  eventsSyncedAt: string | null;
  artistsSyncedAt: string | null;
}

/** The sum of writes' deltas, all made at `at`. */
export function statsUpdate(entityId: number, deltas: readonly StatsDelta[], at: string): StatsUpdate {
  const update: StatsUpdate = {
    entityId, artworks: 0, events: 0, changelog: 0, available: 0, reserved: 0, sold: 0, not_for_sale: 0,
    artworksSyncedAt: null, eventsSyncedAt: null, artistsSyncedAt: null,
  };
  for (const delta of deltas) {
    const { before, after } = delta.availability ?? { before: null, after: null };
    const moved = (column: Availability) => (after === column ? 1 : 0) - (before === column ? 1 : 0);
    update.artworks += delta.artworks ?? 0;
    update.events += delta.events ?? 0;
    update.changelog += delta.changelog ?? 0;
    update.available += moved('available');
    update.reserved += moved('reserved');
    update.sold += moved('sold');
    update.not_for_sale += moved('not_for_sale');
    if (delta.synced === 'artworks') update.artworksSyncedAt = at;
    if (delta.synced === 'events') update.eventsSyncedAt = at;
    if (delta.artistLinked) update.artistsSyncedAt = at;
  }
  return update;
}

// SQLite: one writer at a time, one row per entity (slot 0). One shape for every delta (zeros and
// nulls change nothing), so it is one prepared statement.
const updateStats = statement((db, p: Params<StatsUpdate>) => db.updateTable('entity_stats')
  .set((eb) => ({
    artworks: eb('artworks', '+', p.artworks),
    events: eb('events', '+', p.events),
    changelog: eb('changelog', '+', p.changelog),
    available: eb('available', '+', p.available),
    reserved: eb('reserved', '+', p.reserved),
    sold: eb('sold', '+', p.sold),
    not_for_sale: eb('not_for_sale', '+', p.not_for_sale),
    artworks_synced_at: sql<string>`coalesce(${p.artworksSyncedAt}, artworks_synced_at)`,
    events_synced_at: sql<string>`coalesce(${p.eventsSyncedAt}, events_synced_at)`,
    artists_synced_at: sql<string>`coalesce(${p.artistsSyncedAt}, artists_synced_at)`,
    version: eb('version', '+', 1),
  }))
  .where('entity_id', '=', p.entityId).where('slot', '=', 0));

/** SQLite: applies a write's counts in the write's own transaction. */
export function* applyStats(update: StatsUpdate): Work<void> {
  yield* first(updateStats, update);
}

/**
 * PostgreSQL: adds the counts to the slot of this connection's backend process, created on its first
 * write. Concurrent writes of one entity on different connections touch different rows, so none
 * waits for another's commit; the row lock is taken as a transaction's last write (just before its
 * commit), so it never sits between two other locks. `when`: a condition on the rest of the statement.
 */
export const upsertStatsSlot = (p: Params<StatsUpdate>, when: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> => sql`
  insert into entity_stats as s (entity_id, slot, artworks, events, changelog, available, reserved, sold, not_for_sale,
    artworks_synced_at, events_synced_at, artists_synced_at, version)
  select cast(${p.entityId} as integer), pg_backend_pid() % ${sql.lit(STATS_SLOTS)}, cast(${p.artworks} as integer),
    cast(${p.events} as integer), cast(${p.changelog} as integer), cast(${p.available} as integer),
    cast(${p.reserved} as integer), cast(${p.sold} as integer), cast(${p.not_for_sale} as integer), cast(${p.artworksSyncedAt} as text),
    cast(${p.eventsSyncedAt} as text), cast(${p.artistsSyncedAt} as text), 1
  where ${when}
  on conflict (entity_id, slot) do update set
    artworks = s.artworks + excluded.artworks, events = s.events + excluded.events,
    changelog = s.changelog + excluded.changelog, available = s.available + excluded.available,
    reserved = s.reserved + excluded.reserved, sold = s.sold + excluded.sold, not_for_sale = s.not_for_sale + excluded.not_for_sale,
    artworks_synced_at = coalesce(excluded.artworks_synced_at, s.artworks_synced_at),
    events_synced_at = coalesce(excluded.events_synced_at, s.events_synced_at),
    artists_synced_at = coalesce(excluded.artists_synced_at, s.artists_synced_at),
    version = s.version + 1`;

const insertStats = statement((db, p: Params<{ entityId: number }>) => db.insertInto('entity_stats').values({
  entity_id: p.entityId, slot: 0, artworks: 0, available: 0, reserved: 0, sold: 0, not_for_sale: 0, events: 0, changelog: 0,
  artworks_synced_at: null, events_synced_at: null, artists_synced_at: null, version: 0,
}).onConflict((oc) => oc.columns(['entity_id', 'slot']).doNothing()));

/** The counts row (slot 0) of a new entity, in the transaction that creates it. */
export function* createStats(entityId: number): Work<void> {
  yield* first(insertStats, { entityId });
}

export type EntityStats = Omit<EntityStatsTable, 'slot'>;

// The sum over an entity's slots: at most 64 rows, next to each other in the primary key.
const selectStats = statement((db, p: Params<{ entityId: number }>) => db.selectFrom('entity_stats')
  .select((eb) => [
    eb.fn.countAll<number>().as('slots'),
    ...(['artworks', 'available', 'reserved', 'sold', 'not_for_sale', 'events', 'changelog', 'version'] as const)
      .map((column) => sql<number>`coalesce(sum(${sql.ref(column)}), 0)`.as(column)),
    ...(['artworks_synced_at', 'events_synced_at', 'artists_synced_at'] as const).map((column) => eb.fn.max(column).as(column)),
  ])
  .where('entity_id', '=', p.entityId));

/** An entity's kept counts and sync times. */
export function* statsOf(entityId: number): Work<EntityStats> {
  const row = yield* first(selectStats, { entityId });
  if (!row || Number(row.slots) === 0) throw new Error(`entity ${entityId} has no stats row`);
  return {
    entity_id: entityId,
    artworks: Number(row.artworks), available: Number(row.available), reserved: Number(row.reserved), sold: Number(row.sold),
    not_for_sale: Number(row.not_for_sale),
    events: Number(row.events), changelog: Number(row.changelog), version: Number(row.version),
    artworks_synced_at: row.artworks_synced_at, events_synced_at: row.events_synced_at, artists_synced_at: row.artists_synced_at,
  };
}
