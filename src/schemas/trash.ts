import Type from 'typebox';
import { Id, NewestFirstPage, Nullable, PathId, StringEnum, Timestamp } from './common.js';

/** The trash (docs/api.md, Trash): deleted artworks and events, kept TRASH_DAYS before the purge. */

export const TRASH_KINDS = ['artworks', 'events'] as const;

export const TrashItem = Type.Object({
  kind: StringEnum(TRASH_KINDS),
  id: Id,
  title: Type.String(),
  artist_name: Type.Optional(Nullable(Type.String({ description: 'Artworks only.' }))),
  deleted_at: Timestamp,
  deleted_by: Type.String({ description: 'The changelog `source` of the delete (`api:<key prefix>`, `console:<user>`, `feed:<id>`, …).' }),
  purge_at: { ...Timestamp, description: 'When the purge removes it for good (TRASH_DAYS after the delete).' },
}, { $id: 'TrashItem', description: 'A deleted record in the trash.' });

export const TrashPage = NewestFirstPage('items', TrashItem, Type.String({ description: 'Pass it as `after` for the next (older) page.' }), {
  $id: 'TrashPage', description: 'A page of the trash, newest delete first.',
});

export const TrashQuery = Type.Object({
  kind: Type.Optional(StringEnum(TRASH_KINDS, { description: 'One kind; without it, every kind the key may read.' })),
  after: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The previous page\'s `next_after` (opaque).' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Items per page, 1 to 100 (default 20).' }),
});

export const TrashParams = Type.Object({
  kind: StringEnum(TRASH_KINDS),
  id: PathId(),
});
