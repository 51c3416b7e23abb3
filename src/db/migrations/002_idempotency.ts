import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { index, keys } from './kit.js';

/** Idempotency-Key records: the first final answer to a request, replayed for 24 hours. */
export function idempotency(dialect: Dialect): Migration {
  const { bigSerial, pk } = keys(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.createTable('idempotency_keys')
        .addColumn('id', bigSerial, pk)
        .addColumn('api_key_id', 'integer', (c) => c.notNull().references('api_keys.id'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('request_hash', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('status', 'integer')
        .addColumn('body', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('locked_until', 'text', (c) => c.notNull())
        .addUniqueConstraint('idempotency_keys_key', ['api_key_id', 'key'])
        .execute();
      await index(db, 'idempotency_keys_created', 'idempotency_keys', ['created_at']).execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('idempotency_keys').execute();
    },
  };
}
