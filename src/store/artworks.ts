import { ARTWORK_CHANGE_FIELDS, type ArtworkInput, type ArtworkPatch } from '../domain/artwork.js';
import { fieldChanges, isRealChange, mergeDefined, mergeNonNull, withoutNulls } from '../domain/diff.js';
import { ApiError, notFound } from '../domain/errors.js';
import { artworkFingerprint } from '../domain/fingerprint.js';
import { SLUG_VERSION } from '../domain/slug.js';
import type { ArtworkListItemType, ArtworkType, Availability } from '../schemas/artworks.js';
import { isUniqueViolation } from '../db/errors.js';
import type { ArtworkRow, Db, Trx } from '../db/types.js';
import { resolveArtist } from './artists.js';
import { commitWrite, type Actor, type Change } from './changelog.js';
import { readStats } from './stats.js';
import { lockForUpdate, nowIso, pageOffset } from './sql.js';

export interface PostedArtwork {
  artwork: ArtworkRow;
  created: boolean;
  /** false when a re-post changed nothing but last_synced_at. */
  changed: boolean;
}

/** Creates the artwork, or merges into the one with the same fingerprint (decisions §5). */
export function postArtwork(db: Db, actor: Actor, input: ArtworkInput): Promise<PostedArtwork> {
  return db.transaction().execute(async (trx) => {
    const at = nowIso();
    const fingerprint = artworkFingerprint(input);
    const { columns: artist, created: newArtist } = await linkArtist(trx, input.artist_name, at);
    const inserted = await trx.insertInto('artworks')
      .values({
        ...emptyArtwork(), ...withoutNulls(input), ...artist, title: input.title,
        entity_id: actor.entityId,
        source_fingerprint: fingerprint,
        fingerprint_version: SLUG_VERSION,
        last_synced_at: at, created_at: at, updated_at: at,
      })
      .onConflict((oc) => oc.columns(['entity_id', 'source_fingerprint']).doNothing())
      .returningAll()
      .executeTakeFirst();
    if (inserted) {
      await commitArtworkWrite(trx, actor, null, inserted, newArtist, at);
      return { artwork: inserted, created: true, changed: true };
    }
    const existing = await lockForUpdate(trx,
      trx.selectFrom('artworks').selectAll()
        .where('entity_id', '=', actor.entityId).where('source_fingerprint', '=', fingerprint),
    ).executeTakeFirstOrThrow();
    const merged = mergeNonNull(existing, { ...input, ...artist });
    const artwork = await saveArtwork(trx, merged, at);
    const changes = await commitArtworkWrite(trx, actor, existing, artwork, newArtist, at);
    return { artwork, created: false, changed: isRealChange(changes) };
  });
}

/** Applies a PUT: `null` clears; identity changes recompute the fingerprint, 409 if another artwork has it. */
export async function updateArtwork(db: Db, actor: Actor, id: number, patch: ArtworkPatch): Promise<ArtworkRow> {
  try {
    return await db.transaction().execute(async (trx) => {
      const existing = await lockForUpdate(trx, ownArtwork(trx, actor.entityId, id)).executeTakeFirst();
      if (!existing) throw notFound('Artwork');
      const at = nowIso();
      const { columns: artist, created: newArtist } = await linkArtist(trx, patch.artist_name, at);
      const merged = mergeDefined(existing, { ...patch, ...artist });
      merged.source_fingerprint = artworkFingerprint(merged);
      merged.fingerprint_version = SLUG_VERSION;
      const artwork = await saveArtwork(trx, merged, at);
      await commitArtworkWrite(trx, actor, existing, artwork, newArtist, at);
      return artwork;
    });
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw await duplicateOf(db, actor.entityId, id, patch);
  }
}

export async function deleteArtwork(db: Db, actor: Actor, id: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const deleted = await trx.deleteFrom('artworks')
      .where('entity_id', '=', actor.entityId).where('id', '=', id)
      .returningAll().executeTakeFirst();
    if (!deleted) throw notFound('Artwork');
    await commitWrite(trx, actor, [{
      entityType: 'artwork', recordId: id, action: 'delete',
      fieldChanges: fieldChanges(deleted, null, ARTWORK_CHANGE_FIELDS),
    }], { artworks: -1, availability: { before: deleted.availability, after: null }, synced: 'artworks' }, nowIso());
  });
}

export async function getArtwork(db: Db, entityId: number, id: number): Promise<ArtworkType> {
  const row = await ownArtwork(db, entityId, id).executeTakeFirst();
  if (!row) throw notFound('Artwork');
  return toArtwork(row);
}

export interface ArtworkListQuery {
  page: number;
  limit: number;
  availability?: Availability | undefined;
}

export async function listArtworks(db: Db, entityId: number, { page, limit, availability }: ArtworkListQuery) {
  let ids = db.selectFrom('artworks').select('id').where('entity_id', '=', entityId);
  if (availability) ids = ids.where('availability', '=', availability);
  // Deferred join: OFFSET walks the small (entity_id, …, id) index entries, and only the page's rows are read.
  const pageIds = ids.orderBy('id').limit(limit).offset(pageOffset(page, limit));
  const [rows, stats] = await Promise.all([
    db.selectFrom('artworks')
      .select(['id', 'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'artist_name', 'image_url'])
      .where('id', 'in', pageIds).orderBy('id').execute(),
    readStats(db, entityId),
  ]);
  return { artworks: rows as ArtworkListItemType[], total: stats[availability ?? 'artworks'] };
}

export function toArtwork(row: ArtworkRow): ArtworkType {
  const { entity_id, artist_id, artist_linked_at, fingerprint_version, ...artwork } = row;
  return artwork;
}

const ownArtwork = (db: Db | Trx, entityId: number, id: number) =>
  db.selectFrom('artworks').selectAll().where('entity_id', '=', entityId).where('id', '=', id);

/** The artist columns for an `artist_name` as sent (linked, created, cleared by null, or untouched). */
async function linkArtist(trx: Trx, name: string | null | undefined, at: string): Promise<{ columns: Partial<ArtworkRow>; created: Change | null }> {
  if (name === undefined) return { columns: {}, created: null };
  if (name === null) return { columns: { artist_id: null, artist_linked_at: null }, created: null };
  const artist = await resolveArtist(trx, name, at);
  return { columns: { artist_id: artist.id, artist_linked_at: at }, created: artist.created };
}

async function saveArtwork(trx: Trx, artwork: ArtworkRow, at: string): Promise<ArtworkRow> {
  const { id, entity_id, created_at, ...columns } = artwork;
  return trx.updateTable('artworks')
    .set({ ...columns, last_synced_at: at, updated_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The changelog entries (a new artist's first) and the counts of an artwork write. */
async function commitArtworkWrite(trx: Trx, actor: Actor, before: ArtworkRow | null, after: ArtworkRow, newArtist: Change | null, at: string) {
  const changes = fieldChanges(before, after, ARTWORK_CHANGE_FIELDS);
  const entries: Change[] = [{ entityType: 'artwork', recordId: after.id, action: before ? 'update' : 'create', fieldChanges: changes }];
  if (newArtist) entries.unshift(newArtist);
  await commitWrite(trx, actor, entries, {
    artworks: before ? 0 : 1,
    availability: { before: before?.availability ?? null, after: after.availability },
    synced: 'artworks',
    artistLinked: after.artist_linked_at === at,
  }, at);
  return changes;
}

/** The 409 for a PUT whose new fingerprint another artwork of the entity already has. */
async function duplicateOf(db: Db, entityId: number, id: number, patch: ArtworkPatch): Promise<ApiError> {
  const current = await ownArtwork(db, entityId, id).executeTakeFirstOrThrow();
  const fingerprint = artworkFingerprint(mergeDefined(current, patch));
  const other = await db.selectFrom('artworks').select('id')
    .where('entity_id', '=', entityId).where('source_fingerprint', '=', fingerprint).executeTakeFirst();
  return new ApiError('duplicate', 'Another artwork of this catalog already has this title, artist and year.', {
    ...(other ? { existing_id: other.id } : {}),
  });
}

const emptyArtwork = () => ({
  creation_year: null, medium: null, dimensions: null, price: null, currency: null, availability: null,
  description: null, image_url: null, external_url: null, artist_name: null,
});
