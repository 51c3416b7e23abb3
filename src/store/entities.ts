import { nowIso } from '../clock.js';
import { fieldChanges } from '../domain/diff.js';
import { notFound } from '../domain/errors.js';
import { PROFILE_WRITABLE_FIELDS, type ProfilePatch } from '../domain/profile.js';
import { slugify } from '../domain/slug.js';
import type { Tier } from '../domain/keys.js';
import type { EntityKind, ProfileType } from '../schemas/profile.js';
import { columns } from '../db/columns.js';
import { read, transaction } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Db, EntityRow } from '../db/types.js';
import { all, first } from '../db/work.js';
import { recordWrite, type Actor } from './changelog.js';
import { invalidations } from './notifications.js';
import { createStats } from './stats.js';

export interface NewEntity {
  type: EntityKind;
  name: string;
  city?: string | undefined;
  country?: string | undefined;
}

const insertEntity = statement((db, p: Params<{ type: EntityKind; name: string; slug: string; city: string | null; country: string | null; at: string }>) =>
  db.insertInto('entities').values({
    type: p.type, name: p.name, slug: p.slug, location_city: p.city, location_country: p.country,
    description: null, external_url: null, ical_url: null, social_instagram: null, social_twitter: null,
    paused_at: null, created_at: p.at, updated_at: p.at,
  }).onConflict((oc) => oc.column('slug').doNothing()).returningAll());

/**
 * Creates a gallery or artist. Profile slugs are unique platform-wide: the unique index decides,
 * and a taken slug moves on to `-2`, `-3`, … (docs/api.md, Slugs and fingerprints).
 */
export function createEntity(db: Db, entity: NewEntity): Promise<EntityRow> {
  const base = slugify(entity.name);
  const at = nowIso();
  return transaction(db, function* () {
    for (let n = 1; ; n++) {
      const row = yield* first(insertEntity, {
        type: entity.type, name: entity.name, slug: n === 1 ? base : `${base}-${n}`,
        city: entity.city ?? null, country: entity.country ?? null, at,
      });
      if (row) {
        yield* createStats(row.id);
        return row;
      }
    }
  });
}

// Every entity of the platform: the operator's list, not a request anyone can send.
const allEntities = statement((db) => db.selectFrom('entities').selectAll().orderBy('id'), { cost: 'scan' });
const entityById = statement((db, p: Params<{ id: number }>) => db.selectFrom('entities').selectAll().where('id', '=', p.id));

export const listEntities = (db: Db): Promise<EntityRow[]> => read(db, () => all(allEntities, {}));

const entityBySlug = statement((db, p: Params<{ slug: string }>) => db.selectFrom('entities').selectAll().where('slug', '=', p.slug));

/** The entity with this slug, paused or not (the CLI's demo finds its own gallery by it). */
export const findEntityBySlug = (db: Db, slug: string): Promise<EntityRow | undefined> => read(db, () => first(entityBySlug, { slug }));

export const findEntity = (db: Db, id: number): Promise<EntityRow | undefined> => read(db, () => first(entityById, { id }));

export interface EntityChanges {
  name?: string | undefined;
  /** The highest key tier the entity's console may create (docs/console.md, Users and invites). */
  plan?: Tier | undefined;
  city?: string | undefined;
  country?: string | undefined;
}

const saveEntity = statement((db, p: Params<EntityRow>) => db.updateTable('entities')
  .set(columns(p, ['name', 'location_city', 'location_country', 'plan', 'paused_at', 'updated_at'])).where('id', '=', p.id).returningAll());

/** Changes an entity's row as `change` says, or 404. */
function changeEntity(db: Db, id: number, change: (row: EntityRow, at: string) => EntityRow): Promise<EntityRow> {
  return transaction(db, function* () {
    const row = yield* first(entityById, { id });
    if (!row) throw notFound('Entity');
    const saved = yield* first(saveEntity, change(row, nowIso()));
    if (!saved) throw notFound('Entity');
    return saved;
  }).then((row) => {
    invalidations.emit('entity-changed', id);
    return row;
  });
}

/** Operator changes to fields the API cannot write. The slug stays, so public links keep working. */
export const updateEntity = (db: Db, id: number, changes: EntityChanges): Promise<EntityRow> => changeEntity(db, id, (row, at) => ({
  ...row,
  ...(changes.name !== undefined ? { name: changes.name } : {}),
  ...(changes.city !== undefined ? { location_city: changes.city || null } : {}),
  ...(changes.country !== undefined ? { location_country: changes.country || null } : {}),
  ...(changes.plan !== undefined ? { plan: changes.plan } : {}),
  updated_at: at,
}));

export const setPaused = (db: Db, id: number, paused: boolean): Promise<EntityRow> =>
  changeEntity(db, id, (row, at) => ({ ...row, paused_at: paused ? at : null, updated_at: at }));

export async function getProfile(db: Db, entityId: number): Promise<ProfileType> {
  const row = await findEntity(db, entityId);
  if (!row) throw notFound('Profile');
  return toProfile(row);
}

const saveProfile = statement((db, p: Params<EntityRow>) => db.updateTable('entities')
  .set(columns(p, [...PROFILE_WRITABLE_FIELDS, 'updated_at'])).where('id', '=', p.id).returningAll());

/** Applies a profile PUT and records it, with the fields that changed, in the same transaction. */
export async function updateProfile(db: Db, actor: Actor, patch: ProfilePatch): Promise<ProfileType> {
  const profile = await transaction(db, function* () {
    const before = yield* first(entityById, { id: actor.entityId });
    if (!before) throw notFound('Profile');
    const at = nowIso();
    const after = yield* first(saveProfile, { ...before, ...patch, updated_at: at });
    if (!after) throw notFound('Profile');
    yield* recordWrite(db, actor, [{
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
    location_city: row.location_city, location_country: row.location_country, default_currency: row.default_currency,
  };
}
