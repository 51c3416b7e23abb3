import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { nowIso } from '../../clock.js';
import { ApiError, invalidFields } from '../../domain/errors.js';
import { hasScope } from '../../domain/keys.js';
import { TARGETS } from '../../import/columns.js';
import Type from 'typebox';
import { IdParams } from '../../schemas/common.js';
import { CONFIRM_DELETES_ROUTE, Feed, FeedList, FeedPost, FeedPreview, FeedPreviewPost, FeedPut, FeedRun, FeedRunList, RunParams, RunPost, RunsQuery } from '../../schemas/feeds.js';
import { confirmDeletes } from '../../feeds/confirm.js';
import { previewFeed, readFeedFile } from '../../feeds/preview.js';
import { findEntity } from '../../store/entities.js';
import { feedJson, runJson } from '../../feeds/present.js';
import type { FeedFetcher } from '../../feeds/fetcher.js';
import { createFeed, feedUrlProblem, deleteFeed, getFeed, getRun, listFeeds, listRuns, queueRun, updateFeed, type FeedSpec } from '../../store/feeds.js';
import { AUTHED, IDEMPOTENT, WITH_BODY, answer, errors, recordId, routesTagged } from '../protocol/responses.js';
import { requireKind } from '../protocol/scopes.js';

const route = routesTagged('feeds');

declare module 'fastify' {
  interface FastifyInstance {
    /** The outgoing fetcher as feeds use it (src/feeds/fetcher.ts). */
    feedFetch: FeedFetcher;
  }
}

function checkMapping(kind: 'artworks' | 'events', mapping: Record<string, string | null> | undefined): void {
  const wrong = Object.entries(mapping ?? {}).filter(([, field]) => field !== null && !TARGETS[kind].includes(field));
  if (wrong.length > 0) {
    throw invalidFields(wrong.map(([column, field]) => ({ field: `mapping.${column}`, message: `"${field}" is not a field of ${kind}` })));
  }
}

/** Feeds (docs/api.md, Feeds). Their answers change with every run, not with the entity's data: never kept, never 304. */
export const feedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** The key's entity and the feed named in the path, once the key may read or write the feed's kind (another entity's feed: 404). */
  const feedOfKey = async (request: FastifyRequest<{ Params: { id: string } }>, access: 'read' | 'write') => {
    const entityId = request.auth.entity.id;
    const id = recordId(request.params);
    requireKind(request, (await getFeed(app.db, entityId, id)).feed.kind, access);
    return { entityId, id };
  };

  /** A URL with a user name or password is refused before anything is fetched (docs/api.md, Feeds). */
  const checkUrl = (url: string) => {
    const problem = feedUrlProblem(url);
    if (problem) throw invalidFields([{ field: 'url', message: problem }]);
  };

  /** One of the entity's two import slots, shared with the console's Import (429 when both are busy). */
  const claimSlot = (entityId: number) => {
    const release = app.heldImports.claim(entityId);
    if (!release) throw new ApiError('rate_limited', 'Both of this account\'s import slots are busy (an import being applied or a feed being previewed): try again shortly.', { retry_after: 5 });
    return release;
  };

  const readAtCreation = async (entityId: number, spec: FeedSpec): Promise<Record<string, string | null> | undefined> => {
    const release = app.heldImports.claim(entityId);
    if (!release) return undefined;
    try {
      const entity = await findEntity(app.db, entityId);
      if (!entity) return undefined;
      return (await readFeedFile(app.feedFetch, entity, { ...spec, mapping: JSON.stringify(spec.mapping), mapping_frozen: 0 }, () => app.heldImports.readTurn(entityId))).reading.mapping;
    } catch (error) {
      if (error instanceof ApiError) return undefined;
      throw error;
    } finally {
      release();
    }
  };

  app.post('/feeds/preview', route(null, 'previewFeed', 'Read a feed\'s file once and show what a run would write; nothing is written', {
    description: 'The body of `POST /v1/feeds`, with an optional `feed_id` to preview a change of that feed (its stored mapping when none is sent). Holds one of the entity\'s two import slots while it reads (429 with `retry_after` when both are busy), and parses the file in one of the server\'s read turns (503 with `Retry-After` when none comes within 5 seconds). 400 when the file cannot be fetched or read.',
    body: FeedPreviewPost,
    response: { 200: answer(FeedPreview, 'The preview.'), ...errors(...WITH_BODY, ...AUTHED, 'not_found') },
  }), async (request) => {
    const body = request.body;
    const entityId = request.auth.entity.id;
    requireKind(request, body.kind, 'write');
    checkMapping(body.kind, body.mapping);
    checkUrl(body.url);
    const feed = body.feed_id === undefined ? undefined : (await getFeed(app.db, entityId, body.feed_id)).feed;
    if (feed) requireKind(request, feed.kind, 'write');
    const useStored = feed !== undefined && body.mapping === undefined && feed.kind === body.kind;
    const release = claimSlot(entityId);
    try {
      const entity = await findEntity(app.db, entityId);
      if (!entity) throw new ApiError('not_found', 'The account no longer exists.');
      return await previewFeed({ db: app.db, fetch: app.feedFetch, readTurn: () => app.heldImports.readTurn(entityId) }, entity, {
        url: body.url, kind: body.kind, encoding: body.encoding ?? 'utf-8', sheet: body.sheet ?? null, mode: body.mode ?? 'merge',
        mapping: useStored ? feed.mapping : JSON.stringify(body.mapping ?? {}), mapping_frozen: useStored ? feed.mapping_frozen : 0,
      });
    } finally {
      release();
    }
  });

  app.post('/feeds', route(null, 'postFeed', 'Add a feed; its first run is queued at once', {
    description: 'At most 10 feeds per entity (400 past that); one URL is one feed per entity and kind (409 `duplicate`).',
    body: FeedPost,
    response: { 201: answer(Feed, 'The feed.'), ...errors(...WITH_BODY, ...AUTHED, ...IDEMPOTENT, 'duplicate') },
  }), async (request, reply) => {
    const body = request.body;
    requireKind(request, body.kind, 'write');
    checkMapping(body.kind, body.mapping);
    const spec: FeedSpec = {
      url: body.url, kind: body.kind, mapping: body.mapping ?? {}, encoding: body.encoding ?? 'utf-8', sheet: body.sheet ?? null,
      mode: body.mode ?? 'merge', interval_minutes: body.interval_minutes ?? 60, paused: body.paused ?? false,
    };
    // Read once now when a slot is free: the mapping in use (suggestions included) is stored with the feed
    // and shown; a file that cannot be read now is read, and its mapping stored, by the first run. A feed
    // created paused reads nothing until it is resumed.
    checkUrl(spec.url);
    const reading = spec.paused ? undefined : await readAtCreation(request.auth.entity.id, spec);
    const created = await createFeed(app.db, request.auth.entity.id, reading ? { ...spec, mapping: reading } : spec, nowIso(), reading !== undefined);
    return reply.code(201).send(feedJson(created));
  });

  app.get('/feeds', route(null, 'listFeeds', 'The entity\'s feeds (those of the kinds the key may read)', {
    response: { 200: answer(FeedList, 'The feeds.'), ...errors(...AUTHED) },
  }), async (request, reply) => {
    reply.provisional = true;
    const feeds = await listFeeds(app.db, request.auth.entity.id);
    return {
      feeds: feeds.filter(({ feed }) => hasScope(request.auth.scopes, `${feed.kind}:read`))
        .map((found) => feedJson(found, { fullUrl: hasScope(request.auth.scopes, `${found.feed.kind}:write`) })),
    };
  });

  app.get('/feeds/:id', route(null, 'getFeed', 'One feed, with its latest run', {
    params: IdParams, response: { 200: answer(Feed, 'The feed.'), ...errors(...AUTHED, 'not_found') },
  }), async (request, reply) => {
    reply.provisional = true;
    const found = await getFeed(app.db, request.auth.entity.id, recordId(request.params));
    requireKind(request, found.feed.kind, 'read');
    return feedJson(found, { fullUrl: hasScope(request.auth.scopes, `${found.feed.kind}:write`) });
  });

  app.put('/feeds/:id', route(null, 'putFeed', 'Change a feed (any of its writable fields)', {
    description: 'A new URL, kind, mapping, encoding, sheet or mode makes the next run apply the file whatever it was. `paused: false` resumes a feed paused after five failed runs.',
    params: IdParams, body: FeedPut,
    response: { 200: answer(Feed, 'The feed.'), ...errors(...WITH_BODY, ...AUTHED, ...IDEMPOTENT, 'not_found', 'duplicate') },
  }), async (request) => {
    const entityId = request.auth.entity.id;
    const id = recordId(request.params);
    const { feed } = await getFeed(app.db, entityId, id);
    const kind = request.body.kind ?? feed.kind;
    requireKind(request, feed.kind, 'write');
    requireKind(request, kind, 'write');
    checkMapping(kind, request.body.mapping ?? (request.body.kind ? JSON.parse(feed.mapping) as Record<string, string | null> : undefined));
    const updated = await updateFeed(app.db, entityId, id, request.body, nowIso());
    return feedJson(updated);
  });

  app.delete('/feeds/:id', route(null, 'deleteFeed', 'Delete a feed and its runs; the records it wrote stay', {
    params: IdParams, response: { 204: Type.Null({ description: 'The feed and its runs are deleted; the records it wrote stay.' }), ...errors(...AUTHED, ...IDEMPOTENT, 'not_found') },
  }), async (request, reply) => {
    const { entityId, id } = await feedOfKey(request, 'write');
    await deleteFeed(app.db, entityId, id);
    return reply.code(204).send(null);
  });

  app.post('/feeds/:id/runs', route(null, 'runFeed', 'Run a feed now (at most once a minute per feed)', {
    description: `\`allow_mass_delete\` is withdrawn (400): a mirror run that stopped for a mass delete lists its \`pending_deletes\`, and \`${CONFIRM_DELETES_ROUTE}\` deletes them.`,
    params: IdParams, body: RunPost,
    response: { 202: answer(FeedRun, 'The queued run.'), ...errors(...WITH_BODY, ...AUTHED, ...IDEMPOTENT, 'not_found') },
  }), async (request, reply) => {
    const { entityId, id } = await feedOfKey(request, 'write');
    if (request.body?.allow_mass_delete !== undefined) {
      throw invalidFields([{ field: 'allow_mass_delete', message: `is withdrawn: confirm a run's pending deletes with ${CONFIRM_DELETES_ROUTE}` }]);
    }
    const run = await queueRun(app.db, entityId, id, nowIso());
    return reply.code(202).send(runJson(run));
  });

  app.post('/feeds/:id/runs/:run_id/confirm-deletes', route(null, 'confirmFeedDeletes', 'Delete the records a mirror run listed in its pending_deletes', {
    description: 'Deletes exactly the run\'s `pending_deletes` (to the trash, as writes of that run), reading nothing again; a record changed or gone since the run is skipped and listed in the run\'s `problems`. 409 `conflict` once confirmed, or when a later run of the feed ended `applied` or `needs_attention`.',
    params: RunParams,
    response: { 202: answer(FeedRun, 'The run, with its deletions counted.'), ...errors(...AUTHED, ...IDEMPOTENT, 'not_found', 'conflict') },
  }), async (request, reply) => {
    const { entityId, id } = await feedOfKey(request, 'write');
    const run = await confirmDeletes(app.db, entityId, id, recordId({ id: request.params.run_id }));
    return reply.code(202).send(runJson(run));
  });

  app.get('/feeds/:id/runs', route(null, 'listFeedRuns', 'A feed\'s runs, newest first (kept 90 days)', {
    params: IdParams, querystring: RunsQuery,
    response: { 200: answer(FeedRunList, 'A page of runs.'), ...errors(...AUTHED, 'not_found') },
  }), async (request, reply) => {
    reply.provisional = true;
    const { entityId, id } = await feedOfKey(request, 'read');
    const page = await listRuns(app.db, entityId, id, request.query.after, request.query.limit);
    return { runs: page.runs.map(runJson), has_more: page.hasMore, next_after: page.nextAfter };
  });

  app.get('/feeds/:id/runs/:run_id', route(null, 'getFeedRun', 'One run of a feed', {
    params: RunParams,
    response: { 200: answer(FeedRun, 'The run.'), ...errors(...AUTHED, 'not_found') },
  }), async (request, reply) => {
    reply.provisional = true;
    const { entityId, id } = await feedOfKey(request, 'read');
    return runJson(await getRun(app.db, entityId, id, recordId({ id: request.params.run_id })));
  });
};
