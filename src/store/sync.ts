import type { SyncStatusType } from '../schemas/sync.js';
import type { Db } from '../db/types.js';
import { readStats } from './stats.js';

/** When each kind of record was last written through the API, and how many there are now. */
export async function syncStatus(db: Db, entityId: number): Promise<SyncStatusType> {
  const [stats, artists] = await Promise.all([
    readStats(db, entityId),
    // Distinct artists need the (entity_id, artist_id) index walk; the sync status is polled rarely.
    db.selectFrom('artworks').select((eb) => eb.fn.count<number>('artist_id').distinct().as('n'))
      .where('entity_id', '=', entityId).executeTakeFirstOrThrow(),
  ]);
  return {
    artworks: { last_synced: stats.artworks_synced_at, count: stats.artworks },
    artists: { last_synced: stats.artists_synced_at, count: Number(artists.n) },
    events: { last_synced: stats.events_synced_at, count: stats.events },
  };
}
