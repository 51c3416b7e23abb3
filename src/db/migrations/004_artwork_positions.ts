import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { index } from './kit.js';

/**
 * Each artwork's place in its entity's catalog, 1..count in id order, kept dense by every write.
 * A page is then an index range (position > offset), whatever its depth: OFFSET would walk every
 * entry before it, and a catalog of 100,000 works would make its last pages the slowest.
 */
export const artworkPositions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable('artworks').addColumn('position', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await sql`
      update artworks set position = ranked.n
      from (select id, row_number() over (partition by entity_id order by id) as n from artworks) as ranked
      where artworks.id = ranked.id`.execute(db);
    await index(db, 'artworks_entity_position', 'artworks', ['entity_id', 'position']).execute();
    // Pages no longer range over (entity_id, id): one index less to write per artwork.
    await db.schema.dropIndex('artworks_entity_id').execute();
  },
  async down(db: Kysely<any>) {
    await index(db, 'artworks_entity_id', 'artworks', ['entity_id', 'id']).execute();
    await db.schema.dropIndex('artworks_entity_position').execute();
    await db.schema.alterTable('artworks').dropColumn('position').execute();
  },
};
