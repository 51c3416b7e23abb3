import { Migrator, type MigrationResultSet } from 'kysely/migration';
import type { DatabaseHandle } from './connect.js';
import { connectionProblem, isConnectTimeout } from './errors.js';
import { initial } from './migrations/001_initial.js';
import { idempotency } from './migrations/002_idempotency.js';
import { entityStats } from './migrations/003_entity_stats.js';
import { artworkPositions } from './migrations/004_artwork_positions.js';
import { externalIdSlugV2 } from './migrations/005_external_id_slug_v2.js';
import { parallelWrites } from './migrations/006_parallel_writes.js';
import { images } from './migrations/007_images.js';
import { consoleUsers } from './migrations/008_console_users.js';
import { textSearch } from './migrations/009_text_search.js';
import { entityImages } from './migrations/010_entity_images.js';
import { jobs } from './migrations/011_jobs.js';
import { artData } from './migrations/012_art_data.js';
import { feeds } from './migrations/013_feeds.js';
import { webhooks } from './migrations/014_webhooks.js';
import { signInLimits } from './migrations/015_sign_in_limits.js';
import { sealedWebhookSecrets } from './migrations/016_sealed_webhook_secrets.js';
import { noPlainSecrets } from './migrations/017_no_plain_secrets.js';
import { galleryWords } from './migrations/018_gallery_words.js';
import { trashAndRuns } from './migrations/019_trash_and_runs.js';
import { oneSchedule } from './migrations/020_one_schedule.js';
import { massDeletes } from './migrations/021_mass_deletes.js';
import { changelogIdConstants } from './migrations/022_changelog_id_constants.js';

/** The schema's history, oldest first; `migrateTo` a name for tests of a migration over old data. */
export function migrator({ db, dialect }: DatabaseHandle): Migrator {
  return new Migrator({
    db,
    provider: {
      getMigrations: async () => ({
        '001_initial': initial(dialect),
        '002_idempotency': idempotency(dialect),
        '003_entity_stats': entityStats,
        '004_artwork_positions': artworkPositions,
        '005_external_id_slug_v2': externalIdSlugV2(dialect),
        '006_parallel_writes': parallelWrites(dialect),
        '007_images': images(dialect),
        '008_console_users': consoleUsers(dialect),
        '009_text_search': textSearch(dialect),
        '010_entity_images': entityImages,
        '011_jobs': jobs(dialect),
        '012_art_data': artData(dialect),
        '013_feeds': feeds(dialect),
        '014_webhooks': webhooks(dialect),
        '015_sign_in_limits': signInLimits,
        '016_sealed_webhook_secrets': sealedWebhookSecrets,
        '017_no_plain_secrets': noPlainSecrets,
        '018_gallery_words': galleryWords(dialect),
        '019_trash_and_runs': trashAndRuns(dialect),
        '020_one_schedule': oneSchedule(dialect),
        '021_mass_deletes': massDeletes(dialect),
        '022_changelog_id_constants': changelogIdConstants(dialect),
      }),
    },
  });
}

/** How often a connection that timed out is tried again before a start gives up. */
const SLOW_CONNECT_ATTEMPTS = 4;

/**
 * Applies every pending migration; throws (so `serve` and `migrate` fail) when one fails. A server that
 * answers slowly (starting, or busy with other databases' work) is given a few more tries: the pool's
 * connect deadline is short so that requests get a fast 503, which is too short for a start. A refused
 * connection or a wrong name fails at once, with what to do.
 */
export async function migrateToLatest(handle: DatabaseHandle): Promise<string[]> {
  let result: MigrationResultSet = await migrator(handle).migrateToLatest();
  for (let attempt = 1; attempt < SLOW_CONNECT_ATTEMPTS && result.error && isConnectTimeout(result.error); attempt += 1) {
    await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
    result = await migrator(handle).migrateToLatest();
  }
  if (result.error) {
    // Before any migration ran: the database could not be opened at all.
    const problem = connectionProblem(result.error);
    if (problem) throw new Error(problem);
    const failed = result.results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${String((result.error as Error).message ?? result.error)}`);
  }
  return (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
