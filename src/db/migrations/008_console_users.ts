import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { Dialect } from '../connect.js';
import { index, keys } from './kit.js';

/**
 * The gallery console (docs/console.md): its users, their server-side sessions, the sign-in failures
 * that lock an email, and each entity's plan (the highest key tier its console may create).
 *
 * - `users.email` is unique platform-wide (one email belongs to one entity), stored lower-case.
 * - Secrets are stored as hashes only: the password (scrypt, src/domain/passwords.ts), the invite
 *   token and the session id (SHA-256: both are 256-bit random values, a slow hash adds nothing).
 * - The changelog gets an index by record, for the history on a record's page.
 * - `login_failures` is keyed by the SHA-256 of the lower-cased email, known or not, so that typing
 *   errors of strangers are not kept in clear.
 */
export function consoleUsers(dialect: Dialect): Migration {
  const { serial, pk } = keys(dialect);
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('entities').addColumn('plan', 'text', (c) => c.notNull().defaultTo('subscriber')).execute();
      await db.schema.createTable('users')
        .addColumn('id', serial, pk)
        .addColumn('entity_id', 'integer', (c) => c.notNull().references('entities.id'))
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('invite_hash', 'text', (c) => c.unique())
        .addColumn('invite_expires_at', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();
      await index(db, 'users_entity', 'users', ['entity_id']).execute();
      await db.schema.createTable('sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'integer', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_seen_at', 'text', (c) => c.notNull())
        .execute();
      await index(db, 'sessions_user', 'sessions', ['user_id']).execute();
      // A record's page shows its history: the record's entries without walking the entity's changelog.
      await index(db, 'changelog_owner_record', 'changelog', ['owner_id', 'entity_type', 'record_id', 'id']).execute();
      await db.schema.createTable('login_failures')
        .addColumn('email_hash', 'text', (c) => c.primaryKey())
        .addColumn('failures', 'integer', (c) => c.notNull())
        .addColumn('window_start', 'text', (c) => c.notNull())
        .addColumn('locked_until', 'text')
        .execute();
    },
    async down(db: Kysely<any>) {
      await db.schema.dropTable('login_failures').execute();
      await db.schema.dropIndex('changelog_owner_record').execute();
      await db.schema.dropTable('sessions').execute();
      await db.schema.dropTable('users').execute();
      await db.schema.alterTable('entities').dropColumn('plan').execute();
    },
  };
}
