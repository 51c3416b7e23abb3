import { sql, type RawBuilder } from 'kysely';
import { ARTWORK_CHANGE_FIELDS, checkArtworkCoherence, parseViews, type ArtworkInput, type ArtworkPatch, type StoredView } from '../domain/artwork.js';
import { fieldChanges, isRealChange, mergeDefined, mergeNonNull, type FieldChanges } from '../domain/diff.js';
import { ApiError, notFound } from '../domain/errors.js';
import { artworkFingerprint } from '../domain/fingerprint.js';
import { SLUG_VERSION, slugify } from '../domain/slug.js';
import { ARTWORK_PAGE_MAX, type ArtworkType, type Availability } from '../schemas/artworks.js';
import { isUniqueViolation } from '../db/errors.js';
import { nowIso } from '../clock.js';
import { columns, tableColumns } from '../db/columns.js';
import { read, single, transaction } from '../db/run.js';
import { statement, statementPerPageSize, type Cost, type Params, type Statement } from '../db/statement.js';
import { all, first, type Work } from '../db/work.js';
import type { ArtworkRow, ArtworksTable, Db, ImageStatus } from '../db/types.js';
import { knownArtist, resolveArtist, resolveArtists } from './artists.js';
import { RECORDED, recordWrite, recordedSignals, recordedWrite, recording, recordingOf, type Actor, type Change, type RecordedWrite } from './changelog.js';
import { checkUnchanged, liveFeed, moveToTrash, takeFromTrash, trashedRecord, type UnchangedSince } from './trash.js';
import { imageStatusIs, imagesWritten, touchesImages } from './images.js';
import { statsOf, type StatsDelta } from './stats.js';
import { forgetArtwork, rememberArtwork, rememberPosted, repostLikely, storedArtwork, type StoredArtwork } from './stored-artworks.js';
import { mayHaveEndpoints, rememberEndpoints } from './hooked-entities.js';
import { enabledEndpointExists } from './webhooks.js';
import { INLINE_OFFSET_MAX, isPostgres, lockForUpdate, pageOffset, rawQuery } from './sql.js';
import type { ListedPage, PageRequest } from './pages.js';

export interface PostedArtwork {
  artwork: ArtworkRow;
  created: boolean;
  /** false when a re-post changed nothing but last_synced_at. */
  changed: boolean;
}

type NewArtwork = Omit<ArtworkRow, 'id'>;
/** The columns a write's fields fill as they are (every writable field is one). */
const INPUT_COLUMNS = tableColumns<ArtworksTable>()([
  'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'description', 'image_url',
  'external_url', 'artist_name', 'external_id', 'price_display', 'height', 'width', 'depth', 'dimension_unit',
  'edition_size', 'edition_number', 'artist_proofs', 'image_alt', 'additional_images',
], ['id', 'feed_id', 'entity_id', 'artist_id', 'artist_linked_at', 'source_fingerprint', 'fingerprint_version', 'last_synced_at', 'created_at', 'updated_at']);
const STORED_COLUMNS = [
  ...INPUT_COLUMNS, 'artist_id', 'artist_linked_at', 'source_fingerprint', 'fingerprint_version', 'last_synced_at', 'updated_at', 'feed_id',
] as const;
const NEW_COLUMNS = [...STORED_COLUMNS, 'entity_id', 'created_at'] as const;
// Parameters in a SELECT list have no column to take a type from; PostgreSQL needs it spelled out.
const COLUMN_TYPES: Record<(typeof NEW_COLUMNS)[number], 'text' | 'integer' | 'bigint' | 'double precision'> = {
  title: 'text', creation_year: 'integer', medium: 'text', dimensions: 'text', price: 'bigint', currency: 'text',
  availability: 'text', description: 'text', image_url: 'text', external_url: 'text', artist_name: 'text',
  artist_id: 'integer', artist_linked_at: 'text', source_fingerprint: 'text', fingerprint_version: 'integer',
  external_id: 'text', last_synced_at: 'text', updated_at: 'text', entity_id: 'integer', created_at: 'text',
  price_display: 'text', height: 'double precision', width: 'double precision', depth: 'double precision', dimension_unit: 'text',
  edition_size: 'integer', edition_number: 'integer', artist_proofs: 'integer', image_alt: 'text', additional_images: 'text',
  feed_id: 'integer',
};

type MatchKey = { entityId: number; fingerprint: string; externalId: string | null };

/**
 * The match rule of a POST (docs/api.md, Artworks), its one definition in SQL, for one item's keys
 * (SQL expressions): `byExternalId`, the artwork with the POST's external_id; `byFingerprint`, the
 * artworks with its fingerprint that it may take (with an external_id, only one without an external_id,
 * which it adopts; without, any). Each is a condition on an artwork `m` that one index probe answers.
 * Every form of the rule is built from these two: whether a match exists (`matchedBy`), and the
 * matches in order (`matchingRows`); `findMatch` is the same rule as locking reads, for both dialects.
 */
interface MatchRule { byExternalId: RawBuilder<boolean>; byFingerprint: RawBuilder<boolean> }
const matchRule = (entityId: unknown, externalId: RawBuilder<unknown>, fingerprint: RawBuilder<unknown>): MatchRule => ({
  byExternalId: sql<boolean>`m.entity_id = ${entityId} and m.external_id = ${externalId}`,
  byFingerprint: sql<boolean>`m.entity_id = ${entityId} and m.source_fingerprint = ${fingerprint} and (${externalId} is null or m.external_id is null)`,
});

/**
 * Whether an artwork the POST must update exists: one `exists` per probe, each kept an index lookup
 * (one `or` over both keys let PostgreSQL scan a large table on every new post; `offset 0` keeps it from
 * turning a batch's tests into a join, for which it would hash the whole catalog; SQLite has no bare OFFSET).
 */
const matchedBy = (db: Db, rule: MatchRule) => {
  const fence = isPostgres(db) ? sql` offset 0` : sql``;
  return sql<boolean>`(exists (select 1 from artworks m where ${rule.byExternalId}${fence})
    or exists (select 1 from artworks m where ${rule.byFingerprint}${fence}))`;
};

/** A single POST's keys as the rule's expressions. */
const matchRuleOf = (p: Params<MatchKey>) => matchRule(p.entityId, sql`cast(${p.externalId} as text)`, sql`${p.fingerprint}`);

/**
 * A new artwork, unless one the POST must update exists (or `unless` holds): the common case (a new
 * work) is one statement. Any unique index the insert would break (a concurrent POST of the same
 * work) also makes it insert nothing, and the caller looks for the match.
 */
const insertNewArtwork = (db: Db, p: Params<NewArtwork & MatchKey>, unless: RawBuilder<boolean> = sql<boolean>`false`) => db.insertInto('artworks')
  .columns(NEW_COLUMNS)
  .expression(db.selectNoFrom(NEW_COLUMNS.map((column) => sql`cast(${p[column]} as ${sql.raw(COLUMN_TYPES[column])})`.as(column)))
    .where(sql<boolean>`not ${matchedBy(db, matchRuleOf(p))}`).where(sql<boolean>`not ${unless}`))
  .onConflict((oc) => oc.doNothing())
  // The other columns are the values just bound: returning them would only copy them back.
  .returning('id');
const insertUnlessMatched = statement((db, p: Params<NewArtwork & MatchKey>) => insertNewArtwork(db, p));

/**
 * The artworks a POST with these keys may update, as `findMatch` looks for them (with an external_id,
 * the one that has it first), each with its row version (`xmin`), which any later write changes: two
 * index probes, run only when the statement's insert (`inserted`) wrote nothing.
 */
const matchesOf = (p: Params<MatchKey>) => matchingRows(matchRuleOf(p), sql`not exists (select 1 from inserted) and `);

/**
 * The matches of `rule` in the order `findMatch` takes them: with an external_id, the artwork that has
 * it first (`match_rank` 0), then those with the fingerprint; two rows are enough to tell an ambiguous
 * match. Each row carries its version (`xmin`, which any later write changes) and its rank. `guard`
 * prefixes the conditions (e.g. only when nothing was inserted). One scan, both probes OR-ed into one
 * bitmap, not a union of two: fewer plan nodes to start in every statement that holds it, run or not
 * (docs/performance.md, Writes, lists and growth).
 */
const matchingRows = (rule: MatchRule, guard: RawBuilder<unknown> = sql``) => sql`
  select m.*, cast(m.xmin as text) as row_version, case when ${rule.byExternalId} then 0 else 1 end as match_rank
  from artworks m
  where ${guard}(${rule.byExternalId} or ${rule.byFingerprint})
  order by match_rank, m.id limit 2`;

type Recorded = { messages: number | string; images: number | string };
type Hooked = { hooked: boolean };
type Matched = ArtworkRow & { row_version: string };

/**
 * A statement built both ways, with its webhook CTEs and without them (for an entity this process
 * knows no endpoint of: store/hooked-entities.ts), once each; the POST picks one per write.
 */
function withAndWithoutMessages<S>(of: (messages: boolean) => S): (messages: boolean) => S {
  const withMessages = of(true);
  const withoutMessages = of(false);
  return (messages) => (messages ? withMessages : withoutMessages);
}

/**
 * PostgreSQL: a POST's write in the shape its entity's endpoints call for (`shaped`, built both ways by
 * `withAndWithoutMessages`), its answer, and what the answer says of them, remembered. With the
 * webhook CTEs for an entity this process has found with an enabled endpoint (store/hooked-entities.ts)
 * or when `hooked` (the write without them said it has one); else without them, which writes nothing
 * for an entity that has one: another process may have added it a moment ago. 'hooked' when that
 * write wrote nothing because of one and its answer gives the POST nothing else to go on (`refused`):
 * the caller runs it again with `hooked`, as a statement of its own (a `single` work holds one). A
 * wrong guess costs a statement, never a message. A write whose answer has more to go on (the match)
 * passes it on, and the POST's next statement follows the answer (docs/architecture.md, The write path).
 */
function writeForEndpoints<P, R extends { hooked: boolean | null }>(
  db: Db, entityId: number, hooked: boolean, shaped: (messages: boolean) => Statement<P, R>, params: P,
): Work<R[]>;
function writeForEndpoints<P, R extends { hooked: boolean | null }>(
  db: Db, entityId: number, hooked: boolean, shaped: (messages: boolean) => Statement<P, R>, params: P,
  refused: (row: R | undefined) => boolean,
): Work<R[] | 'hooked'>;
function* writeForEndpoints<P, R extends { hooked: boolean | null }>(
  db: Db, entityId: number, hooked: boolean, shaped: (messages: boolean) => Statement<P, R>, params: P,
  refused: (row: R | undefined) => boolean = () => false,
): Work<R[] | 'hooked'> {
  const messages = hooked || mayHaveEndpoints(db, entityId);
  const rows = yield* all(shaped(messages), params);
  // The shape of a new work without messages says nothing of them (null): "refused" says it.
  const said = rows[0]?.hooked;
  if (said != null) rememberEndpoints(db, entityId, said);
  return !messages && refused(rows[0]) ? 'hooked' : rows;
}

/**
 * PostgreSQL: a new artwork recorded (`recording`: its changelog entry, counts, image job, webhook
 * messages and their jobs) in one statement, which is a transaction of its own (no BEGIN or COMMIT
 * round trips). When a match exists it inserts and records nothing and answers the matches instead
 * (`inserted_id` null), which a re-post then updates in one more statement (`updateAndRecord`).
 * `hooked`: whether the entity has an enabled webhook endpoint, in the shape with messages. The shape
 * without them (store/hooked-entities.ts) inserts nothing when it has, which its answer shows without a
 * second probe: nothing inserted and no match; then the shape with them runs instead.
 *
 * A match comes back as one JSON column (its row, `row_version` and `match_rank`), not as the
 * artwork's 30-odd columns: every answer, a new work's too, carried them all (null), and the driver
 * described and read them all: ~6 % of the process's CPU per new work (docs/performance.md, Writes,
 * CPU per POST). JSON keeps every value as the columns would (the artwork's
 * columns are text, integers and doubles; BIGINT arrives as a number either way, src/db/connect.ts).
 */
const insertAndRecordOf = (messages: boolean) => recordingOf((images) => statement((db, p: Params<NewArtwork & MatchKey & RecordedWrite>) => rawQuery<MatchesAnswer & { inserted_id: number | null; hooked: boolean | null }>(db, sql`
  with inserted as (${insertNewArtwork(db, p, messages ? undefined : enabledEndpointExists(p.entityId))}),
  ${recording(p, sql`(select id from inserted)`, sql`exists (select 1 from inserted)`, images, messages)}
  select i.id as inserted_id, to_json(m) as matched, ${messages ? enabledEndpointExists(p.entityId) : sql`null`} as hooked, ${RECORDED}
  from (select 1) as one left join inserted i on true
  left join (${matchesOf(p)}) m on true`), { signal: recordedSignals }));
const insertAndRecord = withAndWithoutMessages(insertAndRecordOf);

/** What a POST's first statement answers when it wrote nothing: a row per match (none: `matched` null). */
type MatchesAnswer = Recorded & { matched: (Matched & { match_rank: number }) | null };

/**
 * The update of a re-post, if the row is still the version read (a write in between changes `xmin`:
 * then it writes nothing) and `guard` holds; it answers the row's new version.
 */
const updateIfVersion = (db: Db, p: Params<ArtworkRow & { rowVersion: string }>, guard: RawBuilder<boolean> = sql<boolean>`true`) => db.updateTable('artworks')
  .set(columns(p, STORED_COLUMNS)).where('id', '=', p.id).where(sql.ref('xmin'), '=', sql`cast(${p.rowVersion} as xid)`).where(guard)
  .returning(['id', sql<string>`cast(xmin as text)`.as('row_version')]);

/**
 * PostgreSQL: whether the entity has an enabled webhook endpoint, probed once (`hook`), for a re-post's
 * statement: in the shape without messages (`messages` false: store/hooked-entities.ts) its update
 * writes only when it has none, as a new work's insert; both shapes answer it (`hooked`), so the guess
 * follows it both ways. The message CTEs cost ~40 µs of PostgreSQL's CPU even when they write nothing.
 */
const hookOf = (p: Params<{ entityId: number }>) => sql`hook as (select ${enabledEndpointExists(p.entityId)} as hooked)`;
const unhooked = (messages: boolean) => (messages ? sql<boolean>`true` : sql<boolean>`not (select hooked from hook)`);

/** PostgreSQL: a re-post's update and its record in one statement, for the match the first statement found (`updateIfVersion`). */
const updateAndRecordOf = (messages: boolean) => recordingOf((images) => statement((db, p: Params<ArtworkRow & { rowVersion: string } & RecordedWrite>) => rawQuery<Recorded & Hooked & { id: number | null; row_version: string | null }>(db, sql`
  with ${hookOf(p)},
  updated as (${updateIfVersion(db, p, unhooked(messages))}),
  ${recording(p, sql`null`, sql`exists (select 1 from updated)`, images, messages)}
  select u.id, u.row_version, (select hooked from hook) as hooked, ${RECORDED} from (select 1) as one left join updated u on true`), { signal: recordedSignals }));
const updateAndRecord = withAndWithoutMessages(updateAndRecordOf);

/**
 * PostgreSQL: a re-post of a work this process re-posted before (store/stored-artworks.ts), merged in
 * the process and written in one statement with its record, if the work is still the POST's match (the
 * first of `matchingRows`, and the only one without an external_id) and still the version the process
 * holds. Otherwise it writes nothing and answers the matches, as a new work's statement does.
 */
const updateStoredAndRecordOf = (messages: boolean) => recordingOf((images) => statement((db, p: Params<ArtworkRow & MatchKey & { rowVersion: string } & RecordedWrite>) => rawQuery<MatchesAnswer & Hooked & { id: number | null; row_version: string | null }>(db, sql`
  with ${hookOf(p)},
  found as (${matchingRows(matchRuleOf(p))}),
  updated as (${updateIfVersion(db, p, sql<boolean>`(select f.id from found f order by f.match_rank, f.id limit 1) = ${p.id}
    and (cast(${p.externalId} as text) is not null or (select count(*) from found) = 1) and ${unhooked(messages)}`)}),
  ${recording(p, sql`null`, sql`exists (select 1 from updated)`, images, messages)}
  select u.id, u.row_version, to_json(m) as matched, (select hooked from hook) as hooked, ${RECORDED}
  from (select 1) as one left join updated u on true
  left join found m on u.id is null`), { signal: recordedSignals }));
const updateStoredAndRecord = withAndWithoutMessages(updateStoredAndRecordOf);

/** The input's own columns, as sent (null: not sent), which a re-post that changes nothing must find stored. */
type Sent = Pick<NewArtwork, (typeof INPUT_COLUMNS)[number]>;
type Unchanged = Sent & MatchKey & RecordedWrite & Pick<ArtworkRow, 'artist_id' | 'artist_linked_at' | 'feed_id' | 'fingerprint_version'> & { heldSync: string };

/**
 * The sync time a re-post that changes nothing records as the old one, in its entry's field changes as
 * the process makes them (`artworkRecord`), where only the database has it: `repostUnchangedOf` puts
 * the stored one in its place.
 */
const HELD_SYNC = 'stored last_synced_at';

/**
 * PostgreSQL: a re-post of a work this process does not hold (store/stored-artworks.ts) that changes
 * nothing but its sync time — the common POST of a sync — in one statement, with its record. It writes
 * the POST's match (the first of `matchingRows`, and the only one without an external_id) only if the
 * match already holds every value the POST sends, and its fingerprint is the POST's at today's slug
 * version: then `mergePost` would change nothing else, and the record is the one `artworkRecord` makes
 * of the POST's own values, the stored sync time put in (`HELD_SYNC`). The row's other columns are
 * the ones `mergePost` sets the same way for any match: the sync times, the artist linked, the feed.
 * Otherwise it writes nothing and answers the matches (none: a new work), as a new work's statement does.
 */
const repostUnchangedOf = (messages: boolean) => statement((db, p: Params<Unchanged>) => rawQuery<MatchesAnswer & Hooked & { updated: Matched | null }>(db, sql`
  with ${hookOf(p)},
  found as (${matchingRows(matchRuleOf(p))}),
  updated as (
    update artworks a set last_synced_at = ${p.at}, updated_at = ${p.at},
      artist_id = coalesce(cast(${p.artist_id} as integer), a.artist_id),
      artist_linked_at = coalesce(cast(${p.artist_linked_at} as text), a.artist_linked_at),
      feed_id = coalesce(cast(${p.feed_id} as integer), a.feed_id)
    where a.id = (select f.id from found f order by f.match_rank, f.id limit 1)
      and (cast(${p.externalId} as text) is not null or (select count(*) from found) = 1)
      and a.source_fingerprint = ${p.fingerprint} and a.fingerprint_version = ${p.fingerprint_version}
      and ${sql.join(INPUT_COLUMNS.map((column) => {
        const sent = sql`cast(${p[column]} as ${sql.raw(COLUMN_TYPES[column])})`;
        return sql`(${sent} is null or a.${sql.ref(column)} = ${sent})`;
      }), sql` and `)}
      and ${unhooked(messages)}
    returning a.*, cast(a.xmin as text) as row_version),
  ${recording(p, sql`(select id from updated)`, sql`exists (select 1 from updated)`, false, messages,
    sql`replace(cast(e.field_changes as text), ${p.heldSync}, (select coalesce(cast(to_json(f.last_synced_at) as text), 'null') from found f join updated u on u.id = f.id))`)}
  select to_json(u) as updated, to_json(m) as matched, (select hooked from hook) as hooked, ${RECORDED}
  from (select 1) as one left join updated u on true
  left join found m on u.id is null`), { signal: recordedSignals });
const repostUnchanged = withAndWithoutMessages(repostUnchangedOf);

const saveArtwork = statement((db, p: Params<ArtworkRow>) => db.updateTable('artworks')
  .set(columns(p, STORED_COLUMNS)).where('id', '=', p.id).returning('id'));

const artworkByExternalId = statement((db, p: Params<{ entityId: number; externalId: string }>) => lockForUpdate(db,
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('external_id', '=', p.externalId)));

const unnumberedByFingerprint = statement((db, p: Params<{ entityId: number; fingerprint: string }>) => lockForUpdate(db,
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('source_fingerprint', '=', p.fingerprint)
    .where('external_id', 'is', null)));

/** Two rows are enough to tell "the match" from "ambiguous"; the candidates are listed apart. */
const artworksByFingerprint = statement((db, p: Params<{ entityId: number; fingerprint: string }>) => lockForUpdate(db,
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('source_fingerprint', '=', p.fingerprint)
    .orderBy('id').limit(2)));

const CANDIDATES_MAX = 100;
const idsByFingerprint = statement((db, p: Params<{ entityId: number; fingerprint: string }>) =>
  db.selectFrom('artworks').select('id').where('entity_id', '=', p.entityId).where('source_fingerprint', '=', p.fingerprint)
    .orderBy('id').limit(CANDIDATES_MAX));

const ownArtwork = (db: Db, p: Params<{ entityId: number; id: number }>) =>
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id);
const artworkById = statement(ownArtwork);
const artworkByIdForUpdate = statement((db, p: Params<{ entityId: number; id: number }>) => lockForUpdate(db, ownArtwork(db, p)));

const deleteArtworkById = statement((db, p: Params<{ entityId: number; id: number }>) =>
  db.deleteFrom('artworks').where('entity_id', '=', p.entityId).where('id', '=', p.id).returningAll());

/** Creates the artwork, or merges into the one it matches (docs/api.md, Artworks). */
export async function postArtwork(db: Db, actor: Actor, input: ArtworkInput): Promise<PostedArtwork> {
  if (isPostgres(db)) {
    const at = nowIso();
    let fast = await single(db, () => postNewArtworkWork(db, actor, input, at, 'first'));
    if (fast === 'new') fast = await single(db, () => postNewArtworkWork(db, actor, input, at, 'new'));
    if (fast === 'hooked') fast = await single(db, () => postNewArtworkWork(db, actor, input, at, 'hooked'));
    if (typeof fast === 'object') {
      if ('created' in fast) return fast;
      let reposted = await single(db, () => repostWork(db, actor, input, fast, at, false));
      if (reposted === 'hooked') reposted = await single(db, () => repostWork(db, actor, input, fast, at, true));
      if (typeof reposted === 'object') return reposted;
    }
  }
  return transaction(db, () => postArtworkWork(db, actor, input));
}

/** What PostgreSQL's first statement of a POST found: the artwork it may update, the artist it links. */
interface Repost { existing: Matched; artist: Partial<ArtworkRow> }

/**
 * PostgreSQL's common cases in one statement each: a new work, or a re-post of one this process
 * re-posted before (store/stored-artworks.ts), whose artist (if any) this process knows and which
 * sends no additional views (written beside the row, store/images.ts). Else a re-post's match, for
 * one more statement (`repostWork`); undefined when nothing was written: the POST runs the general way.
 * `attempt` 'first': a work this process holds is re-posted, and for an entity whose last POST was a
 * re-post (store/stored-artworks.ts, `repostLikely`) a work it does not hold is tried as an unchanged
 * re-post ('new' when none matches: the caller runs it again as a new work). A new work's statement
 * records webhook messages for an entity known to have an endpoint (store/hooked-entities.ts) or after
 * 'hooked': the statement without them wrote nothing because the entity has one.
 */
function* postNewArtworkWork(
  db: Db, actor: Actor, input: ArtworkInput, at: string, attempt: 'first' | 'new' | 'hooked',
): Work<PostedArtwork | Repost | 'new' | 'hooked' | undefined> {
  if (input.additional_images != null) return undefined;
  const artistId = input.artist_name == null ? undefined : knownArtist(db, input.artist_name);
  if (input.artist_name != null && artistId === undefined) return undefined;
  const fingerprint = artworkFingerprint(input);
  const artist = artistId === undefined ? {} : { artist_id: artistId, artist_linked_at: at };
  const keys: MatchKey = { entityId: actor.entityId, fingerprint, externalId: input.external_id ?? null };
  const stored = attempt === 'first' ? storedArtwork(db, keys.entityId, keys.externalId, fingerprint) : undefined;
  if (stored) {
    const reposted = yield* repostStoredWork(db, actor, input, keys, artist, stored, at);
    if (reposted !== 'stale') return reposted;
  } else if (attempt === 'first' && repostLikely(db, actor.entityId)) {
    return yield* repostUnchangedWork(db, actor, input, keys, artist, at);
  }
  const values = newArtwork(actor, input, artist, fingerprint, at);
  const { entries, delta } = artworkRecord(null, { ...values, id: 0 }, null, at);
  const write = recordedWrite(actor, entries, delta, at, values.image_url === null ? [] : [values.image_url]);
  // Without messages, nothing inserted and no match: the entity has an endpoint (or, rarely, a concurrent
  // POST of the same work took its keys, which the statement with messages then finds): again with them.
  const rows = yield* writeForEndpoints(db, actor.entityId, attempt === 'hooked', (messages) => insertAndRecord(messages)(write),
    { ...values, ...write, ...keys }, (answer) => answer?.inserted_id == null && answer?.matched == null);
  if (rows === 'hooked') return 'hooked';
  const [row] = rows;
  rememberPosted(db, actor.entityId, row?.inserted_id == null);
  if (row?.inserted_id == null) return matchOf(rows, input, artist);
  return { artwork: { ...values, id: Number(row.inserted_id) }, created: true, changed: true };
}

/**
 * A re-post of a work this process does not hold, as one that changes nothing but the sync time
 * (`repostUnchangedOf`): written, or the match the statement found for one more statement, or 'new'
 * when no work matches (the new work's statement follows).
 */
function* repostUnchangedWork(db: Db, actor: Actor, input: ArtworkInput, keys: MatchKey, artist: Partial<ArtworkRow>, at: string): Work<PostedArtwork | Repost | undefined | 'new'> {
  const values = newArtwork(actor, input, artist, keys.fingerprint, at);
  const after = { ...values, id: 0 };
  const { entries, delta } = artworkRecord({ ...after, last_synced_at: HELD_SYNC }, after, null, at);
  const write = recordedWrite(actor, entries, delta, at, []);
  const sent = Object.fromEntries(INPUT_COLUMNS.map((column) => [column, input[column] ?? null])) as Sent;
  // Without messages it writes nothing for an entity with an endpoint, and answers the match or none.
  const rows = yield* writeForEndpoints(db, actor.entityId, false, repostUnchanged, {
    ...sent, ...keys, ...write, artist_id: values.artist_id, artist_linked_at: values.artist_linked_at, feed_id: actor.feedId ?? null,
    fingerprint_version: SLUG_VERSION, heldSync: JSON.stringify(HELD_SYNC),
  });
  const [row] = rows;
  if (row?.updated) {
    const { row_version: version, ...artwork } = row.updated;
    rememberArtwork(db, artwork, version);
    return { artwork, created: false, changed: false };
  }
  if (!row?.matched) {
    rememberPosted(db, actor.entityId, false);
    return 'new';
  }
  return matchOf(rows, input, artist);
}

/**
 * A re-post of a work this process re-posted before, merged into the row it holds, in one statement:
 * written, or (when the row it holds is no longer the match, or not its version) the match the
 * statement found. 'stale' before any statement when the merge with the row held refuses the POST,
 * which the row stored may not: the POST then runs as an uncached one, which decides.
 */
function* repostStoredWork(
  db: Db, actor: Actor, input: ArtworkInput, keys: MatchKey, artist: Partial<ArtworkRow>, stored: StoredArtwork, at: string,
): Work<PostedArtwork | Repost | undefined | 'stale'> {
  let merged: ArtworkWrite;
  try {
    merged = mergePost(actor, stored.row, input, artist, null, at);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    forgetArtwork(db, keys.entityId, keys.externalId, keys.fingerprint);
    return 'stale';
  }
  const { posted, entries, delta } = merged;
  // An image URL let go, or views changed, take statements of their own (store/images.ts): the general way.
  if (touchesImages(entries)) return undefined;
  const write = recordedWrite(actor, entries, delta, at, imageUrlsSet(posted.artwork, stored.row));
  // Without messages it writes nothing for an entity with an endpoint, and answers the match.
  const rows = yield* writeForEndpoints(db, actor.entityId, false, (messages) => updateStoredAndRecord(messages)(write),
    { ...posted.artwork, ...keys, rowVersion: stored.version, ...write });
  const [row] = rows;
  if (row?.id != null) {
    rememberArtwork(db, posted.artwork, row.row_version!, stored.row);
    rememberPosted(db, actor.entityId, true);
    return posted;
  }
  forgetArtwork(db, keys.entityId, keys.externalId, keys.fingerprint);
  return matchOf(rows, input, artist);
}

/**
 * The match a POST's first statement answered, unless there is none or, without an external_id,
 * several (409 ambiguous, which the general way says).
 */
function matchOf(rows: readonly MatchesAnswer[], input: ArtworkInput, artist: Partial<ArtworkRow>): Repost | undefined {
  const matches = rows.flatMap((match) => (match.matched ? [match.matched] : []));
  if (matches.length === 0 || (input.external_id == null && matches.length > 1)) return undefined;
  const { match_rank: _rank, ...existing } = matches[0]!;
  return { existing, artist };
}

/** The image URL a re-post sets, if it sets a new one (its image job is queued by the write's record). */
const imageUrlsSet = (artwork: ArtworkRow, stored: ArtworkRow): string[] =>
  (artwork.image_url !== null && artwork.image_url !== stored.image_url ? [artwork.image_url] : []);

/**
 * PostgreSQL: a re-post of the artwork the first statement found, in one more statement; undefined when
 * it wrote nothing. 'hooked' when it left the webhook CTEs out for an entity that has an endpoint: the
 * caller runs it again with them (`hooked`).
 */
function* repostWork(
  db: Db, actor: Actor, input: ArtworkInput, { existing, artist }: Repost, at: string, hooked: boolean,
): Work<PostedArtwork | undefined | 'hooked'> {
  const { row_version: rowVersion, ...stored } = existing;
  const { posted, entries, delta } = mergePost(actor, stored, input, artist, null, at);
  // An image URL let go, or views changed, take statements of their own (store/images.ts): the general way.
  if (touchesImages(entries)) return undefined;
  const write = recordedWrite(actor, entries, delta, at, imageUrlsSet(posted.artwork, stored));
  const params = { ...posted.artwork, rowVersion, ...write };
  // Without messages it wrote nothing for an entity with an endpoint: again with them.
  const rows = yield* writeForEndpoints(db, actor.entityId, hooked, (messages) => updateAndRecord(messages)(write), params,
    (answer) => answer?.id == null && answer?.hooked === true);
  if (rows === 'hooked') return 'hooked';
  const [row] = rows;
  if (row?.id == null) return undefined;
  rememberArtwork(db, posted.artwork, row.row_version!, stored);
  return posted;
}

/** A concurrent delete can take a match away between two statements; then the insert is tried again. */
const MATCH_ATTEMPTS = 3;

/** An artwork written and what its changelog and counts must record. */
interface ArtworkWrite extends ArtworkRecord {
  posted: PostedArtwork;
}

/**
 * The write of one POST, to run in a transaction of its own or in a batch's savepoint. No lock is
 * taken before the row's own: concurrent writes of one catalog run side by side (migration 006).
 */
export function* postArtworkWork(db: Db, actor: Actor, input: ArtworkInput): Work<PostedArtwork> {
  const at = nowIso();
  const { posted, entries, delta } = yield* writeArtwork(db, actor, input, at);
  yield* recordWrite(db, actor, entries, delta, at);
  return posted;
}

function* writeArtwork(db: Db, actor: Actor, input: ArtworkInput, at: string): Work<ArtworkWrite> {
  const fingerprint = artworkFingerprint(input);
  const externalId = input.external_id ?? null;
  const { columns: artist, created: newArtist } = yield* linkArtist(db, input.artist_name, at);
  const values = newArtwork(actor, input, artist, fingerprint, at);
  for (let attempt = 1; attempt <= MATCH_ATTEMPTS; attempt++) {
    const inserted = yield* first(insertUnlessMatched, { ...values, entityId: actor.entityId, fingerprint, externalId });
    if (inserted) {
      const artwork = { ...values, ...inserted };
      return { posted: { artwork, created: true, changed: true }, ...artworkRecord(null, artwork, newArtist, at) };
    }
    const existing = yield* findMatch(actor.entityId, fingerprint, externalId);
    if (!existing) continue;
    const write = mergePost(actor, existing, input, artist, newArtist, at);
    yield* save(write.posted.artwork, at);
    return write;
  }
  throw new Error(`no artwork to insert or update for fingerprint ${fingerprint} after ${MATCH_ATTEMPTS} attempts`);
}

// PostgreSQL: a batch's new artworks in one statement. Per item: the columns that differ between items.
const ITEM_COLUMNS = [...INPUT_COLUMNS, 'artist_id', 'artist_linked_at', 'source_fingerprint', 'feed_id'] as const;
type ItemColumn = (typeof ITEM_COLUMNS)[number];
type ItemArrays = { [K in ItemColumn]: Array<NewArtwork[K]> };
interface InsertMany extends ItemArrays { entityId: number; fingerprintVersion: number; at: string }

/** An artwork a POST must update exists for item `i` (`matchedBy`, as a single POST's insert tests it). */
const itemMatched = (db: Db, p: Params<InsertMany>, i: string) => matchedBy(db, matchRule(p.entityId, sql.ref(`${i}.external_id`), sql.ref(`${i}.source_fingerprint`)));

/**
 * Inserts a batch's items in item order, so ids follow the items. `each`: the items no artwork
 * matches; an item a unique index refuses (a concurrent POST of the same work) is skipped. `all`: every
 * item, or none when any is matched; a concurrent POST of the same work fails the statement (a unique
 * violation). Each item's test is an index lookup per probe (`matchedBy`).
 */
const insertItems = (db: Db, p: Params<InsertMany>, items: 'each' | 'all') => sql`
  insert into artworks (${sql.join(ITEM_COLUMNS.map((column) => sql.ref(column)))},
    entity_id, fingerprint_version, last_synced_at, created_at, updated_at)
  select ${sql.join(ITEM_COLUMNS.map((column) => sql.ref(`i.${column}`)))},
    ${p.entityId}, ${p.fingerprintVersion}, ${p.at}, ${p.at}, ${p.at}
  from unnest(${sql.join(ITEM_COLUMNS.map((column) => sql`cast(${p[column]} as ${sql.raw(COLUMN_TYPES[column])}[])`))})
    with ordinality as i(${sql.join(ITEM_COLUMNS.map((column) => sql.ref(column)))}, n)
  where ${items === 'each' ? sql`not ${itemMatched(db, p, 'i')}` : sql`not exists (select 1 from unnest(cast(${p.source_fingerprint} as text[]),
    cast(${p.external_id} as text[])) as c(source_fingerprint, external_id) where ${itemMatched(db, p, 'c')})`}
  order by i.n
  ${items === 'each' ? sql`on conflict do nothing` : sql``}
  returning id, source_fingerprint`;

const insertManyUnlessMatched = statement((db, p: Params<InsertMany>) => rawQuery(db, sql<{ id: number; source_fingerprint: string }>`${insertItems(db, p, 'each')}`));

/** The fingerprint of the item each entry records (null: an artist's entry), for the ids the insert gives. */
type InsertAndRecord = InsertMany & RecordedWrite & { entryFingerprints: Array<string | null>; items: number };

/**
 * PostgreSQL: a batch of new works inserted and recorded (`recording`) in one statement. Its entries'
 * record ids are the ids the insert gave their items, in entry order (`written`, read once; `e.n`: an
 * entry's place in `recording`'s entries). Nothing is recorded unless every item was inserted: the
 * caller then writes the others and records the whole batch in item order.
 */
const insertAndRecordMany = (items: 'each' | 'all') => statement((db, p: Params<InsertAndRecord>) => rawQuery<{ id: number; source_fingerprint: string } & Recorded>(db, sql`
  with inserted as (${insertItems(db, p, items)}),
  written as (select array_agg(i.id order by f.n) as ids
    from unnest(cast(${p.entryFingerprints} as text[])) with ordinality as f(source_fingerprint, n)
    left join inserted i on i.source_fingerprint = f.source_fingerprint),
  ${recording(p, sql`(select ids from written)[cast(e.n as integer)]`, sql`(select count(*) from inserted) = ${p.items}`)}
  select i.id, i.source_fingerprint, ${RECORDED} from inserted i`), { signal: recordedSignals });
const insertAndRecordEach = insertAndRecordMany('each');
const insertAndRecordAll = insertAndRecordMany('all');

type MatchKeys = { entityId: number; fingerprints: string[]; externalIds: Array<string | null> };

/**
 * PostgreSQL: the artworks a batch's items may update, as `findMatch` looks for them (`n`: the item's
 * place in the keys, from 1; with an external_id, the one that has it first; two rows are enough to
 * tell an ambiguous match), each with its row version (`xmin`, which any later write changes): two
 * index probes per item, no lock (the update checks the version instead, `updateMatched`).
 */
const matchesOfItems = statement((db, p: Params<MatchKeys>) => rawQuery<Matched & { n: number | string; match_rank: number }>(db, sql`
  select k.n, m.* from unnest(cast(${p.fingerprints} as text[]), cast(${p.externalIds} as text[])) with ordinality as k(fingerprint, external_id, n)
  cross join lateral (${matchingRows(matchRule(p.entityId, sql`k.external_id`, sql`k.fingerprint`))}) as m
  order by k.n, m.match_rank, m.id`));

type SavedArrays = { [K in (typeof STORED_COLUMNS)[number]]: Array<ArtworkRow[K]> } & { ids: number[]; rowVersions: string[] };

/**
 * PostgreSQL: a batch's re-posted artworks saved in one statement, each only if its row is still the
 * version read (`matchesOfItems`); answers the ids it saved. A row written in between is saved by the
 * caller the general way (`writeArtwork`, which locks it).
 */
const updateMatched = statement((db, p: Params<SavedArrays>) => rawQuery<{ id: number }>(db, sql`
  update artworks a set ${sql.join(STORED_COLUMNS.map((column) => sql`${sql.ref(column)} = u.${sql.ref(column)}`))}
  from unnest(${sql.join(STORED_COLUMNS.map((column) => sql`cast(${p[column]} as ${sql.raw(COLUMN_TYPES[column])}[])`))},
    cast(${p.ids} as integer[]), cast(${p.rowVersions} as text[])) as u(${sql.join(STORED_COLUMNS.map((column) => sql.ref(column)))}, id, row_version)
  where a.id = u.id and a.xmin = cast(u.row_version as xid)
  returning a.id`));

/**
 * PostgreSQL: a batch's re-posts (items no artwork was inserted for, none sharing a key with another
 * item) merged into the artworks they match and saved in two statements, whatever their number. An
 * item without a single match (ambiguous, or none any more), or whose row changed since it was read,
 * is left out: the caller writes it the general way. A rule that refuses a merge refuses the batch's
 * transaction, as item by item.
 */
function* repostItems(db: Db, actor: Actor, inputs: readonly ArtworkInput[], batch: NewBatch, items: readonly number[], at: string): Work<Map<number, ArtworkWrite>> {
  const written = new Map<number, ArtworkWrite>();
  if (items.length === 0) return written;
  const rows = yield* all(matchesOfItems, {
    entityId: actor.entityId,
    fingerprints: items.map((i) => batch.values[i]!.source_fingerprint),
    externalIds: items.map((i) => batch.values[i]!.external_id),
  });
  const found = new Map<number, Matched[]>();
  for (const { n, match_rank: _rank, ...row } of rows) found.set(Number(n), [...(found.get(Number(n)) ?? []), row]);
  const versions = new Map<number, string>();
  const claimed = new Set<number>();
  for (const [k, i] of items.entries()) {
    const matches = found.get(k + 1) ?? [];
    const input = inputs[i]!;
    if (matches.length === 0 || (input.external_id == null && matches.length > 1)) continue;
    const { row_version: rowVersion, ...existing } = matches[0]!;
    // Two items that match one artwork: the later one is written after the earlier, the general way.
    if (claimed.has(existing.id)) continue;
    claimed.add(existing.id);
    written.set(i, mergePost(actor, existing, input, artistColumns(input, batch, at), null, at));
    versions.set(i, rowVersion);
  }
  if (written.size === 0) return written;
  const saved = [...written.values()].map((write) => write.posted.artwork);
  const arrays = Object.fromEntries(STORED_COLUMNS.map((column) => [column, saved.map((artwork) => artwork[column])]));
  const updated = new Set((yield* all(updateMatched, {
    ...arrays as unknown as SavedArrays, ids: saved.map((artwork) => artwork.id), rowVersions: [...versions.values()],
  })).map((row) => Number(row.id)));
  for (const [i, write] of written) if (!updated.has(write.posted.artwork.id)) written.delete(i);
  return written;
}

/** The artist columns of a batch's item, its artist resolved with the batch's (as `linkArtist` for one). */
function artistColumns(input: ArtworkInput, batch: NewBatch, at: string): Partial<ArtworkRow> {
  if (input.artist_name === undefined) return {};
  if (input.artist_name === null) return { artist_id: null, artist_linked_at: null };
  return { artist_id: batch.artists.get(slugify(input.artist_name))!.id, artist_linked_at: at };
}

/** A POST merged into the artwork it matches (docs/api.md, Artworks): the row to save and what to record. */
function mergePost(actor: Actor, existing: ArtworkRow, input: ArtworkInput, artist: Partial<ArtworkRow>, newArtist: Change | null, at: string): ArtworkWrite {
  const merged = mergeNonNull(existing, { ...input, ...artist });
  checkArtworkCoherence(merged);
  merged.source_fingerprint = artworkFingerprint(merged);
  merged.fingerprint_version = SLUG_VERSION;
  // A feed's row that changes a record makes it the feed's own (docs/api.md, Feeds: a mirror deletes only its own).
  merged.feed_id = actor.feedId ?? existing.feed_id;
  const artwork = { ...merged, last_synced_at: at, updated_at: at };
  const record = artworkRecord(existing, artwork, newArtist, at);
  return { posted: { artwork, created: false, changed: isRealChange(record.changes) }, ...record };
}

/** A batch's rows before they are written, and which items must be written on their own. */
interface NewBatch {
  values: NewArtwork[];
  /** Items that share a fingerprint or an external_id with an earlier one: they may match it. */
  alone: boolean[];
  artists: Map<string, { id: number; created: Change | null }>;
}

function newBatch(actor: Actor, inputs: readonly ArtworkInput[], artists: NewBatch['artists'], at: string): NewBatch {
  const values = inputs.map((input) => {
    const artist = input.artist_name == null ? undefined : artists.get(slugify(input.artist_name));
    const columns = artist ? { artist_id: artist.id, artist_linked_at: at } : {};
    return newArtwork(actor, input, columns, artworkFingerprint(input), at);
  });
  const seen = new Set<string>();
  const alone = values.map((value) => {
    const keys = [`f:${value.source_fingerprint}`, ...(value.external_id === null ? [] : [`e:${value.external_id}`])];
    const shared = keys.some((key) => seen.has(key));
    for (const key of keys) seen.add(key);
    return shared;
  });
  return { values, alone, artists };
}

/**
 * The parameters of a statement that inserts and records a batch of new works (`insertAndRecordMany`),
 * or undefined when it cannot: an item that may match an earlier one, or views (written beside the
 * row, with its id: store/images.ts).
 */
function* newWorksRecord(db: Db, actor: Actor, inputs: readonly ArtworkInput[], batch: NewBatch, at: string): Work<InsertAndRecord | undefined> {
  if (batch.alone.includes(true) || inputs.some((input) => input.additional_images != null)) return undefined;
  const entries: Change[] = [];
  const entryFingerprints: Array<string | null> = [];
  const deltas: StatsDelta[] = [];
  for (const [i, input] of inputs.entries()) {
    const { entries: own, delta } = artworkRecord(null, { ...batch.values[i]!, id: 0 }, artistCreated(input, batch, entries), at);
    for (const entry of own) entryFingerprints.push(entry.entityType === 'artwork' ? batch.values[i]!.source_fingerprint : null);
    entries.push(...own);
    deltas.push(delta);
  }
  // New works without views: their image URLs, sorted, without a statement.
  const urls = yield* imagesWritten(db, actor.entityId, entries, at);
  return {
    ...recordedWrite(actor, entries, deltas, at, urls), ...itemArraysOf(batch.values), fingerprintVersion: SLUG_VERSION, entryFingerprints, items: inputs.length,
  };
}

const itemArraysOf = (values: readonly NewArtwork[]) =>
  Object.fromEntries(ITEM_COLUMNS.map((column) => [column, values.map((value) => value[column])])) as unknown as ItemArrays;

/** A new artist's creation is recorded before the first artwork linked to it, as item by item. */
function artistCreated(input: ArtworkInput, batch: NewBatch, entries: readonly Change[], artistId?: number | null): Change | null {
  const artist = input.artist_name == null ? undefined : batch.artists.get(slugify(input.artist_name));
  if (!artist?.created || entries.includes(artist.created)) return null;
  return artistId === undefined || artistId === artist.id ? artist.created : null;
}

/**
 * PostgreSQL: a batch of new works whose artists this process knows, inserted and recorded in one
 * statement that is its own transaction (no BEGIN or COMMIT round trips), as a single POST's new work
 * (`postArtworkWork`). Undefined when it wrote nothing: an item matches an artwork or names an artist
 * not known yet, or a concurrent POST of the same work failed the statement (a unique violation, for
 * the caller to catch); then the batch is written in a transaction (`postArtworksWork`).
 */
export function* postNewArtworksWork(db: Db, actor: Actor, inputs: readonly ArtworkInput[]): Work<PostedArtwork[] | undefined> {
  const at = nowIso();
  const artists = new Map<string, { id: number; created: Change | null }>();
  for (const name of inputs.flatMap((input) => (input.artist_name == null ? [] : [input.artist_name]))) {
    const id = knownArtist(db, name);
    if (id === undefined) return undefined;
    artists.set(slugify(name), { id, created: null });
  }
  const batch = newBatch(actor, inputs, artists, at);
  const params = yield* newWorksRecord(db, actor, inputs, batch, at);
  if (!params) return undefined;
  const rows = yield* all(insertAndRecordAll, params);
  if (rows.length !== inputs.length) return undefined;
  return rows.map((row, i) => ({ artwork: { ...batch.values[i]!, id: Number(row.id) }, created: true, changed: true }));
}

/**
 * The items of a batch, written as `postArtworkWork` writes each in turn, with the same results and
 * changelog. On PostgreSQL a batch is a handful of statements: the artists in one (none when this
 * process knows them), the new artworks with their changelog and counts in one; only an item that
 * matches an artwork (or an earlier item) is written on its own, and then the batch is recorded in
 * one more. SQLite writes item by item, which costs it no round trips.
 */
export function* postArtworksWork(db: Db, actor: Actor, inputs: readonly ArtworkInput[]): Work<PostedArtwork[]> {
  if (!isPostgres(db)) {
    const posted: PostedArtwork[] = [];
    for (const input of inputs) posted.push(yield* postArtworkWork(db, actor, input));
    return posted;
  }
  const at = nowIso();
  const artists = yield* resolveArtists(db, inputs.flatMap((input) => (input.artist_name ? [input.artist_name] : [])), at);
  const batch = newBatch(actor, inputs, artists, at);
  const { values, alone } = batch;
  const inserted = new Map<string, number>();
  const together = yield* newWorksRecord(db, actor, inputs, batch, at);
  const candidates = values.filter((_, i) => !alone[i]);
  if (together) {
    const rows = yield* all(insertAndRecordEach, together);
    if (rows.length === inputs.length) return rows.map((row, i) => ({ artwork: { ...values[i]!, id: Number(row.id) }, created: true, changed: true }));
    for (const row of rows) inserted.set(row.source_fingerprint, Number(row.id));
  } else if (candidates.length > 0) {
    const rows = yield* all(insertManyUnlessMatched, { ...itemArraysOf(candidates), entityId: actor.entityId, fingerprintVersion: SLUG_VERSION, at });
    for (const row of rows) inserted.set(row.source_fingerprint, Number(row.id));
  }
  // The re-posts together, unless an item may match an earlier one: then every item in turn, as one by one.
  const reposts = alone.includes(true) ? new Map<number, ArtworkWrite>()
    : yield* repostItems(db, actor, inputs, batch, values.flatMap((value, i) => (inserted.has(value.source_fingerprint) ? [] : [i])), at);
  const posted: PostedArtwork[] = [];
  const entries: Change[] = [];
  const deltas: StatsDelta[] = [];
  for (const [i, input] of inputs.entries()) {
    const id = alone[i] ? undefined : inserted.get(values[i]!.source_fingerprint);
    const write = id !== undefined
      ? { posted: { artwork: { ...values[i]!, id }, created: true, changed: true }, ...artworkRecord(null, { ...values[i]!, id }, null, at) }
      : reposts.get(i) ?? (yield* writeArtwork(db, actor, input, at));
    const created = artistCreated(input, batch, entries, write.posted.artwork.artist_id);
    if (created) entries.push(created);
    posted.push(write.posted);
    entries.push(...write.entries);
    deltas.push(write.delta);
  }
  yield* recordWrite(db, actor, entries, deltas, at);
  return posted;
}

/**
 * The artwork a POST updates (docs/api.md, Artworks): with an external_id, the one that has it, else one with
 * the fingerprint and no external_id (which adopts it); without, the one with the fingerprint — when
 * editions share it, the caller must choose with external_id (409 ambiguous).
 */
function* findMatch(entityId: number, fingerprint: string, externalId: string | null): Work<ArtworkRow | undefined> {
  if (externalId !== null) {
    return (yield* first(artworkByExternalId, { entityId, externalId }))
      ?? (yield* first(unnumberedByFingerprint, { entityId, fingerprint }));
  }
  const found = yield* all(artworksByFingerprint, { entityId, fingerprint });
  if (found.length < 2) return found[0];
  const candidates = (yield* all(idsByFingerprint, { entityId, fingerprint })).map((row) => row.id);
  throw new ApiError('ambiguous', 'Several artworks of this catalog have this title, artist and year (editions): send external_id to say which one.', { candidates });
}

/**
 * Applies a PUT: `null` clears; identity changes recompute the fingerprint; 409 when another artwork has the identity.
 * `change` may be worked out from the locked row (an undo puts back only what nobody changed since).
 */
export async function updateArtwork(db: Db, actor: Actor, id: number, change: ArtworkPatch | ((existing: ArtworkRow) => ArtworkPatch)): Promise<ArtworkRow> {
  let patch = typeof change === 'function' ? {} : change;
  try {
    return await transaction(db, () => updateArtworkWork(db, actor, id, (existing) => (patch = typeof change === 'function' ? change(existing) : change)));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw await read(db, () => duplicateOf(actor.entityId, id, patch));
  }
}

/** `updateArtwork` inside a caller's transaction (an undo's batch); a unique violation is the database's error. */
export function* updateArtworkWork(db: Db, actor: Actor, id: number, patchOf: (existing: ArtworkRow) => ArtworkPatch): Work<ArtworkRow> {
  const existing = yield* first(artworkByIdForUpdate, { entityId: actor.entityId, id });
  if (!existing) throw notFound('Artwork');
  const patch = patchOf(existing);
  const at = nowIso();
  const { columns: artist, created: newArtist } = yield* linkArtist(db, patch.artist_name, at);
  const merged = mergeDefined(existing, { ...patch, ...artist });
  checkArtworkCoherence(merged);
  merged.source_fingerprint = artworkFingerprint(merged);
  merged.fingerprint_version = SLUG_VERSION;
  const artwork = yield* save(merged, at);
  const { entries, delta } = artworkRecord(existing, artwork, newArtist, at);
  yield* recordWrite(db, actor, entries, delta, at);
  return artwork;
}

export async function deleteArtwork(db: Db, actor: Actor, id: number, unchanged?: UnchangedSince): Promise<void> {
  await transaction(db, () => deleteArtworkWork(db, actor, id, unchanged));
}

/** A delete (to the trash) inside a caller's transaction; the row as it was. */
export function* deleteArtworkWork(db: Db, actor: Actor, id: number, unchanged?: UnchangedSince): Work<ArtworkRow> {
  const deleted = yield* first(deleteArtworkById, { entityId: actor.entityId, id });
  if (!deleted) throw notFound('Artwork');
  checkUnchanged(deleted, unchanged);
  const at = nowIso();
  yield* moveToTrash(actor, 'artworks', deleted, at);
  yield* recordWrite(db, actor, [{
    entityType: 'artwork', recordId: id, action: 'delete',
    fieldChanges: artworkChanges(deleted, null),
  }], { artworks: -1, availability: { before: deleted.availability, after: null }, synced: 'artworks' }, at);
  return deleted;
}

const RESTORED_COLUMNS = [...NEW_COLUMNS, 'id'] as const;
const insertRestored = statement((db, p: Params<ArtworkRow>) => db.insertInto('artworks').values(columns(p, RESTORED_COLUMNS)));

/**
 * Brings an artwork back from the trash with its id and fields (docs/api.md, Trash): its fingerprint
 * recomputed with today's slug rules, its artist linked by name (created again if gone), recorded as a
 * `create`. 409 `duplicate` when a live artwork now holds its external_id (or, without one, its
 * fingerprint); 404 when the trash does not hold it.
 */
export async function restoreArtwork(db: Db, actor: Actor, id: number): Promise<ArtworkRow> {
  try {
    return await transaction(db, () => restoreArtworkWork(db, actor, id));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    // A live artwork took the identity between the check and the insert.
    throw restoreConflict(await read(db, function* () {
      const stored = yield* trashedRecord<ArtworkRow>(actor.entityId, 'artworks', id);
      return stored && (yield* identityHolder(actor.entityId, stored, artworkFingerprint(stored)))?.id;
    }));
  }
}

/** `restoreArtwork` inside a caller's transaction (an undo's batch); a unique violation is the database's error. */
export function* restoreArtworkWork(db: Db, actor: Actor, id: number): Work<ArtworkRow> {
  const stored = yield* takeFromTrash<ArtworkRow>(actor.entityId, 'artworks', id);
  const at = nowIso();
  const { columns: artist, created: newArtist } = yield* linkArtist(db, stored.artist_name, at);
  const fingerprint = artworkFingerprint(stored);
  const holder = yield* identityHolder(actor.entityId, stored, fingerprint);
  if (holder) throw restoreConflict(holder.id);
  const feedId = yield* liveFeed(actor.entityId, stored.feed_id);
  const artwork: ArtworkRow = {
    ...stored, ...artist, id, entity_id: actor.entityId, source_fingerprint: fingerprint, fingerprint_version: SLUG_VERSION,
    last_synced_at: at, updated_at: at, feed_id: feedId,
  };
  yield* all(insertRestored, artwork);
  const { entries, delta } = artworkRecord(null, artwork, newArtist, at);
  yield* recordWrite(db, actor, entries, delta, at);
  return artwork;
}

/** The live artwork holding a record's identity: its external_id, or without one its fingerprint. */
function* identityHolder(entityId: number, record: ArtworkRow, fingerprint: string): Work<ArtworkRow | undefined> {
  return record.external_id !== null
    ? yield* first(artworkByExternalId, { entityId, externalId: record.external_id })
    : yield* first(unnumberedByFingerprint, { entityId, fingerprint });
}

const restoreConflict = (existingId: number | undefined) => new ApiError('duplicate',
  'A live artwork of this catalog now has this external_id (or, without one, this title, artist and year): nothing was restored.',
  existingId === undefined ? {} : { existing_id: existingId });

export async function getArtwork(db: Db, entityId: number, id: number): Promise<ArtworkOut> {
  const row = await read(db, () => first(artworkById, { entityId, id }));
  if (!row) throw notFound('Artwork');
  return toArtwork(row);
}

export interface ArtworkListQuery extends PageRequest {
  availability?: Availability | undefined;
  imageStatus?: ImageStatus | undefined;
}

const LISTED = [
  'id', 'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'artist_name', 'image_url', 'external_id',
  'price_display',
] as const;

interface ListParams { entityId: number; availability: Availability | null; imageStatus: ImageStatus | null; offset: number; after: number }
interface PageRow { json: string; count: number; last_id: number | null; more: number | boolean }

/** The catalog, or one availability of it, or the works whose image is in one state, in id order. */
const listedIds = (db: Db, p: Params<ListParams>, byImage: boolean) => {
  const ids = db.selectFrom('artworks').select('id')
    .where('entity_id', '=', p.entityId)
    .where((eb) => eb.or([eb(sql`cast(${p.availability} as text)`, 'is', null), eb('availability', '=', p.availability)]));
  return byImage ? ids.where((eb) => imageStatusIs(db, eb, 'artworks', p.imageStatus)) : ids;
};

/**
 * One statement answers a page: the database renders its items as JSON text (one string instead of
 * 500 values turned into JavaScript strings and then serialized again), and says how many there are,
 * the last id, and whether a record follows it.
 *
 * Two shapes: `after` ranges over the (entity_id[, availability], id) index and costs the same at any
 * depth; `page` skips `offset` ids inside a subquery over that index (only ids are walked, not rows),
 * which grows with the depth. Page sizes are written into the SQL: SQLite re-plans `LIMIT ?` every run.
 */
function pageStatement(shape: 'after' | 'page', byImage = false) {
  return statementPerPageSize<ListParams, PageRow, Cost>(ARTWORK_PAGE_MAX, (db, p, limit) => {
    const ids = shape === 'after'
      ? listedIds(db, p, byImage).where('id', '>', p.after).orderBy('id').limit(sql.lit(limit))
      : listedIds(db, p, byImage).orderBy('id').limit(sql.lit(limit)).offset(p.offset);
    const rows = db.selectFrom('artworks').select(LISTED).where('id', 'in', ids).orderBy('id');
    const items = isPostgres(db)
      ? sql<string>`coalesce(json_agg(page order by page.id), '[]')::text`
      : sql<string>`coalesce(json_group_array(json_object(${sql.join(LISTED.map((column) => sql`${sql.lit(column)}, page.${sql.ref(column)}`))})), '[]')`;
    const page = db.selectFrom(rows.as('page')).select((eb) => [
      items.as('json'), eb.fn.countAll<number>().as('count'), eb.fn.max('page.id').as('last_id'),
    ]);
    return db.selectFrom(page.as('p')).select((eb) => [
      'p.json', 'p.count', 'p.last_id',
      eb.exists(listedIds(db, p, byImage).where('id', '>', eb.ref('p.last_id'))).as('more'),
    ]);
    // Filtered by image state, a page may walk past any number of works: a scan.
  }, byImage ? { cost: 'scan' } : shape === 'after' ? { cost: 'point' } : { cost: 'scan', inlineWhen: (p) => p.offset <= INLINE_OFFSET_MAX });
}
const artworksAfter = pageStatement('after');
const artworksByPage = pageStatement('page');
const artworksByImageAfter = pageStatement('after', true);
const artworksByImagePage = pageStatement('page', true);
const countByImage = statement((db, p: Params<ListParams>) => listedIds(db, p, true).clearSelect()
  .select((eb) => eb.fn.countAll<number>().as('n')), { cost: 'scan' });

/** A page of the catalog in id order as a JSON array of list items (ArtworkListItem). */
export function listArtworks(db: Db, entityId: number, query: ArtworkListQuery): Promise<ListedPage & { json: string }> {
  return read(db, function* () {
    const { limit, availability = null, imageStatus = null } = query;
    const params = { entityId, availability, imageStatus, offset: 0, after: 0 };
    const [after, byPage] = imageStatus ? [artworksByImageAfter, artworksByImagePage] : [artworksAfter, artworksByPage];
    const [row] = query.after !== undefined
      ? yield* all(after(limit), { ...params, after: query.after })
      : yield* all(byPage(limit), { ...params, offset: pageOffset(query.page ?? 1, limit) });
    const total = imageStatus
      ? Number((yield* first(countByImage, params))?.n ?? 0)
      : (yield* statsOf(entityId))[availability ?? 'artworks'];
    return {
      json: row?.json ?? '[]',
      total,
      hasMore: Boolean(row?.more),
      nextAfter: row?.last_id ?? null,
    };
  });
}

/** An artwork as the API shows it, before the images' states are added (src/store/present.ts, the one presenter of a record). */
export type ArtworkOut = Omit<ArtworkType, 'image' | 'additional_images'> & { additional_images: StoredView[] };

export function toArtwork(row: ArtworkRow): ArtworkOut {
  const { entity_id, artist_id, artist_linked_at, fingerprint_version, additional_images, ...artwork } = row;
  return { ...artwork, additional_images: parseViews(additional_images) };
}

/** The artist columns for an `artist_name` as sent (linked, created, cleared by null, or untouched). */
function* linkArtist(db: Db, name: string | null | undefined, at: string): Work<{ columns: Partial<ArtworkRow>; created: Change | null }> {
  if (name === undefined) return { columns: {}, created: null };
  if (name === null) return { columns: { artist_id: null, artist_linked_at: null }, created: null };
  const artist = yield* resolveArtist(db, name, at);
  return { columns: { artist_id: artist.id, artist_linked_at: at }, created: artist.created };
}

function* save(artwork: ArtworkRow, at: string): Work<ArtworkRow> {
  const saved = { ...artwork, last_synced_at: at, updated_at: at };
  if (!(yield* first(saveArtwork, saved))) throw new Error(`artwork ${artwork.id} vanished inside its write`);
  return saved;
}

/**
 * The changelog's field changes of an artwork: the views compared as their canonical text, recorded
 * as the arrays the API shows (`[]` for none).
 */
function artworkChanges(before: ArtworkRow | null, after: ArtworkRow | null): FieldChanges {
  const changes = fieldChanges(before, after, ARTWORK_CHANGE_FIELDS);
  const views = changes.additional_images;
  if (views) changes.additional_images = { old: parseViews(views.old as string | null), new: parseViews(views.new as string | null) };
  return changes;
}

interface ArtworkRecord {
  entries: Change[];
  delta: StatsDelta;
  changes: FieldChanges;
}

/** The changelog entries (a new artist's first) and the counts of an artwork write. */
function artworkRecord(before: ArtworkRow | null, after: ArtworkRow, newArtist: Change | null, at: string): ArtworkRecord {
  const changes = artworkChanges(before, after);
  const entries: Change[] = [{ entityType: 'artwork', recordId: after.id, action: before ? 'update' : 'create', fieldChanges: changes }];
  if (newArtist) entries.unshift(newArtist);
  const delta: StatsDelta = {
    artworks: before ? 0 : 1,
    availability: { before: before?.availability ?? null, after: after.availability },
    synced: 'artworks',
    artistLinked: after.artist_linked_at === at,
  };
  return { entries, delta, changes };
}

const unnumberedIdByFingerprint = statement((db, p: Params<{ entityId: number; fingerprint: string }>) =>
  db.selectFrom('artworks').select('id').where('entity_id', '=', p.entityId).where('source_fingerprint', '=', p.fingerprint)
    .where('external_id', 'is', null));

/** The 409 for a PUT whose external_id, or (without one) fingerprint, another artwork of the entity has. */
function* duplicateOf(entityId: number, id: number, patch: ArtworkPatch): Work<ApiError> {
  const current = yield* first(artworkById, { entityId, id });
  const wanted = current && mergeDefined(current, patch);
  const other = wanted && (wanted.external_id !== null
    ? yield* first(artworkByExternalId, { entityId, externalId: wanted.external_id })
    : yield* first(unnumberedIdByFingerprint, { entityId, fingerprint: artworkFingerprint(wanted) }));
  const message = wanted?.external_id != null
    ? 'Another artwork of this catalog already has this external_id.'
    : 'Another artwork of this catalog already has this title, artist and year.';
  return new ApiError('duplicate', message, { ...(other && other.id !== id ? { existing_id: other.id } : {}) });
}

/** The row a POST creates: every column spelled out, absent and null fields stored as NULL. */
function newArtwork(actor: Actor, input: ArtworkInput, artist: Partial<ArtworkRow>, fingerprint: string, at: string): NewArtwork {
  const fields = Object.fromEntries(INPUT_COLUMNS.map((column) => [column, input[column] ?? null])) as Pick<NewArtwork, (typeof INPUT_COLUMNS)[number]>;
  return {
    ...fields,
    title: input.title,
    price_display: input.price_display ?? 'shown',
    entity_id: actor.entityId,
    artist_id: artist.artist_id ?? null,
    artist_linked_at: artist.artist_linked_at ?? null,
    source_fingerprint: fingerprint,
    fingerprint_version: SLUG_VERSION,
    last_synced_at: at,
    created_at: at,
    updated_at: at,
    feed_id: actor.feedId ?? null,
  };
}
