import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { ArtCatalogClient, type RetryEvent } from '../client/index.js';
import { checkRow, formatProblem, readRows, type Kind, type Row, type RowProblem } from '../client/rows.js';
import { BATCH_MAX } from '../schemas/batch.js';
import { CliError, printable } from './context.js';

interface Summary {
  total: number;
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
  failures: RowProblem[];
}

interface Progress {
  advance(summary: Summary): void;
  note(message: string): void;
  stop(): void;
}

/** A bar on a terminal; plain lines otherwise (CI logs, pipes), both on stderr. */
function progressReporter(total: number): Progress {
  if (process.stderr.isTTY) {
    // A MultiBar of one bar, because only MultiBar can print lines (retry notes) above its bar.
    const bars = new cliProgress.MultiBar({
      stream: process.stderr,
      format: 'push [{bar}] {value}/{total} | created {created} updated {updated} unchanged {unchanged} failed {failed}',
    }, cliProgress.Presets.shades_classic);
    const bar = bars.create(total, 0, { created: 0, updated: 0, unchanged: 0, failed: 0 });
    return {
      advance: (s) => bar.update(s.created + s.updated + s.unchanged + s.failed, { ...s }),
      note: (message) => bars.log(`${message}\n`),
      stop: () => bars.stop(),
    };
  }
  return {
    advance: (s) => process.stderr.write(`progress ${s.created + s.updated + s.unchanged + s.failed}/${total}: created ${s.created}, updated ${s.updated}, unchanged ${s.unchanged}, failed ${s.failed}\n`),
    note: (message) => process.stderr.write(`${message}\n`),
    stop: () => undefined,
  };
}

function describeRetry(event: RetryEvent): string {
  const wait = `${(event.delayMs / 1000).toFixed(1)} s`;
  switch (event.reason) {
    case 'rate_limited': return `rate limited (429): waiting ${wait} as retry_after asks`;
    case 'server_error': return `server error (${event.status}): retrying in ${wait} with the same Idempotency-Key`;
    case 'conflict': return `request still in progress (409): retrying in ${wait}`;
    case 'network': return `network error: retrying in ${wait} with the same Idempotency-Key`;
  }
}

/** Sends the rows in batches of 100 and tallies each row's outcome. */
export async function push(client: ArtCatalogClient, kind: Kind, rows: Row[], progress: Progress): Promise<Summary> {
  const summary: Summary = { total: rows.length, created: 0, updated: 0, unchanged: 0, failed: 0, failures: [] };
  const fail = (label: string, message: string) => {
    summary.failed++;
    summary.failures.push({ label, message });
  };
  const valid: Row[] = [];
  for (const row of rows) {
    const problems = checkRow(kind, row.body);
    if (problems.length === 0) valid.push(row);
    else fail(row.label, problems.join('; '));
  }
  progress.advance(summary);
  for (let start = 0; start < valid.length; start += BATCH_MAX) {
    const batch = valid.slice(start, start + BATCH_MAX);
    const items = batch.map((row) => row.body);
    try {
      const send = kind === 'artworks' ? client.postArtworks : client.postEvents;
      const { results } = await send(items, { idempotencyKey: randomUUID() });
      for (const result of results) {
        const row = batch[result.index]!;
        if (result.status !== 201) fail(row.label, (result.details ?? [{ field: '', message: result.message ?? 'rejected' }]).map(formatProblem).join('; '));
        else if (result.created) summary.created++;
        else if (result.changed) summary.updated++;
        else summary.unchanged++;
      }
    } catch (error) {
      for (const row of batch) fail(row.label, `not sent: ${(error as Error).message}`);
    }
    progress.advance(summary);
  }
  return summary;
}

export function registerPushCommand(program: Command): void {
  program.command('push')
    .description('send a CSV or JSON file of artworks or events to the API in batches, with retries')
    .argument('<file>', 'CSV with a header row of field names, or a JSON array of objects')
    .requiredOption('--kind <kind>', 'artworks or events')
    .option('--base-url <url>', 'service URL (default: ART_CATALOG_URL)')
    .option('--key <key>', 'API key (default: ART_CATALOG_KEY)')
    .option('--json', 'print the summary as one JSON object')
    .action(async (file: string, opts: { kind: string; baseUrl?: string; key?: string; json?: boolean }) => {
      if (opts.kind !== 'artworks' && opts.kind !== 'events') throw new CliError(`--kind must be artworks or events (got "${opts.kind}")`);
      const baseUrl = opts.baseUrl ?? process.env.ART_CATALOG_URL;
      const key = opts.key ?? process.env.ART_CATALOG_KEY;
      if (!baseUrl) throw new CliError('no service URL: pass --base-url or set ART_CATALOG_URL');
      if (!key) throw new CliError('no API key: pass --key or set ART_CATALOG_KEY');
      let rows: Row[];
      try {
        rows = await readRows(file);
      } catch (error) {
        throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
      }
      const progress = progressReporter(rows.length);
      const client = new ArtCatalogClient({ baseUrl, key, onRetry: (event) => progress.note(describeRetry(event)) });
      const summary = await push(client, opts.kind, rows, progress);
      progress.stop();
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(summary)}\n`);
      } else {
        process.stdout.write(`${summary.total} rows: created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, failed ${summary.failed}\n`);
        for (const f of summary.failures) process.stdout.write(`  ${printable(f.label)}: ${printable(f.message)}\n`);
      }
      if (summary.failed > 0) process.exitCode = 1;
    });
}
