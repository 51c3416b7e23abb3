import { sql } from 'kysely';
import type { Availability } from '../schemas/artworks.js';
import type { EntityStatsTable } from '../db/types.js';
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

interface StatsUpdate {
  entityId: number;
  artworks: number;
  events: number;
  changelog: number;
  available: number;
  reserved: number;
  sold: number;
  /** null keeps the stored time. */
  artworksSyncedAt: string | null;
  eventsSyncedAt: string | null;
  artistsSyncedAt: string | null;
}

// One shape for every delta (zeros and nulls change nothing), so it is one prepared statement.
const updateStats = statement((db, p: Params<StatsUpdate>) => db.updateTable('entity_stats')
  .set((eb) => ({
    artworks: eb('artworks', '+', p.artworks),
    events: eb('events', '+', p.events),
    changelog: eb('changelog', '+', p.changelog),
    available: eb('available', '+', p.available),
    reserved: eb('reserved', '+', p.reserved),
    sold: eb('sold', '+', p.sold),
    artworks_synced_at: sql<string>`coalesce(${p.artworksSyncedAt}, artworks_synced_at)`,
    events_synced_at: sql<string>`coalesce(${p.eventsSyncedAt}, events_synced_at)`,
    artists_synced_at: sql<string>`coalesce(${p.artistsSyncedAt}, artists_synced_at)`,
  }))
  .where('entity_id', '=', p.entityId));

/** Applies a write's delta in the write's own transaction. */
export function* applyStats(entityId: number, delta: StatsDelta, at: string): Work<void> {
  const { before, after } = delta.availability ?? { before: null, after: null };
  const moved = (column: Availability) => (after === column ? 1 : 0) - (before === column ? 1 : 0);
  yield* first(updateStats, {
    entityId,
    artworks: delta.artworks ?? 0,
    events: delta.events ?? 0,
    changelog: delta.changelog ?? 0,
    available: moved('available'),
    reserved: moved('reserved'),
    sold: moved('sold'),
    artworksSyncedAt: delta.synced === 'artworks' ? at : null,
    eventsSyncedAt: delta.synced === 'events' ? at : null,
    artistsSyncedAt: delta.artistLinked ? at : null,
  });
}

const insertStats = statement((db, p: Params<{ entityId: number }>) => db.insertInto('entity_stats').values({
  entity_id: p.entityId, artworks: 0, available: 0, reserved: 0, sold: 0, events: 0, changelog: 0,
  artworks_synced_at: null, events_synced_at: null, artists_synced_at: null,
}).onConflict((oc) => oc.column('entity_id').doNothing()));

/** The counts row of a new entity, in the transaction that creates it. */
export function* createStats(entityId: number): Work<void> {
  yield* first(insertStats, { entityId });
}

const selectStats = statement((db, p: Params<{ entityId: number }>) =>
  db.selectFrom('entity_stats').selectAll().where('entity_id', '=', p.entityId));

/** An entity's kept counts and sync times. */
export function* statsOf(entityId: number): Work<EntityStatsTable> {
  const stats = yield* first(selectStats, { entityId });
  if (!stats) throw new Error(`entity ${entityId} has no stats row`);
  return stats;
}
