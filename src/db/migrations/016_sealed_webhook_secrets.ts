import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import { isSealed, seal, unseal } from '../../secrets/seal.js';

/**
 * Webhook signing secrets stored sealed (AES-256-GCM under the server key, src/secrets/seal.ts;
 * docs/operations.md, Secrets at rest) instead of in clear: every existing endpoint's `secret` and
 * `old_secret` sealed in place. A row already sealed is left as it is, so a run cut short is simply
 * run again. Down opens them (with the same server key).
 */
export const sealedWebhookSecrets: Migration = {
  up: (db) => rewrite(db, (stored) => (isSealed(stored) ? stored : seal(stored))),
  down: (db) => rewrite(db, (stored) => (isSealed(stored) ? unseal(stored) : stored)),
};

async function rewrite(db: Kysely<any>, change: (stored: string) => string): Promise<void> {
  // Endpoints are few (at most 10 per entity): one pass over them, each row its own update.
  const rows = await db.selectFrom('webhook_endpoints').select(['id', 'secret', 'old_secret']).orderBy('id').execute() as
    { id: number; secret: string; old_secret: string | null }[];
  for (const row of rows) {
    const secret = change(row.secret);
    const old = row.old_secret === null ? null : change(row.old_secret);
    if (secret === row.secret && old === row.old_secret) continue;
    await db.updateTable('webhook_endpoints').set({ secret, old_secret: old }).where('id', '=', row.id).execute();
  }
}
