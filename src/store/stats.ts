import { sql } from 'kysely';
import type { Availability } from '../schemas/artworks.js';
import type { Db, Trx } from '../db/types.js';

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

const AVAILABILITY_COLUMNS = ['available', 'reserved', 'sold'] as const;

/** Applies a write's delta in the write's own transaction: one statement whatever the delta. */
export async function applyStats(trx: Trx, entityId: number, delta: StatsDelta, at: string): Promise<void> {
  const by = (column: string, amount: number) => sql`${sql.ref(column)} + ${amount}`;
  const set: Record<string, unknown> = {};
  if (delta.artworks) set.artworks = by('artworks', delta.artworks);
  if (delta.events) set.events = by('events', delta.events);
  if (delta.changelog) set.changelog = by('changelog', delta.changelog);
  const { before, after } = delta.availability ?? { before: null, after: null };
  if (before !== after) {
    for (const column of AVAILABILITY_COLUMNS) {
      const amount = (after === column ? 1 : 0) - (before === column ? 1 : 0);
      if (amount) set[column] = by(column, amount);
    }
  }
  if (delta.synced === 'artworks') set.artworks_synced_at = at;
  if (delta.synced === 'events') set.events_synced_at = at;
  if (delta.artistLinked) set.artists_synced_at = at;
  if (Object.keys(set).length === 0) return;
  await trx.updateTable('entity_stats').set(set).where('entity_id', '=', entityId).execute();
}

export async function createStats(db: Db | Trx, entityId: number): Promise<void> {
  await db.insertInto('entity_stats').values({
    entity_id: entityId, artworks: 0, available: 0, reserved: 0, sold: 0, events: 0, changelog: 0,
    artworks_synced_at: null, events_synced_at: null, artists_synced_at: null,
  }).onConflict((oc) => oc.column('entity_id').doNothing()).execute();
}

export const readStats = (db: Db, entityId: number) =>
  db.selectFrom('entity_stats').selectAll().where('entity_id', '=', entityId).executeTakeFirstOrThrow();
