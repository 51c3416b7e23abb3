import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * A gallery's own words (docs/push.md, How columns are read; docs/api.md, Feeds):
 * - `entities.default_currency`: the currency of prices that name none (ISO 4217, null by default).
 * - `feeds.mapping_frozen`: 1 when the feed's `mapping` is its whole reading. A feed made from now on
 *   stores its suggested columns with its mapping at its first read of the file (0 until then), so a
 *   later change of the words never changes how the feed reads. Every feed made before this migration
 *   is frozen as it reads today: its mapping, and columns named exactly as fields, nothing suggested.
 */
export const galleryWords: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('entities').addColumn('default_currency', 'text').execute();
    await db.schema.alterTable('feeds').addColumn('mapping_frozen', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.updateTable('feeds').set({ mapping_frozen: 1 }).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.alterTable('feeds').dropColumn('mapping_frozen').execute();
    await db.schema.alterTable('entities').dropColumn('default_currency').execute();
  },
};
