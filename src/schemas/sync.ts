import Type, { type Static } from 'typebox';
import { Nullable, Timestamp } from './common.js';
import { ImageCounts } from './images.js';

const KindStatus = Type.Object({
  last_synced: Nullable(Timestamp),
  count: Type.Integer({ minimum: 0 }),
});

export const SyncStatus = Type.Object(
  { artworks: KindStatus, artists: KindStatus, events: KindStatus, images: ImageCounts },
  { $id: 'SyncStatus', description: 'When each kind of record was last written through the API, and how many there are.' },
);
export type SyncStatusType = Static<typeof SyncStatus>;
