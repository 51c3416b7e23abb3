import { slugify } from '../domain/slug.js';
import { onRollback } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import { sql } from 'kysely';
import { all, first, type Work } from '../db/work.js';
import { rawQuery } from './sql.js';
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

/** The id of an artist this process has seen committed, without a statement; undefined otherwise. */
export const knownArtist = (db: Db, name: string): number | undefined => knownArtistsOf(db).get(slugify(name));

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
  remember(knownArtists, slug, existing.id);
  return { id: existing.id, created: null };
}

/** An artist found committed: the next write that names it needs no statement to link it. */
function remember(knownArtists: Map<string, number>, slug: string, id: number): void {
  if (knownArtists.size >= KNOWN_ARTISTS_MAX) knownArtists.clear();
  knownArtists.set(slug, id);
}

interface ArtistsParams { names: string[]; slugs: string[]; at: string }

/**
 * PostgreSQL: the artists of a batch in one statement, inserted in slug order (two batches naming the
 * same new artists wait for each other in one order, never in a cycle). Rows a concurrent transaction
 * committed during the insert are not in this statement's snapshot: the caller looks those up alone.
 */
const insertArtists = statement((db, p: Params<ArtistsParams>) => rawQuery(db, sql<{ id: number; slug: string; created: boolean }>`
  with wanted as (select * from unnest(cast(${p.names} as text[]), cast(${p.slugs} as text[])) as w(name, slug)),
  inserted as (
    insert into artists (name, slug, created_at) select name, slug, ${p.at} from wanted order by slug
    on conflict (slug) do nothing returning id, slug)
  select id, slug, true as created from inserted
  union all
  select a.id, a.slug, false from artists a join wanted w on w.slug = a.slug`));

/**
 * `resolveArtist` for many names at once (PostgreSQL): by slug, the artist record and, when this
 * transaction created it, the change to record.
 */
export function* resolveArtists(db: Db, names: readonly string[], at: string): Work<Map<string, { id: number; created: Change | null }>> {
  const resolved = new Map<string, { id: number; created: Change | null }>();
  const wanted = new Map<string, string>();
  const knownArtists = knownArtistsOf(db);
  for (const name of names) {
    const slug = slugify(name);
    const known = knownArtists.get(slug);
    if (known !== undefined) resolved.set(slug, { id: known, created: null });
    else if (!wanted.has(slug)) wanted.set(slug, name.trim());
  }
  if (wanted.size === 0) return resolved;
  const rows = yield* all(insertArtists, { names: [...wanted.values()], slugs: [...wanted.keys()], at });
  for (const row of rows) {
    const name = wanted.get(row.slug)!;
    if (!row.created) remember(knownArtists, row.slug, Number(row.id));
    resolved.set(row.slug, {
      id: Number(row.id),
      created: row.created
        ? { entityType: 'artist', recordId: Number(row.id), action: 'create', fieldChanges: { name: { old: null, new: name }, slug: { old: null, new: row.slug } } }
        : null,
    });
  }
  for (const [slug, name] of wanted) if (!resolved.has(slug)) resolved.set(slug, yield* resolveArtist(db, name, at));
  return resolved;
}
