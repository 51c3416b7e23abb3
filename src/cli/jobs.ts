import type { Command } from 'commander';
import { JOB_KINDS } from '../http/jobs.js';
import { queueGauges } from '../store/jobs.js';
import { entityOption, output, withDatabase } from './context.js';

/**
 * `jobs [--entity ID] [--json]`: the queue seen from outside, the numbers /metrics has (docs/operations.md,
 * Jobs): per kind, jobs waiting, running, failed in the last hour, and the age of the oldest due job.
 */
export function registerJobsCommand(program: Command): void {
  program.command('jobs')
    .description('the background job queue by kind: waiting, running, failed in the last hour, oldest due')
    .option('--entity <id>', 'only the jobs of this gallery or artist', entityOption)
    .option('--json', 'print one JSON object')
    .action(async ({ entity: entityId, json }: { entity?: number; json?: boolean }) => {
      const gauges = await withDatabase(({ db }) => queueGauges(db, JOB_KINDS, Date.now(), entityId));
      const kinds = gauges.map((g) => ({
        kind: g.kind, queued: g.queued, running: g.running, failed_last_hour: g.failedLastHour, oldest_due_seconds: g.oldestDueSeconds,
      }));
      output(json, { ...(entityId === undefined ? {} : { entity_id: entityId }), kinds }, () => table([
        ['kind', 'queued', 'running', 'failed (1 h)', 'oldest due (s)'],
        ...kinds.map((k) => [k.kind, String(k.queued), String(k.running), String(k.failed_last_hour), String(k.oldest_due_seconds)]),
      ]));
    });
}

/** Columns padded to their widest cell; numbers right-aligned. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ').trimEnd()).join('\n');
}
