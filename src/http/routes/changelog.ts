import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ANY_READ } from '../../domain/keys.js';
import { ChangelogPage, ChangelogQuery } from '../../schemas/changelog.js';
import { SyncStatus } from '../../schemas/sync.js';
import { listChanges } from '../../store/changelog.js';
import { syncStatus } from '../../store/sync.js';
import { pageMembers, pageRequest } from '../pagination.js';
import { AUTHED, errors } from '../responses.js';
import { toCanonicalTimestamp } from '../../schemas/formats.js';

const tags = ['changelog'];

export const changelogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/changelog', {
    config: { scope: ANY_READ },
    schema: {
      tags, summary: 'Every API write of the key\'s entity, oldest first; poll it with `after`',
      querystring: ChangelogQuery,
      response: { 200: ChangelogPage, ...errors(400, ...AUTHED) },
    },
  }, async (request, reply) => {
    const paging = pageRequest(request.query);
    const since = request.query.since === undefined ? undefined : toCanonicalTimestamp(request.query.since);
    const { changes, ...listed } = await listChanges(app.db, request.auth.entity.id, { ...paging, since });
    return { changes, ...pageMembers(request, reply, paging, listed) };
  });

  app.get('/sync/status', {
    config: { scope: ANY_READ },
    schema: {
      tags, summary: 'When artworks, artists and events were last synced, and how many there are',
      response: { 200: SyncStatus, ...errors(...AUTHED) },
    },
  }, async (request) => syncStatus(app.db, request.auth.entity.id));
};
