import Type, { type Static } from 'typebox';
import { HttpUrl, ID_MAX, Id, NewestFirstPage, Nullable, PathId, Ref, StringEnum, Timestamp } from './common.js';

/** Feeds (docs/api.md, Feeds): a file at a URL, read on a schedule and applied like the console's Import. */

export const FEED_KINDS = ['artworks', 'events'] as const;
export const FEED_ENCODINGS = ['utf-8', 'windows-1252'] as const;
export const FEED_MODES = ['merge', 'mirror'] as const;
export const RUN_STATUSES = ['queued', 'running', 'unchanged', 'applied', 'needs_attention', 'failed'] as const;

const Mapping = Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Nullable(Type.String({ maxLength: 64 })), {
  maxProperties: 200,
  description: 'File column → field (`null` leaves the column out). Columns it does not name fill the field they are named after, or are ignored and listed in a run\'s `new_columns`.',
  examples: [{ 'Inventory No.': 'external_id', Künstler: 'artist_name', Notes: null }],
});
const Interval = Type.Integer({ minimum: 15, maximum: 1440, description: 'Minutes between runs, 15 to 1440.' });

/** The most problems a run (and a feed's preview) keeps: the rest are counted, not listed. */
export const PROBLEMS_KEPT = 100;

/** The longest sheet name a feed keeps (the console's form says the same). */
export const SHEET_NAME_MAX = 200;

const writable = {
  url: { ...HttpUrl, description: 'The file: CSV, JSON or Excel .xlsx, at most 20 MB, read within 60 s. No user name or password (400). A key without the kind\'s write scope reads it with its query string as `?…`.' },
  kind: StringEnum(FEED_KINDS),
  mapping: Mapping,
  encoding: StringEnum(FEED_ENCODINGS, { description: 'How a CSV file\'s text is encoded.' }),
  sheet: Nullable(Type.String({ minLength: 1, maxLength: SHEET_NAME_MAX, description: 'Excel: the sheet to read (default: the first).' })),
  mode: StringEnum(FEED_MODES, { description: '`merge` creates and updates; `mirror` also deletes the feed\'s own records the file no longer holds; past the larger of 10 % of them and 10 within 24 hours, it waits for `confirm-deletes`.' }),
  interval_minutes: Interval,
  paused: Type.Boolean(),
};

export const FeedPost = Type.Object({
  url: writable.url,
  kind: writable.kind,
  mapping: Type.Optional(writable.mapping),
  encoding: Type.Optional(writable.encoding),
  sheet: Type.Optional(writable.sheet),
  mode: Type.Optional(writable.mode),
  interval_minutes: Type.Optional(writable.interval_minutes),
  paused: Type.Optional(writable.paused),
}, { additionalProperties: false, examples: [{ url: 'https://docs.example.org/inventory.csv', kind: 'artworks', mapping: { 'Inventory No.': 'external_id' }, mode: 'merge', interval_minutes: 60 }] });
export type FeedPostBody = Static<typeof FeedPost>;

export const FeedPreviewPost = Type.Object({
  ...FeedPost.properties,
  feed_id: Type.Optional(Id),
}, { additionalProperties: false, examples: [{ url: 'https://docs.example.org/inventory.csv', kind: 'artworks' }] });
export type FeedPreviewPostBody = Static<typeof FeedPreviewPost>;

export const FeedPut = Type.Object(Object.fromEntries(Object.entries(writable).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof writable]: ReturnType<typeof Type.Optional<(typeof writable)[K]>>
}, { additionalProperties: false, examples: [{ mode: 'mirror', interval_minutes: 30 }] });
export type FeedPutBody = Static<typeof FeedPut>;

/** The confirmation of a run's mass delete, the route that replaced `allow_mass_delete`. */
export const CONFIRM_DELETES_ROUTE = 'POST /v1/feeds/:id/runs/:run_id/confirm-deletes';

export const RunPost = Type.Object({
  allow_mass_delete: Type.Optional(Type.Boolean({ deprecated: true, description: `Withdrawn: a body with it is refused (400). Confirm a run's pending deletes with \`${CONFIRM_DELETES_ROUTE}\`.` })),
}, { additionalProperties: false, examples: [{}] });

const PendingDelete = Type.Object({
  id: Id,
  title: Type.String(),
  external_id: Nullable(Type.String()),
});

const Level = StringEnum(['error', 'warning'] as const, { description: '`error`: the row is refused; `warning`: the row is written (such as "no currency").' });
const Problem = Type.Object({
  line: Nullable(Type.Integer({ description: 'The file\'s line (CSV), row (Excel) or item (JSON).' })),
  column: Nullable(Type.String()),
  message: Type.String(),
  level: Level,
});
/** An undo's problem: a record, or one of its fields, it left as it is (docs/api.md, Runs: undo a run). */
const RecordProblem = Type.Object({
  id: Id,
  field: Nullable(Type.String({ description: 'The field kept (changed since the run), or null for the whole record.' })),
  message: Type.String(),
  level: Level,
});

export const RUN_KINDS = ['feed', 'import', 'undo'] as const;

export const FeedRun = Type.Object({
  id: Id,
  kind: StringEnum(RUN_KINDS, { description: '`feed` (a feed\'s run), `import` (the console\'s Apply of a file), `undo` (the undo of a run).' }),
  feed_id: Nullable(Type.Integer({ minimum: 1, description: 'The feed of a feed\'s run; null for others.' })),
  record_kind: StringEnum(FEED_KINDS),
  source: Type.String({ description: 'The changelog `source` of its writes (`feed:3`, `console:7`, `undo:12`).' }),
  undone_by: Nullable(Type.Integer({ minimum: 1, description: 'The undo run that took this run back, if one did.' })),
  status: StringEnum(RUN_STATUSES),
  started_at: Nullable(Timestamp),
  finished_at: Nullable(Timestamp),
  http_status: Nullable(Type.Integer()),
  counts: Nullable(Type.Object({
    rows: Type.Integer(), created: Type.Integer(), updated: Type.Integer(), unchanged: Type.Integer(),
    deleted: Type.Integer(), refused: Type.Integer(), duplicates: Type.Integer(),
  })),
  problems: Type.Array(Type.Union([Problem, RecordProblem]), {
    maxItems: PROBLEMS_KEPT, description: `Refused and duplicate rows, at most ${PROBLEMS_KEPT}; an undo's: \`{id, field, message}\`, the records and fields it left as they are.`,
  }),
  error: Nullable(Type.String({ description: 'Why the run failed or needs attention, in one line.' })),
  new_columns: Type.Array(Type.String(), { description: 'Columns of the file the mapping does not name and no field is named after: ignored.' }),
  pending_deletes: Nullable(Type.Array(PendingDelete, {
    description: 'A mirror run that ended `needs_attention` for a mass delete: the records it would delete, waiting for `confirm-deletes`. Null for every other run, and once confirmed.',
  })),
}, { $id: 'FeedRun', description: 'One run: of a feed, of a console import, or of an undo (docs/api.md, Runs).' });
export type FeedRunType = Static<typeof FeedRun>;

export const Feed = Type.Object({
  id: Id,
  ...writable,
  paused_reason: Nullable(Type.String()),
  unmapped_columns: Nullable(Type.Array(Type.String(), {
    description: 'The file\'s columns the feed leaves out (a private column, a name no word matches, two columns for one field); null until the feed has read its file once, when the mapping in use (suggestions included) is stored.',
  })),
  created_at: Timestamp,
  next_run_at: Nullable(Timestamp),
  last_run: Type.Unsafe<FeedRunType | null>({ oneOf: [Ref(FeedRun), { type: 'null' }] }),
}, { $id: 'Feed', description: 'A feed: a file at a URL kept applied to the catalog.' });
export type FeedType = Static<typeof Feed>;

export const FeedPreview = Type.Object({
  mapping: Mapping,
  unmapped_columns: Type.Array(Type.String(), { description: 'The file\'s columns left out: a private column, a name no word matches, two columns for one field.' }),
  rows: Type.Array(Type.Object({
    line: Nullable(Type.Integer()),
    action: StringEnum(['create', 'update', 'unchanged', 'refused'] as const),
    id: Nullable(Type.Integer({ description: 'The record the row updates or leaves unchanged; null for create and refused.' })),
    fields: Type.Record(Type.String(), Type.Unknown(), { description: 'The row as it would be written.' }),
  }), { maxItems: 20, description: 'The first 20 rows of the file.' }),
  counts: Type.Object({
    rows: Type.Integer(), created: Type.Integer(), updated: Type.Integer(), unchanged: Type.Integer(),
    deleted: Type.Integer(), refused: Type.Integer(), duplicates: Type.Integer(),
  }, { description: 'As a run\'s: what applying the file now would do.' }),
  problems: Type.Array(Problem, { maxItems: PROBLEMS_KEPT }),
}, { $id: 'FeedPreview', description: 'A feed\'s file read once and compared with the catalog; nothing written.' });

export const FeedList = Type.Object({ feeds: Type.Array(Ref(Feed)) }, { $id: 'FeedList', description: 'The entity\'s feeds, at most 10.' });

const olderRuns = Type.Integer({ minimum: 1, description: 'The last run\'s id: pass it as `after` for older runs.' });

export const FeedRunList = NewestFirstPage('runs', FeedRun, olderRuns, { $id: 'FeedRunList', description: 'A feed\'s runs, newest first.' });

export const RunsQuery = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 1, maximum: ID_MAX, description: 'A run id: only older runs. Pass the previous answer\'s `next_after`.' })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20, description: 'Runs per page, 1 to 100 (default 20).' }),
});

export const RunList = NewestFirstPage('runs', FeedRun, olderRuns, {
  $id: 'RunList', description: 'The entity\'s runs of the kinds the key may read, newest first.',
});

export const RunParams = Type.Object({
  id: PathId(),
  run_id: PathId(),
});
