import { slugify } from '../domain/slug.js';
import type { Trx } from '../db/types.js';
import { recordChange, type Actor } from './changelog.js';

/**
 * The platform-wide artist record for a name, created on first use. The unique slug decides who
 * creates it; the creation is recorded in the changelog of the entity whose write caused it.
 */
export async function resolveArtist(trx: Trx, actor: Actor, name: string, at: string): Promise<number> {
  const slug = slugify(name);
  const inserted = await trx.insertInto('artists')
    .values({ name: name.trim(), slug, created_at: at })
    .onConflict((oc) => oc.column('slug').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted) {
    await recordChange(trx, actor, {
      entityType: 'artist', recordId: inserted.id, action: 'create',
      fieldChanges: { name: { old: null, new: name.trim() }, slug: { old: null, new: slug } },
    }, at);
    return inserted.id;
  }
  const existing = await trx.selectFrom('artists').select('id').where('slug', '=', slug).executeTakeFirstOrThrow();
  return existing.id;
}
