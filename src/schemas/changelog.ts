import Type, { type Static } from 'typebox';
import { Id, Page, Ref, StringEnum, Timestamp, cursorQuery, pageQuery } from './common.js';

/** The largest `limit` of a changelog page. */
export const CHANGELOG_PAGE_MAX = 1000;

export const CHANGE_ENTITY_TYPES = ['artwork', 'artist', 'event', 'profile'] as const;
export const CHANGE_ACTIONS = ['create', 'update', 'delete'] as const;
export type ChangeEntityType = (typeof CHANGE_ENTITY_TYPES)[number];
export type ChangeAction = (typeof CHANGE_ACTIONS)[number];

export const FieldChanges = Type.Record(
  Type.String(),
  Type.Object({ old: Type.Unknown(), new: Type.Unknown() }),
  { description: 'Each changed field with its old and new value; old is null on creation, new is null on deletion.' },
);

export const ChangelogEntry = Type.Object({
  id: Id,
  entity_type: StringEnum(CHANGE_ENTITY_TYPES),
  entity_id: Id,
  action: StringEnum(CHANGE_ACTIONS),
  source: Type.String({ description: '`api:` followed by the prefix of the key that made the change.' }),
  field_changes: FieldChanges,
  created_at: Timestamp,
}, { $id: 'ChangelogEntry', description: 'One record changed by one API write.' });
export type ChangelogEntryType = Static<typeof ChangelogEntry>;

export const ChangelogQuery = Type.Object({
  ...pageQuery(100, CHANGELOG_PAGE_MAX),
  ...cursorQuery,
  since: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; only later changes (exclusive).' })),
});

export const ChangelogPage = Type.Object(
  { changes: Type.Array(Ref(ChangelogEntry)), ...Page },
  { $id: 'ChangelogPage', description: 'A page of the changelog, oldest first (id order).' },
);
