import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { hasScope } from '../../domain/keys.js';
import { IdParams } from '../../schemas/common.js';
import { FEED_KINDS, FeedRun, RunList, RunsQuery } from '../../schemas/feeds.js';
import { getEntityRun, listEntityRuns, runJson } from '../../store/feeds.js';
import { startUndo } from '../../store/undo.js';
import { nowIso } from '../../clock.js';
import { AUTHED, IDEMPOTENT, answer, errors, recordId, routesTagged } from '../protocol/responses.js';
import { requireKind } from '../protocol/scopes.js';

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
    requireKind(request, run.record_kind ?? 'artworks', 'read');
    return runJson(run);
  });

  app.post('/runs/:id/undo', route(null, 'undoRun', 'Undo a run: what it created goes to the trash, what it changed gets its old values, what it deleted comes back', {
    description: 'Queues an undo run (`kind: "undo"`, `source: "undo:<id>"`) that does it record by record; a field changed since the run is kept and listed in the undo\'s `problems`. A feed\'s run also pauses its feed ("run N undone"). 409 `conflict`: the run is queued or running, was undone already (`undone_by`), is itself an undo, or ended more than `TRASH_DAYS` ago. The write scope of the run\'s `record_kind`.',
    params: IdParams,
    response: { 202: answer(FeedRun, 'The undo run, queued.'), ...errors(...AUTHED, ...IDEMPOTENT, 'not_found', 'conflict') },
  }), async (request, reply) => {
    const entityId = request.auth.entity.id;
    const id = recordId(request.params);
    const undo = await startUndo(app.db, entityId, id, app.config.trashDays, nowIso(), (run) => requireKind(request, run.record_kind ?? 'artworks', 'write'));
    return reply.code(202).send(runJson(undo));
  });
};
