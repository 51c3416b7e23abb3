import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { index } from './kit.js';

/**
 * Bounds on console sign-in (docs/deploy.md, Sign-in limits):
 * - `sign_in_addresses` counts every sign-in attempt per client address (SHA-256 of the address, as
 *   `login_failures` keeps emails), at most 20 per 15-minute window, shared by every process.
 * - `login_failures` rows are now keyed by the SHA-256 of email and address together (no column
 *   changes): a stranger's wrong passwords lock that email only from the stranger's address.
 * - Both are purged once their window has passed, by `window_start`: these indexes keep the purge from
 *   reading every row.
 */
export const signInLimits: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.createTable('sign_in_addresses')
      .addColumn('address_hash', 'text', (c) => c.primaryKey())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('window_start', 'text', (c) => c.notNull())
      .execute();
    await index(db, 'sign_in_addresses_window', 'sign_in_addresses', ['window_start']).execute();
    await index(db, 'login_failures_window', 'login_failures', ['window_start']).execute();
  },
  async down(db: Kysely<any>) {
    await db.schema.dropIndex('login_failures_window').execute();
    await db.schema.dropTable('sign_in_addresses').execute();
  },
};
