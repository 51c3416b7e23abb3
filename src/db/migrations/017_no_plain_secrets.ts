import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { withoutShownSecret } from '../../domain/keys.js';

const CHUNK = 500;

/**
 * Answers kept for idempotent replays no longer hold the secret they showed (docs/api.md, Retries and
 * idempotency; docs/operations.md, Secrets at rest): every stored body with a `secret` gets it as
 * `null` with `secret_shown: false`, as new answers are kept. Bodies without one are left as they are,
 * so a run cut short is simply run again. Down has nothing to restore: the secrets are gone.
 */
export const noPlainSecrets: Migration = {
  async up(db: Kysely<any>) {
    let after = 0;
    for (;;) {
      const rows = await db.selectFrom('idempotency_keys').select(['id', 'body'])
        .where('id', '>', after).where('body', 'like', '%"secret"%').orderBy('id').limit(CHUNK).execute() as { id: number; body: string }[];
      for (const row of rows) {
        const body = withoutShownSecret(row.body);
        if (body !== row.body) await db.updateTable('idempotency_keys').set({ body }).where('id', '=', row.id).execute();
      }
      if (rows.length < CHUNK) return;
      after = Number(rows[rows.length - 1]!.id);
    }
  },
  async down() {
    // The secrets scrubbed are not kept anywhere to put back.
  },
};
