import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { profileFromPut } from '../../domain/profile.js';
import { Profile, ProfilePut, ProfileUpdated } from '../../schemas/profile.js';
import { getProfile, updateProfile } from '../../store/entities.js';
import { AUTHED, WITH_BODY, errors } from '../responses.js';

const tags = ['profile'];

export const profileRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/profile', {
    config: { scope: 'profile:read' },
    schema: { tags, summary: 'The profile of the key\'s entity', response: { 200: Profile, ...errors(...AUTHED) } },
  }, async (request) => getProfile(app.db, request.auth.entity.id));

  app.put('/profile', {
    config: { scope: 'profile:write' },
    schema: {
      tags, summary: 'Change profile fields; only the fields sent change',
      body: ProfilePut,
      response: { 200: ProfileUpdated, ...errors(...WITH_BODY, 409, 422, ...AUTHED) },
    },
  }, async (request) => {
    const profile = await updateProfile(app.db, request.auth.actor, profileFromPut(request.body));
    return { ...profile, updated: true as const };
  });
};
