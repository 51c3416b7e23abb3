import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { ApiError, invalidFields } from '../../domain/errors.js';
import { DEFAULT_ROLL_GRACE, ROLL_GRACE, hasScope } from '../../domain/keys.js';
import { listedEvents, readScopesFor } from '../../domain/webhooks.js';
import { IdParams } from '../../schemas/common.js';
import {
  MessageParams, MessagesQuery, RollSecret, WebhookEndpoint, WebhookEndpointWithSecret, WebhookList, WebhookMessage,
  WebhookMessagePage, WebhookPost, WebhookPut,
} from '../../schemas/webhooks.js';
import { Deleted } from '../../schemas/artworks.js';
import {
  createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, listMessages, retryMessage, rollSecret, sendTestMessage, updateEndpoint,
  type EndpointCheck,
} from '../../store/webhooks.js';
import { endpointUrlProblem, toEndpoint, toMessage, withSecret } from '../../webhooks/present.js';
import { AUTHED, IDEMPOTENT, WITH_BODY, answer, errors, recordId, routesTagged } from '../protocol/responses.js';

const route = routesTagged('webhooks');

/**
 * Webhook answers change without a new catalog data version (a delivery, a roll): every answer gets
 * a tag of its own and none is kept, so If-None-Match never matches a stale one.
 */
const uncached = { tagParts: () => randomUUID() };
const fresh = <T>(reply: FastifyReply, body: T): T => {
  reply.provisional = true;
  return body;
};

/**
 * An endpoint's messages carry records: creating or changing it, sending its test and retrying its
 * messages need the read scopes of all its types (docs/api.md, Webhooks, Who may subscribe).
 */
function requireReadScopes(request: FastifyRequest, events: readonly string[]): void {
  const missing = readScopesFor(events).filter((scope) => !hasScope(request.auth.scopes, scope));
  if (missing.length > 0) {
    throw new ApiError('forbidden', `This key lacks the scope ${missing.join(' and ')}, which the endpoint's events (${events.join(', ')}) need.`);
  }
}

export const webhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  /** The read scopes of the endpoint's own events, checked on the row the store's write reads (no second read). */
  const scopesOfEndpoint = (request: FastifyRequest): EndpointCheck => (row) => requireReadScopes(request, listedEvents(row.events));

  const checkUrl = (url: string | undefined) => {
    const problem = url === undefined ? null : endpointUrlProblem(url, app.config.fetchAllowPrivate);
    if (problem) throw invalidFields([{ field: 'url', message: problem }]);
  };

  app.post('/webhooks', route('webhooks:write', 'createWebhook', 'Add a webhook endpoint; its secret is shown in this answer only', {
    description: 'At most 10 endpoints per entity. Messages of the subscribed `events` (or `["*"]`) are POSTed to `url`, signed as the Standard Webhooks specification says.',
    body: WebhookPost,
    response: { 201: answer(WebhookEndpointWithSecret, 'The endpoint and its secret.'), ...errors(...WITH_BODY, ...IDEMPOTENT, ...AUTHED) },
  }), async (request, reply) => {
    checkUrl(request.body.url);
    requireReadScopes(request, request.body.events);
    const row = await createEndpoint(app.db, request.auth.entity.id, {
      url: request.body.url, events: request.body.events, description: request.body.description ?? '', enabled: request.body.enabled ?? true,
    });
    return reply.code(201).send(withSecret(row));
  });

  app.get('/webhooks', route('webhooks:read', 'listWebhooks', 'The entity\'s webhook endpoints (never a secret)', {
    response: { 200: answer(WebhookList, 'The endpoints.'), ...errors(...AUTHED) },
  }, uncached), async (request, reply) => fresh(reply, { webhooks: (await listEndpoints(app.db, request.auth.entity.id)).map(toEndpoint) }));

  app.get('/webhooks/:id', route('webhooks:read', 'getWebhook', 'One webhook endpoint', {
    params: IdParams, response: { 200: answer(WebhookEndpoint, 'The endpoint.'), ...errors('not_found', ...AUTHED) },
  }, uncached), async (request, reply) => fresh(reply, toEndpoint(await getEndpoint(app.db, request.auth.entity.id, recordId(request.params)))));

  app.put('/webhooks/:id', route('webhooks:write', 'updateWebhook', 'Change an endpoint\'s url, events, description or enabled', {
    description: 'Only the fields sent change. Enabling a disabled endpoint clears `disabled_reason`.',
    params: IdParams, body: WebhookPut,
    response: { 200: answer(WebhookEndpoint, 'The endpoint after the change.'), ...errors(...WITH_BODY, 'not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    checkUrl(request.body.url);
    const id = recordId(request.params);
    if (request.body.events) requireReadScopes(request, request.body.events);
    return toEndpoint(await updateEndpoint(app.db, request.auth.entity.id, id, request.body, request.body.events ? undefined : scopesOfEndpoint(request)));
  });

  app.delete('/webhooks/:id', route('webhooks:write', 'deleteWebhook', 'Remove an endpoint; its pending messages are not sent', {
    params: IdParams, response: { 200: answer(Deleted, 'The endpoint is removed.'), ...errors('not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    const id = recordId(request.params);
    await deleteEndpoint(app.db, request.auth.entity.id, id);
    return { deleted: true as const, id };
  });

  app.post('/webhooks/:id/roll-secret', route('webhooks:write', 'rollWebhookSecret', 'A new secret; the old one keeps signing for `expire_old_in`', {
    description: 'While the old secret lives, messages carry both signatures, space-separated, so a receiver can switch without losing one.',
    params: IdParams, body: RollSecret,
    response: { 200: answer(WebhookEndpointWithSecret, 'The endpoint and its new secret, shown this once.'), ...errors(...WITH_BODY, 'not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request) => {
    const grace = ROLL_GRACE[request.body?.expire_old_in ?? DEFAULT_ROLL_GRACE];
    return withSecret(await rollSecret(app.db, request.auth.entity.id, recordId(request.params), grace));
  });

  app.post('/webhooks/:id/test', route('webhooks:write', 'testWebhook', 'Send a `webhook.test` message to the endpoint', {
    params: IdParams, response: { 202: answer(WebhookMessage, 'The message, recorded and on its way.'), ...errors('not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request, reply) => {
    const id = recordId(request.params);
    return reply.code(202).send(toMessage(await sendTestMessage(app.db, request.auth.entity.id, id, scopesOfEndpoint(request))));
  });

  app.get('/webhooks/:id/messages', route('webhooks:read', 'listWebhookMessages', 'The endpoint\'s messages, newest first, with every attempt', {
    description: 'Messages are kept 30 days. Page with `after` = the previous page\'s `next_after`.',
    params: IdParams, querystring: MessagesQuery,
    response: { 200: answer(WebhookMessagePage, 'A page of messages.'), ...errors('bad_request', 'not_found', ...AUTHED) },
  }, uncached), async (request, reply) => {
    const page = await listMessages(app.db, request.auth.entity.id, recordId(request.params), { after: request.query.after, limit: request.query.limit });
    return fresh(reply, {
      messages: page.messages.map((message) => toMessage(message, message.attemptRows)), has_more: page.hasMore, next_after: page.nextAfter,
    });
  });

  app.post('/webhooks/:id/messages/:message_id/retry', route('webhooks:write', 'retryWebhookMessage', 'Send a message again now, with a fresh retry schedule', {
    params: MessageParams, response: { 202: answer(WebhookMessage, 'The message, pending again.'), ...errors('not_found', ...IDEMPOTENT, ...AUTHED) },
  }), async (request, reply) => {
    const id = recordId(request.params);
    const message = await retryMessage(app.db, request.auth.entity.id, id, request.params.message_id, scopesOfEndpoint(request));
    return reply.code(202).send(toMessage(message));
  });
};
