import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { artworkFingerprint } from '../../domain/fingerprint.js';
import { eventSlug } from '../../domain/slug.js';
import type { Dialect } from '../connect.js';
import { artworksV1 } from './001_initial.js';
import { allOrNothing, index, keys } from './kit.js';

const CHUNK = 1000;

/**
 * - `external_id` on artworks (docs/api.md, Artworks): unique per entity where set; the fingerprint stays unique
 *   only among an entity's artworks without one, so editions and "Untitled" works can coexist.
 * - Positions go (migration 004): a deletion renumbered every later artwork of the catalog, and every
 *   artwork write of an entity had to queue for its place. Pages walk the (entity_id, id) index again.
 * - Slug version 2 (docs/api.md, Slugs and fingerprints): fingerprints and event slugs of version 1 are recomputed, keeping
 *   ids; records that version 1 had merged stay one record.
 */
export function externalIdSlugV2(dialect: Dialect): Migration {
  // The table rebuild must be all or nothing.
  return { up: allOrNothing(dialect, (db) => upgrade(db, dialect)) };
}

async function upgrade(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'sqlite') await rebuildSqliteArtworks(db);
  else {
    await db.schema.alterTable('artworks').addColumn('external_id', 'text').execute();
    await db.schema.alterTable('artworks').dropConstraint('artworks_entity_fingerprint').execute();
    await db.schema.dropIndex('artworks_entity_position').execute();
    await db.schema.alterTable('artworks').dropColumn('position').execute();
    await index(db, 'artworks_entity_id', 'artworks', ['entity_id', 'id']).execute();
  }
  await index(db, 'artworks_entity_fingerprint', 'artworks', ['entity_id', 'source_fingerprint']).execute();
  await index(db, 'artworks_entity_fingerprint_unnumbered', 'artworks', ['entity_id', 'source_fingerprint']).unique().where(sql.ref('external_id'), 'is', null).execute();
  await index(db, 'artworks_entity_external_id', 'artworks', ['entity_id', 'external_id']).unique().where(sql.ref('external_id'), 'is not', null).execute();
  await db.schema.alterTable('events').addColumn('slug_version', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await recomputeFingerprints(db);
  await recomputeEventSlugs(db);
}

/** SQLite cannot drop a table constraint or an indexed column in place: the documented rebuild. */
async function rebuildSqliteArtworks(db: Kysely<any>): Promise<void> {
  const sequence = await sql<{ seq: number }>`select seq from sqlite_sequence where name = 'artworks'`.execute(db);
  await artworksV1(db.schema.createTable('artworks_v5'), keys('sqlite'))
    .addColumn('external_id', 'text')
    .execute();
  const kept = sql.join([
    'id', 'entity_id', 'title', 'creation_year', 'medium', 'dimensions', 'price', 'currency', 'availability', 'description',
    'image_url', 'external_url', 'artist_name', 'artist_id', 'artist_linked_at', 'source_fingerprint', 'fingerprint_version',
    'last_synced_at', 'created_at', 'updated_at',
  ].map((column) => sql.ref(column)));
  await sql`insert into artworks_v5 (${kept}) select ${kept} from artworks`.execute(db);
  await db.schema.dropTable('artworks').execute();
  await db.schema.alterTable('artworks_v5').renameTo('artworks').execute();
  // AUTOINCREMENT never hands out an id again, deleted ones included: keep the old high-water mark.
  const seq = sequence.rows[0]?.seq;
  if (seq !== undefined) await sql`update sqlite_sequence set seq = max(seq, ${seq}) where name = 'artworks'`.execute(db);
  await index(db, 'artworks_entity_id', 'artworks', ['entity_id', 'id']).execute();
  await index(db, 'artworks_entity_availability', 'artworks', ['entity_id', 'availability', 'id']).execute();
  await index(db, 'artworks_entity_artist', 'artworks', ['entity_id', 'artist_id']).execute();
}

async function recomputeFingerprints(db: Kysely<any>): Promise<void> {
  for (let after = 0; ;) {
    const rows: Array<{ id: number; title: string; artist_name: string | null; creation_year: number | null; source_fingerprint: string }> =
      await db.selectFrom('artworks').select(['id', 'title', 'artist_name', 'creation_year', 'source_fingerprint'])
        .where('fingerprint_version', '=', 1).where('id', '>', after).orderBy('id').limit(CHUNK).execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const fingerprint = artworkFingerprint(row);
      // Only titles or artist names without letters or digits change; version 2 refines version 1,
      // so no two records an entity kept apart can meet.
      if (fingerprint !== row.source_fingerprint) {
        await db.updateTable('artworks').set({ source_fingerprint: fingerprint }).where('id', '=', row.id).execute();
      }
    }
    after = rows.at(-1)!.id;
  }
  await db.updateTable('artworks').set({ fingerprint_version: 2 }).where('fingerprint_version', '=', 1).execute();
}

async function recomputeEventSlugs(db: Kysely<any>): Promise<void> {
  for (let after = 0; ;) {
    const rows: Array<{ id: number; entity_id: number; title: string; slug: string; entity_slug: string }> =
      await db.selectFrom('events').innerJoin('entities', 'entities.id', 'events.entity_id')
        .select(['events.id', 'events.entity_id', 'events.title', 'events.slug', 'entities.slug as entity_slug'])
        .where('events.slug_version', '=', 1).where('events.id', '>', after).orderBy('events.id').limit(CHUNK).execute();
    if (rows.length === 0) break;
    for (const row of rows) {
      const slug = eventSlug(row.entity_slug, row.title);
      if (slug === row.slug) continue;
      // Version 1 gave a symbol-only title the entity's own slug; its new one is unique but for a
      // title that spells out that very hash — then the event keeps its old slug.
      const taken = await db.selectFrom('events').select('id').where('entity_id', '=', row.entity_id).where('slug', '=', slug).executeTakeFirst();
      if (!taken) await db.updateTable('events').set({ slug }).where('id', '=', row.id).execute();
    }
    after = rows.at(-1)!.id;
  }
  await db.updateTable('events').set({ slug_version: 2 }).where('slug_version', '=', 1).execute();
}
