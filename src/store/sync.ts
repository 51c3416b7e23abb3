import type { SyncStatusType } from '../schemas/sync.js';
import type { Db } from '../db/types.js';

/** When each kind of record was last written through the API, and how many there are now. */
export async function syncStatus(db: Db, entityId: number): Promise<SyncStatusType> {
  const lastWrite = (kind: 'artwork' | 'event') => db.selectFrom('changelog')
    .select((eb) => eb.fn.max('created_at').as('at'))
    .where('owner_id', '=', entityId).where('entity_type', '=', kind)
    .executeTakeFirstOrThrow();
  const count = (table: 'artworks' | 'events') => db.selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n')).where('entity_id', '=', entityId).executeTakeFirstOrThrow();
  const [artworkWrite, eventWrite, artworks, events, artists] = await Promise.all([
    lastWrite('artwork'), lastWrite('event'), count('artworks'), count('events'),
    db.selectFrom('artworks')
      .select((eb) => [eb.fn.count<number>('artist_id').distinct().as('n'), eb.fn.max('artist_linked_at').as('at')])
      .where('entity_id', '=', entityId).executeTakeFirstOrThrow(),
  ]);
  return {
    artworks: { last_synced: artworkWrite.at ?? null, count: Number(artworks.n) },
    artists: { last_synced: artists.at ?? null, count: Number(artists.n) },
    events: { last_synced: eventWrite.at ?? null, count: Number(events.n) },
  };
}
