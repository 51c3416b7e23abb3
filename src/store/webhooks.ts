import { sql, type RawBuilder } from 'kysely';
import { nowIso } from '../clock.js';
import { read, transaction } from '../db/run.js';
import { statement, statementPerPageSize, type Param, type Params } from '../db/statement.js';
import type { Db, WebhookAttemptRow, WebhookEndpointRow, WebhookMessageRow } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { ApiError, notFound } from '../domain/errors.js';
import {
  FAILING_DISABLE_MS, MAX_ENDPOINTS, MESSAGE_RETENTION_MS, generateSecret, messageId, retryDelay, storedEvents,
} from '../domain/webhooks.js';
import { seal, unseal } from '../secrets/seal.js';
import { enqueue, jobsOfClause } from './jobs.js';
import { isPostgres, lockEntity, rawQuery } from './sql.js';

// ---- endpoints ---------------------------------------------------------------------------------

export interface EndpointInput {
  url: string;
  events: readonly string[];
  description: string;
  enabled: boolean;
}

export type EndpointPatch = Partial<EndpointInput>;

const countOf = statement((db, p: Params<{ ownerId: number }>) => db.selectFrom(
  db.selectFrom('webhook_endpoints').select('id').where('owner_id', '=', p.ownerId).limit(sql.lit(MAX_ENDPOINTS + 1)).as('e'),
).select((eb) => eb.fn.countAll<number>().as('n')));

const insertEndpoint = statement((db, p: Params<Omit<WebhookEndpointRow, 'id'>>) => db.insertInto('webhook_endpoints').values({
  owner_id: p.owner_id, url: p.url, events: p.events, description: p.description, enabled: p.enabled,
  disabled_reason: p.disabled_reason, secret: p.secret, old_secret: p.old_secret, old_secret_expires_at: p.old_secret_expires_at,
  failing_since: p.failing_since, created_at: p.created_at, updated_at: p.updated_at,
}).returningAll());

// An entity has at most MAX_ENDPOINTS endpoints: its list is bounded.
const endpointsOf = statement((db, p: Params<{ ownerId: number }>) => db.selectFrom('webhook_endpoints').selectAll()
  .where('owner_id', '=', p.ownerId).orderBy('id').limit(sql.lit(MAX_ENDPOINTS * 2)));
const endpointById = statement((db, p: Params<{ ownerId: number; id: number }>) => db.selectFrom('webhook_endpoints').selectAll()
  .where('owner_id', '=', p.ownerId).where('id', '=', p.id));

const changeEndpoint = statement((db, p: Params<Pick<WebhookEndpointRow, 'id' | 'url' | 'events' | 'description' | 'enabled' | 'disabled_reason' | 'failing_since' | 'updated_at'>>) =>
  db.updateTable('webhook_endpoints').set({
    url: p.url, events: p.events, description: p.description, enabled: p.enabled, disabled_reason: p.disabled_reason,
    failing_since: p.failing_since, updated_at: p.updated_at,
  }).where('id', '=', p.id).returningAll());

const setSecrets = statement((db, p: Params<Pick<WebhookEndpointRow, 'id' | 'secret' | 'old_secret' | 'old_secret_expires_at' | 'updated_at'>>) =>
  db.updateTable('webhook_endpoints').set({
    secret: p.secret, old_secret: p.old_secret, old_secret_expires_at: p.old_secret_expires_at, updated_at: p.updated_at,
  }).where('id', '=', p.id).returningAll());

const removeEndpoint = statement((db, p: Params<{ ownerId: number; id: number }>) => db.deleteFrom('webhook_endpoints')
  .where('owner_id', '=', p.ownerId).where('id', '=', p.id).returning('id'));

/**
 * A new endpoint and its secret (shown once); at most MAX_ENDPOINTS per entity. Secrets are stored
 * sealed (src/secrets/seal.ts); the row answered carries the new secret in clear, for that one answer.
 */
export function createEndpoint(db: Db, ownerId: number, input: EndpointInput): Promise<WebhookEndpointRow> {
  const secret = generateSecret();
  const sealed = seal(secret);
  return transaction(db, function* () {
    yield* first(lockEntity, { entityId: ownerId });
    const count = Number((yield* first(countOf, { ownerId }))?.n ?? 0);
    if (count >= MAX_ENDPOINTS) throw new ApiError('bad_request', `An entity may have at most ${MAX_ENDPOINTS} webhook endpoints.`);
    const at = nowIso();
    return (yield* first(insertEndpoint, {
      owner_id: ownerId, url: input.url, events: storedEvents(input.events), description: input.description,
      enabled: input.enabled ? 1 : 0, disabled_reason: null, secret: sealed, old_secret: null, old_secret_expires_at: null,
      failing_since: null, created_at: at, updated_at: at,
    }))!;
  }).then((row) => ({ ...row, secret }));
}

export const listEndpoints = (db: Db, ownerId: number): Promise<WebhookEndpointRow[]> => read(db, () => all(endpointsOf, { ownerId }));

export async function getEndpoint(db: Db, ownerId: number, id: number): Promise<WebhookEndpointRow> {
  const row = await read(db, () => first(endpointById, { ownerId, id }));
  if (!row) throw notFound('Webhook endpoint');
  return row;
}

/**
 * What a caller checks of the endpoint it acts on before anything is written (the route: the key's
 * read scopes for its events, 403), on the row the write reads: the endpoint is read once.
 */
export type EndpointCheck = (row: WebhookEndpointRow) => void;

/** Changes the fields sent; enabling an endpoint clears the reason it was disabled and its failing streak. */
export function updateEndpoint(db: Db, ownerId: number, id: number, patch: EndpointPatch, check?: EndpointCheck): Promise<WebhookEndpointRow> {
  return transaction(db, function* () {
    const row = yield* first(endpointById, { ownerId, id });
    if (!row) throw notFound('Webhook endpoint');
    check?.(row);
    const enabled = patch.enabled === undefined ? row.enabled : patch.enabled ? 1 : 0;
    const reenabled = enabled === 1 && row.enabled === 0;
    return (yield* first(changeEndpoint, {
      id, url: patch.url ?? row.url, events: patch.events ? storedEvents(patch.events) : row.events,
      description: patch.description ?? row.description, enabled,
      disabled_reason: enabled === 1 ? null : patch.enabled === false ? 'disabled by the entity' : row.disabled_reason,
      failing_since: reenabled ? null : row.failing_since, updated_at: nowIso(),
    }))!;
  });
}

export async function deleteEndpoint(db: Db, ownerId: number, id: number): Promise<void> {
  // Its messages stay until the sweep: a delivery finds no endpoint and stops (src/webhooks/deliver.ts).
  const removed = await transaction(db, () => first(removeEndpoint, { ownerId, id }));
  if (!removed) throw notFound('Webhook endpoint');
}

/**
 * A new secret; the old one keeps signing for `graceMs` (0: it stops now). A roll while an older
 * secret still lives lets that older one go: at most two secrets sign.
 */
export function rollSecret(db: Db, ownerId: number, id: number, graceMs: number): Promise<WebhookEndpointRow> {
  const secret = generateSecret();
  const sealed = seal(secret);
  return transaction(db, function* () {
    const row = yield* first(endpointById, { ownerId, id });
    if (!row) throw notFound('Webhook endpoint');
    const now = Date.now();
    return (yield* first(setSecrets, {
      // The old secret moves over still sealed.
      id, secret: sealed, old_secret: graceMs > 0 ? row.secret : null,
      old_secret_expires_at: graceMs > 0 ? new Date(now + graceMs).toISOString() : null, updated_at: new Date(now).toISOString(),
    }))!;
  }).then((row) => ({ ...row, secret }));
}

/**
 * Secrets opened, by their sealed value (a roll seals a new value: its old entry is never asked for
 * again and leaves as others come). Opening one was an AES-GCM decipher and a key object per delivery,
 * 4 % of a delivering process's CPU (docs/performance.md, Webhooks, "Where a delivery's Node CPU goes").
 * Held in this process's memory only, as the delivery holds it anyway; never logged or stored.
 */
const OPENED_MAX = 256;
const opened = new Map<string, string>();
function openSealed(stored: string): string {
  let secret = opened.get(stored);
  if (secret === undefined) {
    secret = unseal(stored);
    if (opened.size >= OPENED_MAX) opened.delete(opened.keys().next().value!);
    opened.set(stored, secret);
  }
  return secret;
}

/** The secrets that sign a message now, opened from a stored row: the current one, and the rolled one while it lives. */
export const liveSecrets = (row: Pick<WebhookEndpointRow, 'secret' | 'old_secret' | 'old_secret_expires_at'>, now = Date.now()): string[] =>
  (row.old_secret && row.old_secret_expires_at && Date.parse(row.old_secret_expires_at) > now ? [row.secret, row.old_secret] : [row.secret])
    .map(openSealed);

// ---- recording messages, in the transaction of the write that causes them ------------------------

/**
 * The job kind of webhook deliveries (src/webhooks/job.ts runs it): one job per message, due at its
 * next attempt (store/jobs.ts keeps that time, the one schedule).
 */
export const WEBHOOK_JOB = 'webhook';

/** A recorded message as its delivery job needs it. */
export interface QueuedMessage { seq: number | string; id: string; endpoint_id: number; owner_id: number }

/**
 * Queues the delivery of recorded messages, as jobs of the one job queue (src/jobs/README.md), in the
 * caller's transaction: fair between entities, at most ENDPOINT_CONCURRENCY in flight per endpoint
 * (its group). `reschedule`: a message sent again (Retry) whose job may still be queued.
 */
export function* enqueueDeliveries(messages: readonly QueuedMessage[], at: string, existing: 'keep' | 'reschedule' = 'keep'): Work<void> {
  for (const message of messages) {
    yield* enqueue({ name: WEBHOOK_JOB }, {
      key: message.id, entityId: Number(message.owner_id), group: String(message.endpoint_id),
      payload: { seq: Number(message.seq) }, dueAt: at, at, existing,
    });
  }
}

/** A new message's `webhook-id`, made by the statement itself when it records several at once. */
const newId = (db: Db): RawBuilder<string> => (isPostgres(db)
  ? sql<string>`'msg_' || replace(cast(gen_random_uuid() as text), '-', '')`
  : sql<string>`'msg_' || lower(hex(randomblob(16)))`);

/** Whether an endpoint `w` takes messages of `type`: it is enabled and subscribed to it (or to `*`). */
const takes = (type: RawBuilder<unknown> | Param<string>) => sql`w.enabled = 1
  and (w.events = '*' or position(' ' || ${type} || ' ' in ' ' || w.events || ' ') > 0)`;
/** SQLite has no `position`; `instr` takes its arguments the other way round. */
const takesSqlite = (type: RawBuilder<unknown> | Param<string>) => sql`w.enabled = 1
  and (w.events = '*' or instr(' ' || w.events || ' ', ' ' || ${type} || ' ') > 0)`;
const subscribed = (db: Db, type: RawBuilder<unknown> | Param<string>) => (isPostgres(db) ? takes(type) : takesSqlite(type));

/** The SQL type of a changelog entry's message, from its `entity_type` and `action` columns (`e.`). */
export const CHANGE_TYPE_SQL = sql`e.entity_type || '.' || case e.action when 'create' then 'created' when 'delete' then 'deleted' else 'updated' end`;

/** PostgreSQL: whether the owner has an enabled endpoint, as a condition (one probe of webhook_endpoints_owner). */
export const enabledEndpointExists = (ownerId: Param<number>): RawBuilder<boolean> => sql<boolean>`exists (
  select 1 from webhook_endpoints w where w.owner_id = ${ownerId} and w.enabled = 1)`;

/**
 * PostgreSQL: `messagesOfEntries` and its jobs left out, for a statement that writes nothing when the
 * owner has an enabled endpoint (`enabledEndpointExists`): the same `hooks` CTE, empty.
 */
export const noMessagesClause = sql`hooks as (select cast(null as bigint) as seq where false)`;

/**
 * PostgreSQL: the part of a write's statement (src/store/changelog.ts) that records a message for
 * every entry in `entries` (a CTE of the inserted changelog rows) and every endpoint subscribed to
 * its type: a CTE to put after `entries`. Artist entries make none.
 */
export const messagesOfEntries = (ownerId: Param<number>, at: Param<string>): RawBuilder<unknown> => sql`
  hooks as (
    insert into webhook_messages (id, endpoint_id, owner_id, type, change_id, record_kind, record_id, status, attempts, created_at)
    select 'msg_' || replace(cast(gen_random_uuid() as text), '-', ''), w.id, ${ownerId}, t.type, e.id, e.entity_type, e.record_id,
      'pending', 0, ${at}
    from entries e
    cross join lateral (select ${CHANGE_TYPE_SQL} as type) t
    join webhook_endpoints w on w.owner_id = ${ownerId} and ${takes(sql.ref('t.type'))}
    where e.entity_type in ('artwork', 'event', 'profile')
    order by e.id, w.id
    returning seq, id, endpoint_id, owner_id)`;

/** PostgreSQL: the delivery jobs of the messages `messagesOfEntries` recorded (as `enqueueDeliveries` queues them), more CTEs after it. */
export const deliveryJobsOfEntries = (ownerId: Param<number>, at: Param<string>): RawBuilder<unknown> => jobsOfClause(WEBHOOK_JOB, 'hooks', ownerId, at, {
  key: sql.ref('id'), group: sql`cast(endpoint_id as text)`, payload: sql`'{"seq":' || seq || '}'`,
});

interface EntryMessage { ownerId: number; changeId: number; type: string; kind: string; recordId: number; at: string }

/** SQLite: the messages of one changelog entry, one per subscribed endpoint. */
const insertEntryMessages = statement((db, p: Params<EntryMessage>) => rawQuery<QueuedMessage>(db, sql`
  insert into webhook_messages (id, endpoint_id, owner_id, type, change_id, record_kind, record_id, status, attempts, created_at)
  select ${newId(db)}, w.id, ${p.ownerId}, ${p.type}, ${p.changeId}, ${p.kind}, ${p.recordId}, 'pending', 0, ${p.at}
  from webhook_endpoints w where w.owner_id = ${p.ownerId} and ${subscribed(db, p.type)}
  order by w.id
  returning seq, id, endpoint_id, owner_id`));

const anyEnabled = statement((db, p: Params<{ ownerId: number }>) => db.selectFrom('webhook_endpoints').select('id')
  .where('owner_id', '=', p.ownerId).where('enabled', '=', 1).limit(1));

/** SQLite: whether the owner has an enabled endpoint at all (most writes then record nothing more). */
export function* hasEnabledEndpoint(ownerId: number): Work<boolean> {
  return (yield* first(anyEnabled, { ownerId })) !== undefined;
}

/** SQLite: the messages of a changelog entry just inserted with id `changeId`. */
export function* recordEntryMessages(ownerId: number, changeId: number, type: string, kind: string, recordId: number, at: string): Work<void> {
  yield* enqueueDeliveries(yield* all(insertEntryMessages, { ownerId, changeId, type, kind, recordId, at }), at);
}

/**
 * An image's new state: `image.ready` or `image.failed` for every record using the URL, to the
 * endpoints of each record's entity subscribed to it. A URL is used by few records.
 */
const insertImageMessages = statement((db, p: Params<{ url: string; type: string; at: string }>) => rawQuery<QueuedMessage>(db, sql`
  insert into webhook_messages (id, endpoint_id, owner_id, type, record_kind, record_id, image_url, status, attempts, created_at)
  select ${newId(db)}, w.id, r.entity_id, ${p.type}, r.kind, r.id, ${p.url}, 'pending', 0, ${p.at}
  from (select 'artwork' as kind, id, entity_id from artworks where image_url = ${p.url}
    union all select 'event' as kind, id, entity_id from events where image_url = ${p.url}) r
  join webhook_endpoints w on w.owner_id = r.entity_id and ${subscribed(db, p.type)}
  order by r.kind, r.id, w.id
  returning seq, id, endpoint_id, owner_id`));

export function* recordImageMessages(url: string, status: 'ready' | 'failed', at: string): Work<void> {
  yield* enqueueDeliveries(yield* all(insertImageMessages, { url, type: `image.${status}`, at }), at);
}

/** A message whose body's `data` is known when it is recorded (feed runs), to every subscribed endpoint. */
const insertDataMessages = statement((db, p: Params<{ ownerId: number; type: string; data: string; at: string }>) => rawQuery<QueuedMessage>(db, sql`
  insert into webhook_messages (id, endpoint_id, owner_id, type, data, status, attempts, created_at)
  select ${newId(db)}, w.id, ${p.ownerId}, ${p.type}, ${p.data}, 'pending', 0, ${p.at}
  from webhook_endpoints w where w.owner_id = ${p.ownerId} and ${subscribed(db, p.type)}
  order by w.id
  returning seq, id, endpoint_id, owner_id`));

/**
 * A feed run's outcome (`feed.run.completed` for applied or unchanged, `feed.run.failed` for failed
 * or needs_attention), in the transaction that saves it: `data` is `{"feed_id", "run"}`.
 */
export function* recordFeedRunMessages(ownerId: number, feedId: number, run: unknown, type: 'feed.run.completed' | 'feed.run.failed', at: string): Work<void> {
  yield* enqueueDeliveries(yield* all(insertDataMessages, { ownerId, type, data: JSON.stringify({ feed_id: feedId, run }), at }), at);
}

const insertTestMessage = statement((db, p: Params<{ id: string; endpointId: number; ownerId: number; at: string }>) => db.insertInto('webhook_messages').values({
  id: p.id, endpoint_id: p.endpointId, owner_id: p.ownerId, type: sql.lit('webhook.test'), data: sql.lit('{}'), status: sql.lit('pending'),
  attempts: sql.lit(0), created_at: p.at,
}).returningAll());

/** `webhook.test` to one endpoint, whatever its types. */
export function sendTestMessage(db: Db, ownerId: number, endpointId: number, check?: EndpointCheck): Promise<WebhookMessageRow> {
  return transaction(db, function* () {
    const endpoint = yield* first(endpointById, { ownerId, id: endpointId });
    if (!endpoint) throw notFound('Webhook endpoint');
    check?.(endpoint);
    const at = nowIso();
    const message = (yield* first(insertTestMessage, { id: messageId(), endpointId, ownerId, at }))!;
    yield* enqueueDeliveries([message], at);
    return message;
  });
}

// ---- the message log ----------------------------------------------------------------------------

export const MESSAGES_PAGE_MAX = 100;

const messagesPage = statementPerPageSize<{ endpointId: number; before: number }, WebhookMessageRow>(MESSAGES_PAGE_MAX + 1,
  (db, p, limit) => db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', p.endpointId).where('seq', '<', p.before)
    .orderBy('seq', 'desc').limit(sql.lit(limit)));

// A message has at most 8 attempts per schedule; a page's attempts are bounded by its size.
const attemptsOf = statement((db, p: Params<{ first: number; last: number; endpointId: number }>) => db.selectFrom('webhook_attempts')
  .innerJoin('webhook_messages', 'webhook_messages.seq', 'webhook_attempts.message_seq')
  .selectAll('webhook_attempts')
  .where('webhook_messages.endpoint_id', '=', p.endpointId)
  .where('webhook_attempts.message_seq', '>=', p.first).where('webhook_attempts.message_seq', '<=', p.last)
  .orderBy('webhook_attempts.id').limit(sql.lit(MESSAGES_PAGE_MAX * 40)));

export interface MessagePage {
  messages: Array<WebhookMessageRow & { attemptRows: WebhookAttemptRow[] }>;
  hasMore: boolean;
  nextAfter: number | null;
}

/** An endpoint's messages, newest first, by cursor (`after`: the `next_after` of the page before). */
export async function listMessages(db: Db, ownerId: number, endpointId: number, { after, limit }: { after?: number | undefined; limit: number }): Promise<MessagePage> {
  return read(db, function* () {
    if (!(yield* first(endpointById, { ownerId, id: endpointId }))) throw notFound('Webhook endpoint');
    const rows = yield* all(messagesPage(limit + 1), { endpointId, before: after ?? Number.MAX_SAFE_INTEGER });
    const page = rows.slice(0, limit);
    const attempts = page.length === 0 ? [] : yield* all(attemptsOf, { endpointId, first: Number(page.at(-1)!.seq), last: Number(page[0]!.seq) });
    const bySeq = new Map<number, WebhookAttemptRow[]>();
    for (const attempt of attempts) {
      const seq = Number(attempt.message_seq);
      bySeq.set(seq, [...(bySeq.get(seq) ?? []), attempt]);
    }
    return {
      messages: page.map((row) => ({ ...row, attemptRows: bySeq.get(Number(row.seq)) ?? [] })),
      hasMore: rows.length > limit,
      nextAfter: rows.length > limit ? Number(page.at(-1)!.seq) : null,
    };
  });
}

const messageOf = statement((db, p: Params<{ endpointId: number; id: string }>) => db.selectFrom('webhook_messages').selectAll()
  .where('endpoint_id', '=', p.endpointId).where('id', '=', p.id));
const requeue = statement((db, p: Params<{ seq: number }>) => db.updateTable('webhook_messages')
  .set({ status: 'pending', attempts: 0 }).where('seq', '=', p.seq).returningAll());

/** Retry: the message is pending again, due now, with a fresh retry schedule. */
export function retryMessage(db: Db, ownerId: number, endpointId: number, id: string, check?: EndpointCheck): Promise<WebhookMessageRow> {
  return transaction(db, function* () {
    const endpoint = yield* first(endpointById, { ownerId, id: endpointId });
    if (!endpoint) throw notFound('Webhook endpoint');
    check?.(endpoint);
    const message = yield* first(messageOf, { endpointId, id });
    if (!message) throw notFound('Message');
    const at = nowIso();
    const requeued = (yield* first(requeue, { seq: Number(message.seq) }))!;
    yield* enqueueDeliveries([requeued], at, 'reschedule');
    return requeued;
  });
}

// ---- delivery ----------------------------------------------------------------------------------

/** What an attempt reads of its endpoint: where to send, whether it may, and the secrets that sign. */
export type EndpointToSend = Pick<WebhookEndpointRow, 'url' | 'enabled' | 'secret' | 'old_secret' | 'old_secret_expires_at'>;

/**
 * A message and its endpoint in one read (they were two of a delivery's five reads, in a row:
 * docs/performance.md, Webhooks); the endpoint's columns are prefixed, none when it was deleted.
 */
const messageWithEndpoint = statement((db, p: Params<{ seq: number }>) => db.selectFrom('webhook_messages as m')
  .leftJoin('webhook_endpoints as w', 'w.id', 'm.endpoint_id')
  .selectAll('m')
  .select(['w.id as endpoint_found', 'w.url as endpoint_url', 'w.enabled as endpoint_enabled', 'w.secret as endpoint_secret',
    'w.old_secret as endpoint_old_secret', 'w.old_secret_expires_at as endpoint_old_secret_expires_at'])
  .where('m.seq', '=', p.seq));

/** A message to attempt, with its endpoint (undefined once the endpoint is deleted). */
export async function messageToSend(db: Db, seq: number): Promise<{ message: WebhookMessageRow; endpoint: EndpointToSend | undefined } | undefined> {
  const row = await read(db, () => first(messageWithEndpoint, { seq }));
  if (!row) return undefined;
  const {
    endpoint_found: found, endpoint_url: url, endpoint_enabled: enabled, endpoint_secret: secret,
    endpoint_old_secret: oldSecret, endpoint_old_secret_expires_at: oldExpires, ...message
  } = row;
  const endpoint = found === null || url === null || enabled === null || secret === null ? undefined
    : { url, enabled, secret, old_secret: oldSecret, old_secret_expires_at: oldExpires };
  return { message, endpoint };
}

export interface AttemptOutcome {
  at: string;
  statusCode: number | null;
  durationMs: number;
  response: string | null;
  error: string | null;
  ok: boolean;
}

const insertAttempt = statement((db, p: Params<Omit<WebhookAttemptRow, 'id'>>) => db.insertInto('webhook_attempts').values({
  message_seq: p.message_seq, at: p.at, status_code: p.status_code, duration_ms: p.duration_ms, response: p.response, error: p.error,
}));
// The next attempt's time is the message's job's (store/jobs.ts): the runner sets it from `Settled`.
// `data`: the body made by this attempt, kept unless one was (null: none made, the kept one sent).
const settleMessage = statement((db, p: Params<{ seq: number; status: string; attempts: number; was: number; data: string | null }>) => db.updateTable('webhook_messages')
  .set({ status: sql`${p.status}`, attempts: p.attempts, data: sql<string>`coalesce(data, ${p.data})` })
  .where('seq', '=', p.seq).where('status', '=', 'pending').where('attempts', '=', p.was).returning('seq'));
const endpointSucceeded = statement((db, p: Params<{ id: number }>) => db.updateTable('webhook_endpoints').set({ failing_since: null })
  .where('id', '=', p.id).where('failing_since', 'is not', null));
const endpointFailed = statement((db, p: Params<{ id: number; at: string }>) => db.updateTable('webhook_endpoints')
  .set({ failing_since: sql`coalesce(failing_since, ${p.at})` }).where('id', '=', p.id).returning(['failing_since', 'enabled']));
const disableEndpoint = statement((db, p: Params<{ id: number; reason: string; at: string }>) => db.updateTable('webhook_endpoints')
  .set({ enabled: 0, disabled_reason: p.reason, updated_at: p.at }).where('id', '=', p.id).where('enabled', '=', 1));

/**
 * PostgreSQL, a delivered attempt: `insertAttempt`, `settleMessage` and `endpointSucceeded` in one
 * statement (they were three round trips of every delivery, in its job's end: docs/performance.md,
 * Webhooks). Its rows: the message's seq when this attempt settled it.
 */
const recordDelivered = statement((db, p: Params<{ seq: number; at: string; statusCode: number | null; durationMs: number; response: string | null; attempts: number; was: number; endpointId: number; data: string | null }>) =>
  rawQuery<{ seq: number }>(db, sql`
    with attempt as (
      insert into webhook_attempts (message_seq, at, status_code, duration_ms, response, error)
      values (${p.seq}, ${p.at}, ${p.statusCode}, ${p.durationMs}, ${p.response}, null)),
    settled as (
      update webhook_messages set status = 'delivered', attempts = ${p.attempts}, data = coalesce(data, cast(${p.data} as text))
      where seq = ${p.seq} and status = 'pending' and attempts = ${p.was} returning seq),
    cleared as (update webhook_endpoints set failing_since = null where id = ${p.endpointId} and failing_since is not null)
    select seq from settled`));

export interface Settled {
  status: 'pending' | 'delivered' | 'failed';
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  /** The endpoint was disabled by this failure. */
  disabled: boolean;
  /** False when the message was settled by another attempt meanwhile (this outcome is only logged). */
  applied: boolean;
}

/** What an attempt leads to: delivered, due again after the schedule's next delay, or failed. */
export function settlement(attemptsBefore: number, outcome: Pick<AttemptOutcome, 'at' | 'ok'>, endpointGone = false): Pick<Settled, 'status' | 'nextAttemptAt'> {
  const delay = outcome.ok || endpointGone ? null : retryDelay(attemptsBefore + 1);
  return {
    status: outcome.ok ? 'delivered' : delay === null ? 'failed' : 'pending',
    nextAttemptAt: delay === null ? null : new Date(Date.parse(outcome.at) + delay).toISOString(),
  };
}

/**
 * Records an attempt of a message and what follows (`settlement`), as a step of the caller's
 * transaction (the delivery job's end, src/webhooks/job.ts), with `data`, the body the attempt made
 * (its first), kept for the attempts after it unless one is kept already. A failure while the endpoint has had no
 * success for 5 days disables it.
 */
export function* recordAttemptStep(
  message: Pick<WebhookMessageRow, 'seq' | 'endpoint_id' | 'attempts'>, outcome: AttemptOutcome,
  { endpointGone = false, postgres = false, data = null }: { endpointGone?: boolean; postgres?: boolean; data?: string | null } = {},
): Work<Settled> {
  const seq = Number(message.seq);
  if (postgres && outcome.ok) {
    const settled = yield* first(recordDelivered, {
      seq, at: outcome.at, statusCode: outcome.statusCode, durationMs: outcome.durationMs, response: outcome.response,
      attempts: message.attempts + 1, was: message.attempts, endpointId: message.endpoint_id, data,
    });
    return { status: 'delivered', nextAttemptAt: null, disabled: false, applied: settled !== undefined };
  }
  yield* all(insertAttempt, {
    message_seq: seq, at: outcome.at, status_code: outcome.statusCode, duration_ms: outcome.durationMs, response: outcome.response, error: outcome.error,
  });
  const { status, nextAttemptAt } = settlement(message.attempts, outcome, endpointGone);
  const applied = (yield* first(settleMessage, { seq, status, attempts: message.attempts + 1, was: message.attempts, data })) !== undefined;
  let disabled = false;
  if (outcome.ok) yield* all(endpointSucceeded, { id: message.endpoint_id });
  else if (!endpointGone) {
    const streak = yield* first(endpointFailed, { id: message.endpoint_id, at: outcome.at });
    if (streak?.failing_since && streak.enabled === 1 && Date.parse(outcome.at) - Date.parse(streak.failing_since) >= FAILING_DISABLE_MS) {
      yield* all(disableEndpoint, { id: message.endpoint_id, reason: `every message failed for 5 days (last: ${outcome.error ?? `HTTP ${outcome.statusCode}`})`, at: outcome.at });
      disabled = true;
    }
  }
  return { status, nextAttemptAt, disabled, applied };
}

/** `recordAttemptStep` as a transaction of its own. */
export function recordAttempt(db: Db, message: Pick<WebhookMessageRow, 'seq' | 'endpoint_id' | 'attempts'>, outcome: AttemptOutcome, endpointGone = false): Promise<Settled> {
  return transaction(db, () => recordAttemptStep(message, outcome, { endpointGone, postgres: isPostgres(db) }));
}

const failPending = statement((db, p: Params<{ seq: number }>) => db.updateTable('webhook_messages')
  .set({ status: 'failed' }).where('seq', '=', p.seq).where('status', '=', 'pending'));
const insertNote = statement((db, p: Params<{ seq: number; at: string; error: string }>) => db.insertInto('webhook_attempts').values({
  message_seq: p.seq, at: p.at, status_code: null, duration_ms: sql.lit(0), response: null, error: p.error,
}));

/** A message whose delivery the job queue gave up (its processes kept dying): failed, with the reason in its log. */
export function* failMessage(seq: number, error: string, at: string): Work<void> {
  yield* all(insertNote, { seq, at, error });
  yield* all(failPending, { seq });
}

// ---- retention ----------------------------------------------------------------------------------

const SWEEP_BATCH = 500;
const oldMessages = statement((db, p: Params<{ before: string }>) => db.selectFrom('webhook_messages').select('seq')
  .where('created_at', '<', p.before).orderBy('created_at').limit(sql.lit(SWEEP_BATCH)));
const dropAttempts = statement((db, p: Params<{ first: number; last: number; before: string }>) => db.deleteFrom('webhook_attempts')
  .where('message_seq', 'in', db.selectFrom('webhook_messages').select('seq').where('seq', '>=', p.first).where('seq', '<=', p.last).where('created_at', '<', p.before)));
const dropMessages = statement((db, p: Params<{ first: number; last: number; before: string }>) => db.deleteFrom('webhook_messages')
  .where('seq', '>=', p.first).where('seq', '<=', p.last).where('created_at', '<', p.before));

/** Removes messages older than 30 days with their attempts, a bounded batch at a time; the number removed. */
export async function sweepMessages(db: Db, now = Date.now()): Promise<number> {
  const before = new Date(now - MESSAGE_RETENTION_MS).toISOString();
  let removed = 0;
  for (;;) {
    const seqs = (await read(db, () => all(oldMessages, { before }))).map((row) => Number(row.seq));
    if (seqs.length === 0) return removed;
    const range = { first: Math.min(...seqs), last: Math.max(...seqs), before };
    await transaction(db, function* () {
      yield* all(dropAttempts, range);
      yield* all(dropMessages, range);
    });
    removed += seqs.length;
    if (seqs.length < SWEEP_BATCH) return removed;
  }
}

// ---- what a message's body names ----------------------------------------------------------------

const changeById = statement((db, p: Params<{ ownerId: number; id: number }>) => db.selectFrom('changelog').selectAll()
  .where('owner_id', '=', p.ownerId).where('id', '=', p.id));

/** The changelog entry a record message names (undefined if it was removed). */
export const changeOfMessage = (db: Db, ownerId: number, changeId: number) => read(db, () => first(changeById, { ownerId, id: changeId }));
