import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { profileFromPut } from '../../domain/profile.js';
import { Profile, ProfilePut, ProfileUpdated } from '../../schemas/profile.js';
import { getProfile, updateProfile } from '../../store/entities.js';
import { AUTHED, IDEMPOTENT, WITH_BODY, answer, errors, routesTagged } from '../protocol/responses.js';

const route = routesTagged('profile');

export const profileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/profile', route('profile:read', 'getProfile', 'The profile of the key\'s entity', {
    description: '`social_photo` and `social_micro` repeat `social_instagram` and `social_twitter`.',
    response: { 200: answer(Profile, 'The profile.'), ...errors(...AUTHED) },
  }), async (request) => getProfile(app.db, request.auth.entity.id));

  app.put('/profile', route('profile:write', 'updateProfile', 'Change profile fields; only the fields sent change', {
    description: '`null` or `""` clears a field. name, slug, type, location_city and location_country are read only (the operator changes them). Setting `ical_url` adds a subscribe-to-calendar link to the public profile page.',
    body: ProfilePut,
    response: { 200: answer(ProfileUpdated, 'The whole profile after the change.'), ...errors(...WITH_BODY, ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    const profile = await updateProfile(app.db, request.auth.actor, profileFromPut(request.body));
    return { ...profile, updated: true as const };
  });
};
