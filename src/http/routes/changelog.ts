import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ANY_READ } from '../../domain/keys.js';
import { invalidFields } from '../../domain/errors.js';
import { CHANGELOG_PAGE_BYTES, ChangelogPage, ChangelogQuery } from '../../schemas/changelog.js';
import { SyncStatus } from '../../schemas/sync.js';
import { listChanges } from '../../store/changelog.js';
import { syncStatus } from '../../store/sync.js';
import { pageMembers, pageRequest } from '../protocol/pagination.js';
import { AUTHED, answer, errors, routesTagged } from '../protocol/responses.js';
import { changelogPageJson } from '../../http-common/changelog-json.js';
import { sendJsonSlices } from '../runtime/streaming.js';
import { toCanonicalTimestamp } from '../../schemas/formats.js';

const route = routesTagged('changelog');

export const changelogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/changelog', route(ANY_READ, 'changelog', 'Every API write of the key\'s entity, oldest first; poll it with `after`', {
    description: 'One entry per record a write changed, in id order. To poll: start once (optionally with `since`), then always pass the last answer\'s `next_after` as `after`; never advance `since` to the last timestamp seen (entries of one millisecond share it). `limit` is a maximum: a page read by cursor (without `page`) also ends before about 1 MiB of entries (at least one), with `has_more` and `next_after` exact, so following `next_after` still reads every entry exactly once. A numbered page is never cut.',
    querystring: ChangelogQuery,
    response: { 200: answer(ChangelogPage, 'A page of changes.', 'Link'), ...errors('bad_request', ...AUTHED) },
  }, { largeAnswer: true }), async (request, reply) => {
    const paging = pageRequest(request.query);
    const since = request.query.since === undefined ? undefined : toCanonicalTimestamp(request.query.since);
    const runId = request.query.run_id;
    if (runId !== undefined && (request.query.page !== undefined || since !== undefined)) {
      throw invalidFields([{ field: 'run_id', message: 'is read by cursor (after), without page or since' }]);
    }
    const listed = await listChanges(app.db, request.auth.entity.id, { ...paging, since, runId, maxBytes: CHANGELOG_PAGE_BYTES });
    // Entries still becoming final (PostgreSQL) may join this page without a new data version.
    reply.provisional = !listed.final;
    return sendJsonSlices(reply, changelogPageJson(listed.chunks(), pageMembers(request, reply, paging, listed)));
  });

  app.get('/sync/status', route(ANY_READ, 'syncStatus', 'When artworks, artists and events were last synced, and how many there are', {
    description: '`last_synced` is the latest API write of that kind (null if never); `count` the records now.',
    response: { 200: answer(SyncStatus, 'The sync status.'), ...errors(...AUTHED) },
  }), async (request) => syncStatus(app.db, request.auth.entity.id));
};
