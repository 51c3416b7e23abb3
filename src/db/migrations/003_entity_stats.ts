import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import { index } from './kit.js';

/**
 * Per-entity counts and last write times, kept in the same transaction as every write, so list totals
 * and the sync status cost one row read instead of a scan that grows with the catalog.
 */
export const entityStats: Migration = {
  async up(db: Kysely<any>) {
    await statsCounts(db.schema.createTable('entity_stats')
      .addColumn('entity_id', 'integer', (c) => c.primaryKey().references('entities.id')))
      .execute();
    // Entities that exist already get their counts from their data.
    await sql`
      insert into entity_stats (entity_id, artworks, available, reserved, sold, events, changelog,
                                artworks_synced_at, events_synced_at, artists_synced_at)
      select e.id,
        (select count(*) from artworks a where a.entity_id = e.id),
        (select count(*) from artworks a where a.entity_id = e.id and a.availability = 'available'),
        (select count(*) from artworks a where a.entity_id = e.id and a.availability = 'reserved'),
        (select count(*) from artworks a where a.entity_id = e.id and a.availability = 'sold'),
        (select count(*) from events v where v.entity_id = e.id),
        (select count(*) from changelog c where c.owner_id = e.id),
        (select max(created_at) from changelog c where c.owner_id = e.id and c.entity_type = 'artwork'),
        (select max(created_at) from changelog c where c.owner_id = e.id and c.entity_type = 'event'),
        (select max(artist_linked_at) from artworks a where a.entity_id = e.id)
      from entities e`.execute(db);
    // The sync status no longer scans the changelog by kind.
    await db.schema.dropIndex('changelog_owner_kind').execute();
  },
  async down(db: Kysely<any>) {
    await index(db, 'changelog_owner_kind', 'changelog', ['owner_id', 'entity_type', 'id']).execute();
    await db.schema.dropTable('entity_stats').execute();
  },
};

/** The counts and sync times of an entity, as this migration made them (migration 006 builds the table again with slots). */
export function statsCounts(table: CreateTableBuilder<string, any>): CreateTableBuilder<string, any> {
  return table
    .addColumn('artworks', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('available', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('reserved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sold', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('events', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('changelog', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('artworks_synced_at', 'text')
    .addColumn('events_synced_at', 'text')
    .addColumn('artists_synced_at', 'text');
}
