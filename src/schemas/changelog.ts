import Type, { type Static } from 'typebox';
import { Id, Page, Ref, StringEnum, Timestamp, cursorQuery, pageQuery } from './common.js';

/** The largest `limit` of a changelog page. */
export const CHANGELOG_PAGE_MAX = 1000;
/**
 * A changelog page read by cursor ends before this many bytes of entries (after at least one entry):
 * `limit` is a maximum, and `has_more`/`next_after` say exactly where the next page starts.
 */
export const CHANGELOG_PAGE_BYTES = 1024 * 1024;

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
  run_id: Type.Union([Id, Type.Null()], { description: 'The run the write belongs to (a console import, a feed run, an undo; docs/api.md, Runs); null for other writes.' }),
}, { $id: 'ChangelogEntry', description: 'One record changed by one API write.' });
export type ChangelogEntryType = Static<typeof ChangelogEntry>;

const paging = pageQuery(100, CHANGELOG_PAGE_MAX);

export const ChangelogQuery = Type.Object({
  ...paging,
  limit: Type.Integer({
    minimum: 1, maximum: CHANGELOG_PAGE_MAX, default: 100,
    description: `Results per page at most, 1 to ${CHANGELOG_PAGE_MAX} (default 100): a page read by cursor (without \`page\`) also ends before about 1 MiB of entries, with \`has_more\` and \`next_after\` exact.`,
  }),
  ...cursorQuery,
  since: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; only later changes (exclusive).' })),
  run_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Only the entries of this run (docs/api.md, Runs); by cursor, not with `page` or `since`.' })),
});

export const ChangelogPage = Type.Object(
  { changes: Type.Array(Ref(ChangelogEntry)), ...Page },
  { $id: 'ChangelogPage', description: 'A page of the changelog, oldest first (id order).' },
);
