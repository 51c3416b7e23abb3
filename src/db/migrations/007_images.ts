import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index } from './kit.js';

/**
 * Images held by the platform (docs/api.md, Images).
 *
 * - `images`: one row per image URL in use, which is also its job in the durable queue. Records point
 *   at it by their `image_url`, so a URL used by many records is fetched once and its state is every
 *   such record's. `due_at` says when the job may run (null: nothing to do); a process claims it by
 *   setting `claim` and `locked_until` (a lease, renewed while it works), and a claim whose lease has
 *   passed (its process died) is taken over. `attempts` counts the failures since the last success,
 *   the URL change or `images retry`: the retry schedule's position.
 * - `image_originals`: what was made of an original, by the SHA-256 of its bytes (identical bytes are
 *   processed once): its size and the derivatives stored.
 * - Records are found by `image_url` (which entities' versions change with an image, whether a URL is
 *   still used when a record lets it go).
 *
 * Existing records with an image_url get their job now, due at once.
 */
export function images(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, createImages),
    async down(db: Kysely<any>) {
      for (const table of ['artworks', 'events']) await db.schema.dropIndex(`${table}_image_url`).execute();
      await db.schema.dropTable('image_originals').execute();
      await db.schema.dropTable('images').execute();
    },
  };
}

async function createImages(db: Kysely<any>): Promise<void> {
  await db.schema.createTable('images')
    .addColumn('url', 'text', (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('checked_at', 'text')
    .addColumn('hash', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', 'text')
    .addColumn('claim', 'text')
    .addColumn('locked_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index(db, 'images_due', 'images', ['due_at']).where(sql.ref('due_at'), 'is not', null).execute();
  await index(db, 'images_hash', 'images', ['hash']).where(sql.ref('hash'), 'is not', null).execute();
  await db.schema.createTable('image_originals')
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('width', 'integer', (c) => c.notNull())
    .addColumn('height', 'integer', (c) => c.notNull())
    /** JSON: [{"width": 480, "height": 320, "format": "avif", "name": "…"}, …] */
    .addColumn('derivatives', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  for (const table of ['artworks', 'events']) {
    await index(db, `${table}_image_url`, table, ['image_url', 'entity_id'])
      .where(sql.ref('image_url'), 'is not', null).execute();
  }
  const now = new Date().toISOString();
  await sql`insert into images (url, status, attempts, due_at, created_at)
    select distinct image_url, 'pending', 0, ${now}, ${now} from (
      select image_url from artworks where image_url is not null
      union select image_url from events where image_url is not null) as used`.execute(db);
}
