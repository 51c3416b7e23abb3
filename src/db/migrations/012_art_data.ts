import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index } from './kit.js';

/**
 * The art data galleries keep (docs/api.md, Artworks: price display, measured dimensions, editions,
 * more views).
 *
 * - `artworks` gains `price_display` (`shown` for every existing work), the measured `height`,
 *   `width`, `depth` and their `dimension_unit`, the edition numbers, `image_alt`, and
 *   `additional_images`: the views as canonical JSON text, compared and recorded like any other field.
 * - `artwork_views`: one row per additional view's URL, kept in the write's transaction, so the image
 *   pipeline finds the records that use a URL by an index (as `image_url`'s), never by reading JSON.
 */
export function artData(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, (db) => addArtData(db, dialect)),
    async down(db: Kysely<any>) {
      await db.schema.dropTable('artwork_views').ifExists().execute();
      for (const column of COLUMNS) await db.schema.alterTable('artworks').dropColumn(column).execute();
    },
  };
}

const COLUMNS = [
  'price_display', 'height', 'width', 'depth', 'dimension_unit', 'edition_size', 'edition_number', 'artist_proofs',
  'image_alt', 'additional_images',
] as const;

async function addArtData(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const real = dialect === 'postgres' ? 'double precision' : 'real';
  const artworks = () => db.schema.alterTable('artworks');
  await artworks().addColumn('price_display', 'text', (c) => c.notNull().defaultTo('shown')).execute();
  for (const column of ['height', 'width', 'depth']) await artworks().addColumn(column, sql.raw(real)).execute();
  await artworks().addColumn('dimension_unit', 'text').execute();
  for (const column of ['edition_size', 'edition_number', 'artist_proofs']) await artworks().addColumn(column, 'integer').execute();
  await artworks().addColumn('image_alt', 'text').execute();
  await artworks().addColumn('additional_images', 'text').execute();
  await db.schema.createTable('artwork_views')
    .addColumn('artwork_id', 'integer', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('artwork_views_pk', ['artwork_id', 'position'])
    .execute();
  await index(db, 'artwork_views_url', 'artwork_views', ['url', 'artwork_id']).execute();
}
