import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { nowIso } from '../clock.js';
import { openImageStore } from '../images/store/index.js';
import { sweepImages } from '../images/sweep.js';
import { imageReport, retryImages } from '../store/images.js';
import { entityOption, output, printable, withDatabase } from './context.js';
import { cliIo } from './io.js';

/** `images status|retry|sweep`: what an operator does about the image pipeline (docs/api.md, Images; docs/operations.md, Command line). */
export function registerImageCommands(program: Command): void {
  const images = program.command('images').description('the platform\'s copies of images: states, failures, retries');

  images.command('status')
    .description('count records by image state (pending, ready, failed) and list the failed images with their error')
    .option('--entity <id>', 'only the records of this gallery or artist', entityOption)
    .option('--json', 'print one JSON object')
    .action(async (opts: { entity?: number; json?: boolean }) => {
      const report = await withDatabase(({ db }) => imageReport(db, opts.entity));
      output(opts.json, report, () => [
        `pending ${report.counts.pending}\tready ${report.counts.ready}\tfailed ${report.counts.failed}`,
        ...report.failed.map((f) => {
          const records = f.records.map((r) => `${r.kind} ${r.id} (entity ${r.entity_id})`).join(', ');
          const next = f.next_try ? `next try ${f.next_try}` : 'no more tries (images retry)';
          return `failed\t${printable(f.error ?? '')}\t${printable(f.url)}\t${records}\t${next}`;
        }),
      ].join('\n'));
    });

  images.command('retry')
    .description('fetch images again now, their retry schedule started anew (all, or only failed ones)')
    .option('--entity <id>', 'only the images of this gallery or artist', entityOption)
    .option('--failed', 'only the failed images')
    .option('--json', 'print one JSON object')
    .action(async (opts: { entity?: number; failed?: boolean; json?: boolean }) => {
      const queued = await withDatabase(({ db }) => retryImages(db, { entityId: opts.entity, failedOnly: opts.failed === true }, nowIso()));
      output(opts.json, { queued }, () => `${queued} image${queued === 1 ? '' : 's'} queued; a running server fetches them`);
    });

  images.command('sweep')
    .description('remove stored copies no record uses (the server also does this every hour)')
    .option('--json', 'print one JSON object')
    .action(async (opts: { json?: boolean }) => {
      const store = openImageStore(loadConfig(cliIo().env));
      try {
        const report = await withDatabase(({ db }) => sweepImages(db, store, Date.now()));
        output(opts.json, report, () => `deleted ${report.deleted} stored files of ${report.originals} unused originals; left ${report.foreign} files not of the service's naming; queued ${report.queued} images without a job`);
      } finally {
        await store.close();
      }
    });
}
