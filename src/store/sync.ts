import type { SyncStatusType } from '../schemas/sync.js';
import { read } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Db } from '../db/types.js';
import { first } from '../db/work.js';
import { statsOf } from './stats.js';
import { imageCountsWork } from './images.js';

// Distinct artists walk the entity's (entity_id, artist_id) index entries: a scan, off the event loop.
const distinctArtists = statement((db, p: Params<{ entityId: number }>) => db.selectFrom('artworks')
  .select((eb) => eb.fn.count<number>('artist_id').distinct().as('n')).where('entity_id', '=', p.entityId), { cost: 'scan' });

/** When each kind of record was last written through the API, and how many there are now. */
export function syncStatus(db: Db, entityId: number): Promise<SyncStatusType> {
  return read(db, function* () {
    const stats = yield* statsOf(entityId);
    const artists = yield* first(distinctArtists, { entityId });
    return {
      artworks: { last_synced: stats.artworks_synced_at, count: stats.artworks },
      artists: { last_synced: stats.artists_synced_at, count: Number(artists?.n ?? 0) },
      events: { last_synced: stats.events_synced_at, count: stats.events },
      images: yield* imageCountsWork(entityId),
    };
  });
}
