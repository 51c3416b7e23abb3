import { Migrator, type MigrationResultSet } from 'kysely';
import type { DatabaseHandle } from './connect.js';
import { initial } from './migrations/001_initial.js';
import { idempotency } from './migrations/002_idempotency.js';
import { entityStats } from './migrations/003_entity_stats.js';

/** Applies every pending migration; throws (so `serve` and `migrate` fail) when one fails. */
export async function migrateToLatest({ db, dialect }: DatabaseHandle): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => ({ '001_initial': initial(dialect), '002_idempotency': idempotency(dialect), '003_entity_stats': entityStats }) },
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  if (result.error) {
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${String((result.error as Error).message ?? result.error)}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
