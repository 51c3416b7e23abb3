import type { Db, WebhookMessageRow } from '../db/types.js';
import { ATTEMPT_TIMEOUT_MS, KEPT_RESPONSE_BYTES, RESPONSE_READ_BYTES, signatures } from '../domain/webhooks.js';
import { changelogEntryJson } from '../http-common/changelog-json.js';
import { getArtwork } from '../store/artworks.js';
import { getProfile } from '../store/entities.js';
import { getEvent } from '../store/events.js';
import { imageState } from '../store/images.js';
import { presentArtwork, presentImage, presentRecord } from '../store/present.js';
import { isPostgres } from '../store/sql.js';
import { transaction } from '../db/run.js';
import type { Work } from '../db/work.js';
import { changeOfMessage, liveSecrets, messageToSend, recordAttemptStep, settlement, type AttemptOutcome, type Settled } from '../store/webhooks.js';

/** One POST of a message, as the outgoing fetcher makes it: no redirect followed, addresses checked. */
export interface PostRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The whole attempt, answer included. */
  timeoutMs: number;
  /** The answer is read to this many bytes at most. */
  maxBytes: number;
}

/** The receiver's answer: its status and the first bytes of its body. */
export interface PostAnswer {
  status: number;
  body: Buffer;
}

/** Sends a request; rejects with a one-line message (timed out, address not allowed, connection refused…). */
export type Post = (request: PostRequest) => Promise<PostAnswer>;

export interface DeliveryContext {
  db: Db;
  /** The service's public base URL: the links of an `image` (docs/api.md, Images). */
  publicBaseUrl: string;
  post: Post;
  now?: () => number;
}

/** An attempt made: what follows it, and `record`, its outcome's statements, for the caller's transaction. */
export type Attempted = Pick<Settled, 'status' | 'nextAttemptAt'> & { record: () => Work<Settled> };

/**
 * One attempt of one message (docs/api.md, Webhooks): the body is made once (at the first attempt,
 * kept with its outcome, so every retry sends the same bytes under the same `webhook-id`; a process
 * that died between the POST and its record leaves none kept, and the next attempt makes it again), signed with every live
 * secret at this attempt's time, POSTed, and the outcome recorded with what follows (delivered, due
 * again, failed). Undefined when there is nothing to send (already settled, or gone).
 */
export async function deliverMessage(context: DeliveryContext, seq: number): Promise<Settled | undefined> {
  const attempted = await attemptMessage(context, seq);
  return attempted && transaction(context.db, attempted.record);
}

/**
 * `deliverMessage` up to the outcome, which the caller records (`record`) in a transaction of its own:
 * the delivery job records it in the one that ends the job (src/webhooks/job.ts).
 */
export async function attemptMessage(context: DeliveryContext, seq: number): Promise<Attempted | undefined> {
  const { db } = context;
  const now = context.now ?? Date.now;
  const found = await messageToSend(db, seq);
  if (!found || found.message.status !== 'pending') return undefined;
  const { message, endpoint } = found;
  const startedAt = now();
  if (!endpoint || endpoint.enabled !== 1) {
    const error = endpoint ? 'endpoint disabled' : 'endpoint deleted';
    return attempted(db, message, { at: new Date(startedAt).toISOString(), statusCode: null, durationMs: 0, response: null, error, ok: false }, true);
  }
  // Made at the first attempt and kept by that attempt's record, in the transaction that ends its job
  // (a statement and a flushed commit of its own before the POST were a twelfth of a delivery's round
  // trips: docs/performance.md, Webhooks, "Where a delivery's Node CPU goes"); every later attempt sends it.
  const kept = message.data;
  const data = kept ?? await messageData(context, message);
  const body = `{"type":${JSON.stringify(message.type)},"timestamp":${JSON.stringify(message.created_at)},"data":${data}}`;
  const timestamp = Math.floor(now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'art-catalog-webhooks/1',
    'webhook-id': message.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signatures(liveSecrets(endpoint, now()), message.id, timestamp, body),
  };
  let outcome;
  try {
    const answer = await context.post({ url: endpoint.url, headers, body, timeoutMs: ATTEMPT_TIMEOUT_MS, maxBytes: RESPONSE_READ_BYTES });
    const ok = answer.status >= 200 && answer.status < 300;
    outcome = {
      statusCode: answer.status, ok, response: keptResponse(answer.body),
      error: ok ? null : answer.status >= 300 && answer.status < 400 ? 'redirects are not followed' : `HTTP ${answer.status}`,
    };
  } catch (error) {
    outcome = { statusCode: null, ok: false, response: null, error: oneLine(error) };
  }
  return attempted(db, message, { at: new Date(startedAt).toISOString(), durationMs: Math.max(0, Math.round(now() - startedAt)), ...outcome }, false, kept === null ? data : null);
}

const attempted = (db: Db, message: WebhookMessageRow, outcome: AttemptOutcome, endpointGone = false, data: string | null = null): Attempted => ({
  ...settlement(message.attempts, outcome, endpointGone),
  record: () => recordAttemptStep(message, outcome, { endpointGone, postgres: isPostgres(db), data }),
});

/** The first 1 KB of an answer, as text (a character cut in two is replaced). */
const keptResponse = (body: Buffer): string | null => (body.length === 0 ? null : body.subarray(0, KEPT_RESPONSE_BYTES).toString('utf8'));

const oneLine = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.slice(0, 200);

/**
 * A message's `data`: for a record type the changelog entry and the record as GET shows it (null once
 * deleted), for an image type the record's kind, id and `image`.
 */
async function messageData({ db, publicBaseUrl }: DeliveryContext, message: WebhookMessageRow): Promise<string> {
  if (message.record_kind !== null && message.change_id !== null) {
    // Read side by side: a delivery's reads are in series with its endpoint's few places in flight, so
    // each round trip in a row is time a place is held (docs/performance.md, Webhooks).
    const [change, record] = await Promise.all([
      changeOfMessage(db, message.owner_id, Number(message.change_id)),
      message.type.endsWith('.deleted') ? null : currentRecord(db, publicBaseUrl, message.owner_id, message.record_kind, Number(message.record_id)),
    ]);
    return `{"change":${change ? changelogEntryJson(change) : 'null'},"record":${JSON.stringify(record)}}`;
  }
  if (message.record_kind !== null && message.image_url !== null) {
    const image = presentImage(await imageState(db, message.image_url), publicBaseUrl);
    return JSON.stringify({ kind: message.record_kind, id: Number(message.record_id), image });
  }
  return '{}';
}

async function currentRecord(db: Db, base: string, ownerId: number, kind: string, id: number): Promise<unknown> {
  try {
    if (kind === 'profile') return await getProfile(db, ownerId);
    return kind === 'artwork' ? await presentArtwork(db, base, await getArtwork(db, ownerId, id)) : await presentRecord(db, base, await getEvent(db, ownerId, id));
  } catch (error) {
    // Deleted since the write: the record is gone.
    if ((error as { code?: string }).code === 'not_found') return null;
    throw error;
  }
}
