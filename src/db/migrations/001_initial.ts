import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { index, type Keys, keys } from './kit.js';

/** Creates the catalog tables. `dialect` only picks the auto-increment key type. */
export function initial(dialect: Dialect): Migration {
  const { serial: id, bigSerial: bigId, pk } = keys(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.createTable('entities')
        .addColumn('id', id, pk)
        .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('gallery', 'artist')`))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('description', 'text')
        .addColumn('external_url', 'text')
        .addColumn('ical_url', 'text')
        .addColumn('social_instagram', 'text')
        .addColumn('social_twitter', 'text')
        .addColumn('location_city', 'text')
        .addColumn('location_country', 'text')
        .addColumn('paused_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema.createTable('api_keys')
        .addColumn('id', id, pk)
        .addColumn('entity_id', 'integer', (c) => c.notNull().references('entities.id'))
        .addColumn('prefix', 'text', (c) => c.notNull().unique())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('tier', 'text', (c) => c.notNull().check(sql`tier in ('free', 'subscriber', 'partner')`))
        .addColumn('scopes', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_used_at', 'text')
        .execute();
      await index(db, 'api_keys_entity', 'api_keys', ['entity_id', 'id']).execute();

      await db.schema.createTable('artists')
        .addColumn('id', id, pk)
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await artworksV1(db.schema.createTable('artworks'), keys(dialect))
        .addUniqueConstraint('artworks_entity_fingerprint', ['entity_id', 'source_fingerprint'])
        .execute();
      await index(db, 'artworks_entity_id', 'artworks', ['entity_id', 'id']).execute();
      await index(db, 'artworks_entity_availability', 'artworks', ['entity_id', 'availability', 'id']).execute();
      await index(db, 'artworks_entity_artist', 'artworks', ['entity_id', 'artist_id']).execute();

      await db.schema.createTable('events')
        .addColumn('id', id, pk)
        .addColumn('entity_id', 'integer', (c) => c.notNull().references('entities.id'))
        .addColumn('title', 'text', (c) => c.notNull())
        .addColumn('slug', 'text', (c) => c.notNull())
        .addColumn('event_type', 'text', (c) => c.check(sql`event_type in ('exhibition', 'opening', 'talk', 'workshop', 'other')`))
        .addColumn('description', 'text')
        .addColumn('location_city', 'text')
        .addColumn('location_country', 'text')
        .addColumn('start_date', 'text')
        .addColumn('end_date', 'text')
        .addColumn('external_url', 'text')
        .addColumn('image_url', 'text')
        .addColumn('ical_url', 'text')
        .addColumn('last_synced_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('events_entity_slug', ['entity_id', 'slug'])
        .execute();
      await index(db, 'events_entity_id', 'events', ['entity_id', 'id']).execute();
      await index(db, 'events_entity_start', 'events', ['entity_id', 'start_date']).execute();

      await db.schema.createTable('changelog')
        .addColumn('id', bigId, pk)
        .addColumn('owner_id', 'integer', (c) => c.notNull().references('entities.id'))
        .addColumn('entity_type', 'text', (c) => c.notNull())
        .addColumn('record_id', 'integer', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('field_changes', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await index(db, 'changelog_owner_id', 'changelog', ['owner_id', 'id']).execute();
      await index(db, 'changelog_owner_created', 'changelog', ['owner_id', 'created_at']).execute();
      await index(db, 'changelog_owner_kind', 'changelog', ['owner_id', 'entity_type', 'id']).execute();
    },
    async down(db: Kysely<any>) {
      for (const table of ['changelog', 'events', 'artworks', 'artists', 'api_keys', 'entities']) {
        await db.schema.dropTable(table).execute();
      }
    },
  };
}

/**
 * The artworks table as this migration made it, but for its constraints (migration 005 builds it
 * again on SQLite with one more column).
 */
export function artworksV1(table: CreateTableBuilder<string, never>, { serial, pk }: Keys): CreateTableBuilder<string, any> {
  return table
    .addColumn('id', serial, pk)
    .addColumn('entity_id', 'integer', (c) => c.notNull().references('entities.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('creation_year', 'integer')
    .addColumn('medium', 'text')
    .addColumn('dimensions', 'text')
    .addColumn('price', 'bigint')
    .addColumn('currency', 'text')
    .addColumn('availability', 'text', (c) => c.check(sql`availability in ('available', 'reserved', 'sold')`))
    .addColumn('description', 'text')
    .addColumn('image_url', 'text')
    .addColumn('external_url', 'text')
    .addColumn('artist_name', 'text')
    .addColumn('artist_id', 'integer', (c) => c.references('artists.id'))
    .addColumn('artist_linked_at', 'text')
    .addColumn('source_fingerprint', 'text', (c) => c.notNull())
    .addColumn('fingerprint_version', 'integer', (c) => c.notNull())
    .addColumn('last_synced_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull());
}
