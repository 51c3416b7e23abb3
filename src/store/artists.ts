import { slugify } from '../domain/slug.js';
import { onRollback } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import { first, type Work } from '../db/work.js';
import type { Db } from '../db/types.js';
import type { Change } from './changelog.js';

// Artist records are never changed or deleted, so a slug's committed id stays true for good. One map
// per database (its Kysely adapter is shared by the instance and its transactions): two apps in one
// process may use two databases. A row found inside a transaction may have been inserted by an earlier
// work of the same transaction (a batch, a group commit); if anything rolls back, the map starts over.
const knownByDatabase = new WeakMap<object, Map<string, number>>();
const KNOWN_ARTISTS_MAX = 50_000;
onRollback((db) => knownByDatabase.get(db.getExecutor().adapter)?.clear());

function knownArtistsOf(db: Db): Map<string, number> {
  const database = db.getExecutor().adapter;
  let known = knownByDatabase.get(database);
  if (!known) knownByDatabase.set(database, (known = new Map<string, number>()));
  return known;
}

const insertArtist = statement((db, p: Params<{ name: string; slug: string; at: string }>) => db.insertInto('artists')
  .values({ name: p.name, slug: p.slug, created_at: p.at })
  .onConflict((oc) => oc.column('slug').doNothing())
  .returning('id'));

const artistBySlug = statement((db, p: Params<{ slug: string }>) => db.selectFrom('artists').select('id').where('slug', '=', p.slug));

/**
 * The platform-wide artist record for a name, created on first use. The unique slug decides who
 * creates it; a creation comes back as a change for the changelog of the entity whose write caused it.
 */
export function* resolveArtist(db: Db, name: string, at: string): Work<{ id: number; created: Change | null }> {
  const slug = slugify(name);
  const knownArtists = knownArtistsOf(db);
  const known = knownArtists.get(slug);
  if (known !== undefined) return { id: known, created: null };
  const inserted = yield* first(insertArtist, { name: name.trim(), slug, at });
  if (inserted) {
    return {
      id: inserted.id,
      created: {
        entityType: 'artist', recordId: inserted.id, action: 'create',
        fieldChanges: { name: { old: null, new: name.trim() }, slug: { old: null, new: slug } },
      },
    };
  }
  const existing = yield* first(artistBySlug, { slug });
  if (!existing) throw new Error(`artist ${slug} vanished`);
  if (knownArtists.size >= KNOWN_ARTISTS_MAX) knownArtists.clear();
  knownArtists.set(slug, existing.id);
  return { id: existing.id, created: null };
}
