import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { allOrNothing, index, keys } from './kit.js';

/**
 * Webhooks (docs/api.md, Webhooks).
 *
 * - `webhook_endpoints`: an entity's receivers (at most 10). `events` is `*` or the subscribed types,
 *   space-separated, so the write's own statement can match them. `secret` signs; while a rolled
 *   secret's old value lives, `old_secret` signs too, until `old_secret_expires_at`. `failing_since`:
 *   the first failed message since the last delivered one (5 days of it disable the endpoint).
 * - `webhook_messages`: one per endpoint and event, recorded in the transaction of the write that
 *   caused it. `id` is the `webhook-id` it is sent with; `seq` orders the log (newest first, cursor).
 *   A record type names its changelog entry (`change_id`) and record; `data` is the JSON `data` of
 *   the body once made (at the first attempt, or at once for types that carry it), so every retry
 *   sends the same body.
 * - `webhook_attempts`: every attempt of a message, for the log.
 */
export function webhooks(dialect: Dialect): Migration {
  return {
    up: allOrNothing(dialect, (db) => create(db, dialect)),
    async down(db: Kysely<any>) {
      for (const table of ['webhook_attempts', 'webhook_messages', 'webhook_endpoints']) await db.schema.dropTable(table).ifExists().execute();
    },
  };
}

async function create(db: Kysely<any>, dialect: Dialect): Promise<void> {
  const { serial, bigSerial, bigint, pk } = keys(dialect);
  await db.schema.createTable('webhook_endpoints')
    .addColumn('id', serial, pk)
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('old_secret', 'text')
    .addColumn('old_secret_expires_at', 'text')
    .addColumn('failing_since', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await index(db, 'webhook_endpoints_owner', 'webhook_endpoints', ['owner_id', 'enabled']).execute();
  await db.schema.createTable('webhook_messages')
    .addColumn('seq', bigSerial, pk)
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('endpoint_id', 'integer', (c) => c.notNull())
    .addColumn('owner_id', 'integer', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('change_id', bigint)
    .addColumn('record_kind', 'text')
    .addColumn('record_id', 'integer')
    .addColumn('image_url', 'text')
    .addColumn('data', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await index(db, 'webhook_messages_endpoint', 'webhook_messages', ['endpoint_id', 'seq']).execute();
  await index(db, 'webhook_messages_created', 'webhook_messages', ['created_at']).execute();
  await index(db, 'webhook_messages_due', 'webhook_messages', ['next_attempt_at'])
    .where(sql.ref('status'), '=', 'pending').execute();
  await db.schema.createTable('webhook_attempts')
    .addColumn('id', bigSerial, pk)
    .addColumn('message_seq', bigint, (c) => c.notNull())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response', 'text')
    .addColumn('error', 'text')
    .execute();
  await index(db, 'webhook_attempts_message', 'webhook_attempts', ['message_seq', 'id']).execute();
}
