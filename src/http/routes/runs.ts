import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiError } from '../../domain/errors.js';
import { hasScope } from '../../domain/keys.js';
import { IdParams } from '../../schemas/common.js';
import { FEED_KINDS, FeedRun, RunList, RunsQuery } from '../../schemas/feeds.js';
import { getEntityRun, listEntityRuns, runJson } from '../../store/feeds.js';
import { AUTHED, answer, errors, recordId, routesTagged } from '../protocol/responses.js';

const route = routesTagged('feeds');

/** Every run of the entity (docs/api.md, Runs): feed runs, console imports, undos; only the kinds the key may read. Never kept, never 304. */
export const runRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/runs', route(null, 'listRuns', 'The entity\'s runs (feeds, console imports, undos), newest first', {
    description: 'Only runs of the kinds (`artworks`, `events`) whose read scope the key holds. Cursor: pass `next_after` as `after`.',
    querystring: RunsQuery,
    response: { 200: answer(RunList, 'A page of runs.'), ...errors('bad_request', ...AUTHED) },
  }), async (request, reply) => {
    reply.provisional = true;
    const kinds = FEED_KINDS.filter((kind) => hasScope(request.auth.scopes, `${kind}:read`));
    const page = await listEntityRuns(app.db, request.auth.entity.id, kinds, request.query.after, request.query.limit);
    return { runs: page.runs.map(runJson), has_more: page.hasMore, next_after: page.nextAfter };
  });

  app.get('/runs/:id', route(null, 'getRun', 'One run of the entity', {
    description: 'Another entity\'s run is 404; a run of a kind whose read scope the key lacks is 403.',
    params: IdParams,
    response: { 200: answer(FeedRun, 'The run.'), ...errors('not_found', ...AUTHED) },
  }), async (request, reply) => {
    reply.provisional = true;
    const run = await getEntityRun(app.db, request.auth.entity.id, recordId(request.params));
    const kind = run.record_kind ?? 'artworks';
    if (!hasScope(request.auth.scopes, `${kind}:read`)) throw new ApiError('forbidden', `This key lacks the scope ${kind}:read.`);
    return runJson(run);
  });
};
