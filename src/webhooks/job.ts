import type { Db } from '../db/types.js';
import { ATTEMPT_TIMEOUT_MS, ENDPOINT_CONCURRENCY } from '../domain/webhooks.js';
import { KeptConnections } from '../fetch/index.js';
import type { JobKind } from '../jobs/index.js';
import { WEBHOOK_JOB, failMessage } from '../store/webhooks.js';
import { attemptMessage } from './deliver.js';
import { guardedPost } from './post.js';

export interface WebhookJobOptions {
  db: Db;
  /** Deliveries at once in this process (WEBHOOK_CONCURRENCY); 0: this process delivers none. */
  concurrency: number;
  /** The service's public base URL, read per message (`image` links). */
  publicBaseUrl: () => string;
  /** Which addresses a delivery may connect to (public ones, unless FETCH_ALLOW_PRIVATE). */
  allowAddress: (address: string) => boolean;
}

/**
 * Connections kept to receivers between messages (src/fetch/kept.ts): as many per endpoint origin as
 * an endpoint has requests in flight; closed after 4 s unused, under the 5 s after which a Node.js
 * server closes an idle one (its default), so a receiver seldom closes one as it is reused. An endpoint
 * disabled, deleted or moved has its connections closed so, in every process.
 */
const KEPT = { perOrigin: ENDPOINT_CONCURRENCY, idleMs: 4_000, origins: 64 };

/**
 * Webhook deliveries as jobs of the one job queue (src/jobs/README.md): a job per message, its
 * endpoint its group, so at most ENDPOINT_CONCURRENCY requests are in flight per endpoint across every
 * process and a slow receiver holds only its own endpoint's slots; entities take turns. A run is one
 * attempt (src/webhooks/deliver.ts); the message's retry schedule says when the job runs again.
 */
export function webhookJobKind({ db, concurrency, publicBaseUrl, allowAddress }: WebhookJobOptions): JobKind<{ seq: number }> {
  const connections = new KeptConnections(allowAddress, KEPT);
  return {
    name: WEBHOOK_JOB,
    concurrency,
    groupCap: ENDPOINT_CONCURRENCY,
    // The attempt's own limit is 10 s; the margin covers recording its outcome.
    timeoutMs: ATTEMPT_TIMEOUT_MS + 5_000,
    async run(job, { signal }) {
      const attempted = await attemptMessage({ db, publicBaseUrl: publicBaseUrl(), post: guardedPost(connections, signal) }, job.payload.seq);
      if (!attempted) return { end: 'done' };
      // The attempt is logged in the transaction that ends the job (and takes the next): one
      // transaction fewer per delivery (docs/performance.md, Webhooks); a `log`, kept even if the claim was lost meanwhile
      // (a Retry, a takeover): the attempt happened.
      const log = function* () { yield* attempted.record(); };
      if (attempted.status === 'failed') return { end: 'done', failed: 'every attempt failed', log };
      if (attempted.status !== 'pending' || attempted.nextAttemptAt === null) return { end: 'done', log };
      return { end: 'retry', at: Date.parse(attempted.nextAttemptAt), log };
    },
    giveUp(job, reason) {
      // An attempt past its time: tried again soon (the attempt itself records "timed out").
      if (reason === 'took too long') return { end: 'retry', at: Date.now() + 5_000 };
      return { end: 'done', failed: `delivery abandoned: ${reason}`, record: () => failMessage(job.payload.seq, `delivery abandoned: ${reason}`, new Date().toISOString()) };
    },
  };
}
