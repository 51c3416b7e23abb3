import { sql } from 'kysely';
import { jsonArrayFrom as postgresJsonArrayFrom } from 'kysely/helpers/postgres';
import { jsonArrayFrom as sqliteJsonArrayFrom } from 'kysely/helpers/sqlite';
import { ARTWORK_CHANGE_FIELDS, type ArtworkInput, type ArtworkPatch } from '../domain/artwork.js';
import { fieldChanges, isRealChange, mergeDefined, mergeNonNull } from '../domain/diff.js';
import { ApiError, notFound } from '../domain/errors.js';
import { artworkFingerprint } from '../domain/fingerprint.js';
import { SLUG_VERSION } from '../domain/slug.js';
import { ARTWORK_PAGE_MAX, type ArtworkType, type Availability } from '../schemas/artworks.js';
import { isUniqueViolation } from '../db/errors.js';
import { all, columns, first, read, statement, statementPerPageSize, transaction, type Work } from '../db/statements.js';
import type { ArtworkRow, Db } from '../db/types.js';
import { resolveArtist } from './artists.js';
import { commitWrite, type Actor, type Change } from './changelog.js';
import { statsOf } from './stats.js';
import { isPostgres, lockForUpdate, nowIso, pageOffset } from './sql.js';

export interface PostedArtwork {
  artwork: ArtworkRow;
  created: boolean;
  /** false when a re-post changed nothing but last_synced_at. */
  changed: boolean;
}

type NewArtwork = Omit<ArtworkRow, 'id' | 'position'>;
const STORED_COLUMNS = [
  'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'description', 'image_url',
  'external_url', 'artist_name', 'artist_id', 'artist_linked_at', 'source_fingerprint', 'fingerprint_version',
  'last_synced_at', 'updated_at',
] as const;

// A new artwork goes last in its entity's catalog; the count moves in the same transaction (commitWrite).
const insertArtwork = statement((db, p: NewArtwork) => db.insertInto('artworks')
  .values({
    ...columns(p, [...STORED_COLUMNS, 'entity_id', 'created_at']),
    position: sql<number>`(select artworks + 1 from entity_stats where entity_id = ${p.entity_id})`,
  })
  .onConflict((oc) => oc.columns(['entity_id', 'source_fingerprint']).doNothing())
  // The other columns are the values just bound: returning them would only copy them back.
  .returning(['id', 'position']));

const saveArtwork = statement((db, p: ArtworkRow) => db.updateTable('artworks')
  .set(columns(p, STORED_COLUMNS)).where('id', '=', p.id).returning('id'));

const artworkByFingerprint = statement((db, p: { entityId: number; fingerprint: string }) => lockForUpdate(db,
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('source_fingerprint', '=', p.fingerprint)));

const ownArtwork = (db: Db, p: { entityId: number; id: number }) =>
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id);
const artworkById = statement(ownArtwork);
const artworkByIdForUpdate = statement((db, p: { entityId: number; id: number }) => lockForUpdate(db, ownArtwork(db, p)));

const deleteArtworkById = statement((db, p: { entityId: number; id: number }) =>
  db.deleteFrom('artworks').where('entity_id', '=', p.entityId).where('id', '=', p.id).returningAll());

/** Closes the gap a deletion leaves, so positions stay 1..count (a deletion is rare; a page read is not). */
const closePositionGap = statement((db, p: { entityId: number; position: number }) => db.updateTable('artworks')
  .set((eb) => ({ position: eb('position', '-', 1) }))
  .where('entity_id', '=', p.entityId).where('position', '>', p.position));

const lockCatalog = statement((db, p: { entityId: number }) =>
  db.selectFrom('entity_stats').select('entity_id').where('entity_id', '=', p.entityId).forUpdate());

/**
 * PostgreSQL: artwork writes of one entity take its stats row first, so positions are handed out one
 * writer at a time and every artwork write locks in the same order (stats row, then artwork rows).
 * SQLite runs one writer at a time anyway.
 */
function* lockCatalogOf(db: Db, entityId: number): Work<void> {
  if (isPostgres(db)) yield* first(lockCatalog, { entityId });
}

/** Creates the artwork, or merges into the one with the same fingerprint (decisions §5). */
export function postArtwork(db: Db, actor: Actor, input: ArtworkInput): Promise<PostedArtwork> {
  return transaction(db, () => postArtworkWork(db, actor, input));
}

/** The write of one POST, to run in a transaction of its own or in a batch's savepoint. */
export function* postArtworkWork(db: Db, actor: Actor, input: ArtworkInput): Work<PostedArtwork> {
  yield* lockCatalogOf(db, actor.entityId);
  const at = nowIso();
  const fingerprint = artworkFingerprint(input);
  const { columns: artist, created: newArtist } = yield* linkArtist(db, input.artist_name, at);
  const values = newArtwork(actor, input, artist, fingerprint, at);
  const inserted = yield* first(insertArtwork, values);
  if (inserted) {
    const artwork = { ...values, ...inserted };
    yield* commitArtworkWrite(actor, null, artwork, newArtist, at);
    return { artwork, created: true, changed: true };
  }
  const existing = yield* first(artworkByFingerprint, { entityId: actor.entityId, fingerprint });
  if (!existing) throw new Error('artwork vanished between insert and select');
  const merged = mergeNonNull(existing, { ...input, ...artist });
  const artwork = yield* save(merged, at);
  const changes = yield* commitArtworkWrite(actor, existing, artwork, newArtist, at);
  return { artwork, created: false, changed: isRealChange(changes) };
}

/** Applies a PUT: `null` clears; identity changes recompute the fingerprint, 409 if another artwork has it. */
export async function updateArtwork(db: Db, actor: Actor, id: number, patch: ArtworkPatch): Promise<ArtworkRow> {
  try {
    return await transaction(db, function* () {
      yield* lockCatalogOf(db, actor.entityId);
      const existing = yield* first(artworkByIdForUpdate, { entityId: actor.entityId, id });
      if (!existing) throw notFound('Artwork');
      const at = nowIso();
      const { columns: artist, created: newArtist } = yield* linkArtist(db, patch.artist_name, at);
      const merged = mergeDefined(existing, { ...patch, ...artist });
      merged.source_fingerprint = artworkFingerprint(merged);
      merged.fingerprint_version = SLUG_VERSION;
      const artwork = yield* save(merged, at);
      yield* commitArtworkWrite(actor, existing, artwork, newArtist, at);
      return artwork;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw await read(db, duplicateOf(actor.entityId, id, patch));
  }
}

export function deleteArtwork(db: Db, actor: Actor, id: number): Promise<void> {
  return transaction(db, function* () {
    yield* lockCatalogOf(db, actor.entityId);
    const deleted = yield* first(deleteArtworkById, { entityId: actor.entityId, id });
    if (!deleted) throw notFound('Artwork');
    yield* all(closePositionGap, { entityId: actor.entityId, position: deleted.position });
    yield* commitWrite(actor, [{
      entityType: 'artwork', recordId: id, action: 'delete',
      fieldChanges: fieldChanges(deleted, null, ARTWORK_CHANGE_FIELDS),
    }], { artworks: -1, availability: { before: deleted.availability, after: null }, synced: 'artworks' }, nowIso());
  });
}

export async function getArtwork(db: Db, entityId: number, id: number): Promise<ArtworkType> {
  const row = await read(db, first(artworkById, { entityId, id }));
  if (!row) throw notFound('Artwork');
  return toArtwork(row);
}

export interface ArtworkListQuery {
  page: number;
  limit: number;
  availability?: Availability | undefined;
}

interface PageParams { entityId: number; offset: number }
const MAX_POSITION = 2_147_483_647;

const LISTED = ['id', 'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'artist_name', 'image_url'] as const;

/**
 * The database renders a page as JSON text: one string instead of 500 values turned into JavaScript
 * strings and then serialized again. Kysely's helpers write each dialect's JSON aggregate; the cast
 * keeps PostgreSQL's json as text (pg would parse it).
 */
function pageJson(db: Db, page: ReturnType<typeof pageRows>) {
  const array = isPostgres(db) ? postgresJsonArrayFrom(page) : sqliteJsonArrayFrom(page);
  return db.selectNoFrom(sql<string>`cast(${array} as text)`.as('json'));
}

const pageRows = (db: Db) => db.selectFrom('artworks').select(LISTED);

const artworkPage = statementPerPageSize(ARTWORK_PAGE_MAX, (db, p: PageParams, limit) => pageJson(db, pageRows(db)
  .where('entity_id', '=', p.entityId).where('position', '>', p.offset)
  .orderBy('position').limit(sql.lit(limit))));

// Availability pages skip with OFFSET (positions are per catalog, not per availability), over the
// small (entity_id, availability, id) index entries; only the page's rows are read.
const artworkPageByAvailability = statementPerPageSize(ARTWORK_PAGE_MAX, (db, p: PageParams & { availability: Availability }, limit) => pageJson(db, pageRows(db)
  .where('id', 'in', db.selectFrom('artworks').select('id').where('entity_id', '=', p.entityId)
    .where('availability', '=', p.availability).orderBy('id').limit(sql.lit(limit)).offset(p.offset))
  .orderBy('id')));

/** A page of the catalog in id order as a JSON array of list items (ArtworkListItem), and the total. */
export function listArtworks(db: Db, entityId: number, { page, limit, availability }: ArtworkListQuery): Promise<{ json: string; total: number }> {
  return read(db, (function* () {
    const offset = pageOffset(page, limit);
    const rows = availability
      ? yield* all(artworkPageByAvailability(limit), { entityId, availability, offset })
      // Positions are 32-bit integers: any page past them is past the end (PostgreSQL refuses a larger bound).
      : yield* all(artworkPage(limit), { entityId, offset: Math.min(offset, MAX_POSITION) });
    const stats = yield* statsOf(entityId);
    return { json: rows[0]?.json ?? '[]', total: stats[availability ?? 'artworks'] };
  })());
}

export function toArtwork(row: ArtworkRow): ArtworkType {
  const { entity_id, artist_id, artist_linked_at, fingerprint_version, position, ...artwork } = row;
  return artwork;
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

/** The changelog entries (a new artist's first) and the counts of an artwork write. */
function* commitArtworkWrite(actor: Actor, before: ArtworkRow | null, after: ArtworkRow, newArtist: Change | null, at: string) {
  const changes = fieldChanges(before, after, ARTWORK_CHANGE_FIELDS);
  const entries: Change[] = [{ entityType: 'artwork', recordId: after.id, action: before ? 'update' : 'create', fieldChanges: changes }];
  if (newArtist) entries.unshift(newArtist);
  yield* commitWrite(actor, entries, {
    artworks: before ? 0 : 1,
    availability: { before: before?.availability ?? null, after: after.availability },
    synced: 'artworks',
    artistLinked: after.artist_linked_at === at,
  }, at);
  return changes;
}

const artworkIdByFingerprint = statement((db, p: { entityId: number; fingerprint: string }) =>
  db.selectFrom('artworks').select('id').where('entity_id', '=', p.entityId).where('source_fingerprint', '=', p.fingerprint));

/** The 409 for a PUT whose new fingerprint another artwork of the entity already has. */
function* duplicateOf(entityId: number, id: number, patch: ArtworkPatch): Work<ApiError> {
  const current = yield* first(artworkById, { entityId, id });
  const other = current && (yield* first(artworkIdByFingerprint, { entityId, fingerprint: artworkFingerprint(mergeDefined(current, patch)) }));
  return new ApiError('duplicate', 'Another artwork of this catalog already has this title, artist and year.', {
    ...(other ? { existing_id: other.id } : {}),
  });
}

/** The row a POST creates: every column spelled out, absent and null fields stored as NULL. */
function newArtwork(actor: Actor, input: ArtworkInput, artist: Partial<ArtworkRow>, fingerprint: string, at: string): NewArtwork {
  return {
    entity_id: actor.entityId,
    title: input.title,
    creation_year: input.creation_year ?? null,
    medium: input.medium ?? null,
    dimensions: input.dimensions ?? null,
    price: input.price ?? null,
    currency: input.currency ?? null,
    availability: input.availability ?? null,
    description: input.description ?? null,
    image_url: input.image_url ?? null,
    external_url: input.external_url ?? null,
    artist_name: input.artist_name ?? null,
    artist_id: artist.artist_id ?? null,
    artist_linked_at: artist.artist_linked_at ?? null,
    source_fingerprint: fingerprint,
    fingerprint_version: SLUG_VERSION,
    last_synced_at: at,
    created_at: at,
    updated_at: at,
  };
}
