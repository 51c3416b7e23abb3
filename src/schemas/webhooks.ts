import Type, { type Static } from 'typebox';
import { Id, NewestFirstPage, Nullable, PathId, Ref, StringEnum, Timestamp } from './common.js';

/** The event types a webhook endpoint may subscribe to (docs/api.md, Webhooks). */
export const WEBHOOK_TYPES = [
  'artwork.created', 'artwork.updated', 'artwork.deleted',
  'event.created', 'event.updated', 'event.deleted',
  'profile.updated',
  'image.ready', 'image.failed',
  'feed.run.completed', 'feed.run.failed',
  'webhook.test',
] as const;
export type WebhookType = (typeof WEBHOOK_TYPES)[number];

/** The largest `limit` of a page of messages. */
export const MESSAGES_PAGE_MAX = 100;

const EventType = StringEnum([...WEBHOOK_TYPES, '*'], { description: 'A message type, or `*` for every type.' });
const Url = Type.String({
  format: 'uri', maxLength: 2048,
  description: 'Where messages are POSTed: https (http only where the operator allows private addresses, for tests).',
  examples: ['https://example.org/hooks/art-catalog'],
});
const Events = Type.Array(EventType, { minItems: 1, maxItems: WEBHOOK_TYPES.length + 1, description: 'The types sent to the endpoint, or `["*"]` for all.' });
const Description = Type.String({ maxLength: 1000, description: 'For people: what the endpoint is.' });

export const WebhookEndpoint = Type.Object({
  id: Id,
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.String(),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: 'Why the endpoint was disabled (by the entity, or after 5 days of failed messages).' })),
  created_at: Timestamp,
}, { $id: 'WebhookEndpoint', description: 'A webhook endpoint; its secret is never listed.' });

export const WebhookEndpointWithSecret = Type.Object({
  ...WebhookEndpoint.properties,
  secret: Type.Union([Type.String(), Type.Null()], { description: '`whsec_` + base64 of 32 bytes: the signing secret, shown this once; `null` in an idempotent replay of this answer.' }),
  secret_shown: Type.Optional(Type.Boolean({ description: '`false` in an idempotent replay, whose `secret` is `null`: the secret is shown once and kept nowhere in clear.' })),
}, { $id: 'WebhookEndpointWithSecret', description: 'An endpoint just created or rolled, with its secret (shown this once).' });

export const WebhookList = Type.Object({ webhooks: Type.Array(Ref(WebhookEndpoint)) },
  { $id: 'WebhookList', description: 'The entity\'s webhook endpoints (at most 10).' });

export const WebhookPost = Type.Object({
  url: Url,
  events: Events,
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean({ default: true })),
}, {
  additionalProperties: false,
  examples: [{ url: 'https://erp.gallery.example/hooks/art-catalog', events: ['artwork.created', 'artwork.updated', 'artwork.deleted'], description: 'Our ERP' }],
});
export type WebhookPostBody = Static<typeof WebhookPost>;

export const WebhookPut = Type.Object({
  url: Type.Optional(Url),
  events: Type.Optional(Events),
  description: Type.Optional(Description),
  enabled: Type.Optional(Type.Boolean()),
}, { additionalProperties: false, description: 'Only the fields sent change.', examples: [{ events: ['*'], enabled: true }] });
export type WebhookPutBody = Static<typeof WebhookPut>;

export const RollSecret = Type.Object({
  expire_old_in: Type.Optional(StringEnum(['1h', '24h', '7d', 'now'], { default: '24h', description: 'How long the old secret keeps signing (default 24h).' })),
}, { additionalProperties: false, examples: [{ expire_old_in: '24h' }] });

export const WebhookAttempt = Type.Object({
  at: Timestamp,
  status_code: Nullable(Type.Integer()),
  duration_ms: Type.Integer({ minimum: 0 }),
  response: Nullable(Type.String({ description: 'The first 1 KB of the response body.' })),
  error: Nullable(Type.String()),
}, { $id: 'WebhookAttempt', description: 'One attempt to deliver a message.' });

export const WebhookMessage = Type.Object({
  id: Type.String({ description: 'The `webhook-id` the message is sent with, the same on every attempt.' }),
  type: Type.String(),
  status: StringEnum(['pending', 'delivered', 'failed']),
  created_at: Timestamp,
  attempts: Type.Array(Ref(WebhookAttempt)),
}, { $id: 'WebhookMessage', description: 'A message to an endpoint and its attempts.' });

export const WebhookMessagePage = NewestFirstPage('messages', WebhookMessage,
  Type.Integer({ minimum: 1, description: 'Pass as `after` for the next (older) page.' }),
  { $id: 'WebhookMessagePage', description: 'An endpoint\'s messages, newest first.' });

export const MessagesQuery = Type.Object({
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'The previous page\'s `next_after`.' })),
  limit: Type.Integer({ minimum: 1, maximum: MESSAGES_PAGE_MAX, default: 20, description: `Messages per page, 1 to ${MESSAGES_PAGE_MAX} (default 20).` }),
});

export const MessageParams = Type.Object({
  id: PathId(),
  message_id: Type.String({ pattern: '^msg_[0-9a-f]{32}$', description: 'A message id.' }),
});

