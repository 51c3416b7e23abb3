import { fieldChanges } from '../domain/diff.js';
import { notFound } from '../domain/errors.js';
import { PROFILE_WRITABLE_FIELDS, type ProfilePatch } from '../domain/profile.js';
import { slugify } from '../domain/slug.js';
import type { EntityKind, ProfileType } from '../schemas/profile.js';
import { columns, first, statement, transaction } from '../db/statements.js';
import type { Db, EntityRow } from '../db/types.js';
import { commitWrite, type Actor } from './changelog.js';
import { createStats } from './stats.js';
import { invalidations } from './notifications.js';
import { nowIso } from './sql.js';

export interface NewEntity {
  type: EntityKind;
  name: string;
  city?: string | undefined;
  country?: string | undefined;
}

/**
 * Creates a gallery or artist. Profile slugs are unique platform-wide: the unique index decides,
 * and a taken slug moves on to `-2`, `-3`, … (decisions §6a).
 */
export async function createEntity(db: Db, entity: NewEntity): Promise<EntityRow> {
  const base = slugify(entity.name);
  const at = nowIso();
  return db.transaction().execute(async (trx) => {
    for (let n = 1; ; n++) {
      const row = await trx.insertInto('entities')
        .values({
          type: entity.type, name: entity.name, slug: n === 1 ? base : `${base}-${n}`,
          location_city: entity.city ?? null, location_country: entity.country ?? null,
          description: null, external_url: null, ical_url: null, social_instagram: null, social_twitter: null,
          paused_at: null, created_at: at, updated_at: at,
        })
        .onConflict((oc) => oc.column('slug').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (row) {
        await createStats(trx, row.id);
        return row;
      }
    }
  });
}

export const listEntities = (db: Db): Promise<EntityRow[]> => db.selectFrom('entities').selectAll().orderBy('id').execute();

export const findEntity = (db: Db, id: number): Promise<EntityRow | undefined> =>
  db.selectFrom('entities').selectAll().where('id', '=', id).executeTakeFirst();

export const findEntityBySlug = (db: Db, slug: string): Promise<EntityRow | undefined> =>
  db.selectFrom('entities').selectAll().where('slug', '=', slug).executeTakeFirst();

export interface EntityChanges {
  name?: string | undefined;
  city?: string | undefined;
  country?: string | undefined;
}

/** Operator changes to fields the API cannot write. The slug stays, so public links keep working. */
export async function updateEntity(db: Db, id: number, changes: EntityChanges): Promise<EntityRow> {
  const row = await db.updateTable('entities')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.city !== undefined ? { location_city: changes.city || null } : {}),
      ...(changes.country !== undefined ? { location_country: changes.country || null } : {}),
      updated_at: nowIso(),
    })
    .where('id', '=', id).returningAll().executeTakeFirst();
  if (!row) throw notFound('Entity');
  invalidations.emit('entity-changed', id);
  return row;
}

export async function setPaused(db: Db, id: number, paused: boolean): Promise<EntityRow> {
  const row = await db.updateTable('entities')
    .set({ paused_at: paused ? nowIso() : null, updated_at: nowIso() })
    .where('id', '=', id).returningAll().executeTakeFirst();
  if (!row) throw notFound('Entity');
  invalidations.emit('entity-changed', id);
  return row;
}

export async function getProfile(db: Db, entityId: number): Promise<ProfileType> {
  const row = await findEntity(db, entityId);
  if (!row) throw notFound('Profile');
  return toProfile(row);
}

const profileRow = statement((db, p: { id: number }) => db.selectFrom('entities').selectAll().where('id', '=', p.id));

const saveProfile = statement((db, p: EntityRow) => db.updateTable('entities')
  .set(columns(p, [...PROFILE_WRITABLE_FIELDS, 'updated_at'])).where('id', '=', p.id).returningAll());

/** Applies a profile PUT and records it, with the fields that changed, in the same transaction. */
export async function updateProfile(db: Db, actor: Actor, patch: ProfilePatch): Promise<ProfileType> {
  const profile = await transaction(db, function* () {
    const before = yield* first(profileRow, { id: actor.entityId });
    if (!before) throw notFound('Profile');
    const at = nowIso();
    const after = yield* first(saveProfile, { ...before, ...patch, updated_at: at });
    if (!after) throw notFound('Profile');
    yield* commitWrite(actor, [{
      entityType: 'profile', recordId: actor.entityId, action: 'update',
      fieldChanges: fieldChanges(before, after, PROFILE_WRITABLE_FIELDS),
    }], {}, at);
    return toProfile(after);
  });
  invalidations.emit('entity-changed', actor.entityId);
  return profile;
}

export function toProfile(row: EntityRow): ProfileType {
  return {
    id: row.id, type: row.type, name: row.name, slug: row.slug,
    description: row.description, external_url: row.external_url, ical_url: row.ical_url,
    social_instagram: row.social_instagram, social_photo: row.social_instagram,
    social_twitter: row.social_twitter, social_micro: row.social_twitter,
    location_city: row.location_city, location_country: row.location_country,
  };
}
