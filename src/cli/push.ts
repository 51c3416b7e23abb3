import { randomUUID } from 'node:crypto';
import type { Command } from 'commander';
import { AnswerStore } from './answer-store.js';
import { ApiClientError, ArtCatalogClient, NetworkError, type RetryEvent } from '../client/index.js';
import type { BatchItemResultType } from '../schemas/batch.js';
import { BATCH_MAX } from '../schemas/batch.js';
import { CliError, printable } from './context.js';
import { cliIo, setExitCode } from './io.js';
import { parseColumnMap, readHeader, type ColumnMap, type HeaderReading } from '../import/columns.js';
import { Catalog, type Candidate, type Listed } from '../import/plan.js';
import { checkRows, columnsOf, compareRows, mirrorDeletions, namedRecords, refusalProblems, rowLine, type ColumnOf, type HintWords, type Plan, type RowIssue } from '../import/planner.js';
import { PUSH_MAX_BYTES, megabytes } from '../import/limits.js';
import { FileProblem } from '../import/problem.js';
import { countsLine, overPruneLimit } from '../import/summary.js';
import { readFileTable, readTableRows, type Kind, type Row, type RowProblem } from '../import/rows.js';
import { encodingNamed, ENCODINGS, type Encoding } from '../import/text.js';
import { progressReporter, type Counts, type Progress } from './progress.js';

/**
 * `push FILE --kind artworks|events` (docs/push.md). Exit status: 0 when every row went through,
 * 1 when some rows failed or were duplicates, 2 when the push stopped as a whole (file unusable, key
 * refused, server unreachable, `--prune` over its limit) — said in one line on stderr.
 */

export interface PushOptions {
  kind: Kind;
  baseUrl: string;
  key: string;
  encoding: Encoding;
  /** Excel: the sheet to read (default: the first). */
  sheet?: string | undefined;
  /** Columns named otherwise than the fields (`--map`). */
  map?: ColumnMap;
  /** Apply the suggested columns (default true; `--no-suggest` turns them off). */
  suggest?: boolean;
  /** Refuse the file for a column that fills no field (`--strict`), as before suggestions. */
  strict?: boolean;
  dryRun: boolean;
  prune: boolean;
  force: boolean;
}

/** One line of a dry run's plan. */
export interface Planned {
  action: 'create' | 'update' | 'delete';
  label?: string;
  id?: number;
  title: string;
  fields?: string[];
}

export interface Summary extends Counts {
  total: number;
  duplicate: number;
  failures: RowProblem[];
  /** With --prune: why nothing was deleted, when it was not. */
  prune_skipped?: string;
  dry_run?: true;
  plan?: Planned[];
}

/** A batch body stays well under the server's 1 MiB limit even when rows carry 20,000-character descriptions. */
const BATCH_BYTES = 900_000;

/** The push stopped as a whole: one line, exit status 2. */
const stop = (message: string) => new CliError(message, 2);

/** One line for a failure that ends the push: what the server at `baseUrl` said, or why it could not be reached. */
export function describeFailure(error: unknown, baseUrl: string): string {
  if (error instanceof ApiClientError) {
    const said = `${error.status} ${error.error}: ${error.message}`;
    if (error.status === 401) return `${baseUrl} refused the API key (${said})`;
    if (error.status === 403) return `${baseUrl} refused the request (${said})`;
    return `${baseUrl} answered ${said}`;
  }
  if (error instanceof NetworkError) {
    if (error.code === 'ECONNREFUSED') return `cannot connect to ${baseUrl}: connection refused (is the server running?)`;
    if (error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') return `cannot connect to ${baseUrl}: unknown host ${new URL(baseUrl).hostname}`;
    return `cannot reach ${baseUrl}: ${error.message.replace(/^network error: /, '')}`;
  }
  return `${baseUrl}: ${error instanceof Error ? error.message : String(error)}`;
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

/** `http(s)://host[:port][/path]`, or the one line that says what is wrong with it. */
function checkBaseUrl(raw: string): string {
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch { /* reported below */ }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw stop(`the service URL "${raw}" must start with http:// or https://, e.g. http://127.0.0.1:3000`);
  }
  return raw.replace(/\/+$/, '');
}

/** Splits the rows into request bodies of at most BATCH_MAX items and BATCH_BYTES bytes. */
function* batches(rows: Candidate[]): Generator<Candidate[]> {
  let batch: Candidate[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = Buffer.byteLength(JSON.stringify(row.row.body)) + 1;
    if (batch.length > 0 && (batch.length === BATCH_MAX || bytes + size > BATCH_BYTES)) {
      yield batch;
      [batch, bytes] = [[], 0];
    }
    batch.push(row);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/** The hints as `push` words them: its flags. */
const hintWords: HintWords = (hint) => {
  switch (hint.kind) {
    case 'map-column': return hint.field === 'title' ? ' (map one with --map "COLUMN=title")' : ' (map a column with --map "COLUMN=FIELD")';
    case 'external-id': return '; give the row an external_id';
    case 'currency': return ' (name it in a currency column, in the price, or as the profile\'s default_currency)';
  }
};

/** A row the server refused, its problems placed in the file as the planner places its own. */
const refusedRow = (row: Row, result: BatchItemResultType, columnOf: ColumnOf): RowIssue => ({
  label: row.label, line: row.line,
  problems: refusalProblems(row, { ...result, message: result.message ?? `refused (${result.status})` }, columnOf),
});

export async function runPush(file: string, options: PushOptions, progress: Progress): Promise<Summary> {
  const { kind } = options;
  const baseUrl = checkBaseUrl(options.baseUrl);
  const unusable = (error: unknown): unknown =>
    (error instanceof FileProblem ? stop(`cannot push ${file}: ${error.message}${error.hint ? hintWords(error.hint) : ''}`)
      : (error as NodeJS.ErrnoException).code !== undefined ? stop(`cannot push ${file}: ${(error as Error).message}`) : error);
  // The file and its header first: a file that cannot be pushed says so before any request.
  const reading = { ...(options.map ? { map: options.map } : {}), suggest: options.suggest ?? true, strict: options.strict ?? false };
  let table;
  try {
    table = await readFileTable(file, { encoding: options.encoding, sheet: options.sheet });
    for (const line of readingLines(readHeader(table.columns, kind, reading), options.map)) progress.note(line);
  } catch (error) {
    throw unusable(error);
  }

  // One request, no retries, before anything else: a wrong key, a missing scope or a server that is
  // not there ends the push here, in one line, instead of once per row.
  const probe = new ArtCatalogClient({ baseUrl, key: options.key, retry: { maxAttempts: 1 } });
  const me = await probe.me().catch((error: unknown) => { throw stop(describeFailure(error, baseUrl)); });
  const needed = [...(options.dryRun ? [] : [`${kind}:write`]), ...(options.dryRun || options.prune ? [`${kind}:read`] : [])];
  const missing = needed.filter((scope) => !(me.key.scopes as string[]).includes(scope));
  if (missing.length > 0) {
    throw stop(`${baseUrl} refused the request (403 forbidden: the key ${me.key.prefix} lacks the scope ${missing.join(' and ')}; it has ${me.key.scopes.join(', ') || 'none'})`);
  }
  // The cells once the profile's default currency is known: it says which dollar `$` is (docs/push.md, How values are read).
  let read;
  try {
    read = readTableRows(table, kind, { ...reading, defaultCurrency: me.entity.default_currency });
  } catch (error) {
    throw unusable(error);
  }
  const { rows } = read;
  lackingCurrency(rows, progress);
  // The server's pages read last time come back as 304s when nothing changed (docs/api.md, Conditional requests).
  const answers = new AnswerStore(baseUrl, options.key);
  const client = new ArtCatalogClient({ baseUrl, key: options.key, etags: answers.load(), onRetry: (event) => progress.note(describeRetry(event)) });
  const fatal = (error: unknown): never => { throw stop(describeFailure(error, baseUrl)); };

  // The same planner as the console's Import and feeds (src/import/planner.ts); the server is read over HTTP.
  const plan = await checkRows(kind, rows, me.entity.slug, columnsOf(read.reading));
  const summary: Summary = { total: rows.length, created: 0, updated: 0, unchanged: 0, duplicate: plan.duplicates.length, failed: plan.refused.length, deleted: 0, failures: [] };
  const refusedByServer: RowIssue[] = [];

  // The server's records, for a dry run's comparison and for --prune.
  let catalog: Catalog | undefined;
  if (options.dryRun || options.prune) {
    const records: Listed[] = [];
    const iterate = kind === 'artworks' ? client.iterateArtworks() : client.iterateEvents();
    try {
      for await (const record of iterate) records.push(record);
    } catch (error) {
      fatal(error);
    }

    catalog = new Catalog(kind, records, me.entity.slug);
  }

  let deletions: Listed[] = [];
  if (catalog && options.prune) {
    if (plan.refused.length > 0) {
      summary.prune_skipped = `${summary.failed} row${summary.failed === 1 ? ' is' : 's are'} invalid: a record they name would be deleted`;
    } else {
      deletions = mirrorDeletions(catalog, namedRecords(plan, catalog));
      checkPruneLimit(deletions.length, catalog.records.length, kind, options.force);
    }
  }

  if (options.dryRun) {
    summary.dry_run = true;
    summary.plan = await planChanges(client, catalog!, plan, summary).catch(fatal);
    if (client.etags) answers.save(client.etags);
    for (const record of deletions) summary.plan.push({ action: 'delete', id: record.id, title: record.title });
    summary.deleted = deletions.length;
  } else {
    if (catalog && client.etags) answers.save(client.etags);
    const refuse = (row: Row, result: BatchItemResultType) => {
      summary.failed++;
      refusedByServer.push(refusedRow(row, result, plan.columnOf));
    };
    const sentIds = await send(client, kind, plan.send, summary, refuse, progress, deletions.length).catch(fatal);
    if (catalog && options.prune && !summary.prune_skipped) {
      if (summary.failed > 0) {
        summary.prune_skipped = 'some rows failed: a record they name would be deleted';
      } else {
        // What the server matched is what the file names; records created since the listing are not touched.
        deletions = mirrorDeletions(catalog, sentIds);
        checkPruneLimit(deletions.length, catalog.records.length, kind, options.force);
        await prune(client, kind, deletions, summary, progress, plan.send.length).catch(fatal);
      }
    }
  }
  summary.failures = [...plan.refused, ...plan.duplicates, ...refusedByServer].sort((a, b) => a.line - b.line).map((row) => rowLine(row, hintWords));
  return summary;
}

const DIMENSION_FIELDS = new Set(['dimensions', 'height', 'width', 'depth']);

/** Prices that name no currency when the profile has no default currency either: sent without one, and counted. */
function lackingCurrency(rows: Row[], progress: Progress): void {
  const lacking = rows.filter((row) => row.warnings?.some((w) => w.hint?.kind === 'currency')).length;
  if (lacking > 0) {
    progress.note(`${lacking} row${lacking === 1 ? ' has' : 's have'} a price without a currency (sent without one: name it in a currency column, in the price, or as the profile's default_currency)`);
  }
}

/**
 * How the columns are read, before anything is sent (docs/push.md, How columns are read): each column
 * read by a suggestion (not named as a field nor mapped), then the columns left out.
 */
export function readingLines(reading: HeaderReading, map?: ColumnMap): string[] {
  const lines: string[] = [];
  Object.entries(reading.mapping).forEach(([column, field], i) => {
    if (field === null) return;
    // What the column's name says of its cells: "Price (EUR)", "Height (in)".
    const { currency, unit } = reading.hints[i] ?? {};
    const said = [currency && field === 'price' ? `currency ${currency}` : '', unit && DIMENSION_FIELDS.has(field) ? `unit ${unit}` : ''].filter(Boolean);
    const chosen = map?.has(column.trim().toLowerCase()) || column.trim().toLowerCase().replace(/[\s-]+/g, '_') === field;
    if (chosen && said.length === 0) return;
    lines.push(`column "${printable(column)}" is read as ${[field, ...said].join(', ')}`);
  });
  if (reading.unmapped.length > 0) {
    lines.push(`left out: ${reading.unmapped.map((column) => `"${printable(column)}"`).join(', ')} (map one with --map "COLUMN=FIELD"; --strict refuses the file instead)`);
  }
  return lines;
}

function checkPruneLimit(deleting: number, total: number, kind: Kind, force: boolean): void {
  if (overPruneLimit(deleting, total) && !force) {
    throw stop(`--prune would delete ${deleting} of the ${total} ${kind} on the server, more than half; nothing was written. `
      + 'Check that the file is complete (--dry-run --force lists them), or pass --force');
  }
}

/** Sends the rows in batches, each with its own Idempotency-Key kept across retries; returns the ids written. */
async function send(client: ArtCatalogClient, kind: Kind, rows: Candidate[], summary: Summary,
  refuse: (row: Row, result: BatchItemResultType) => void, progress: Progress, extraSteps: number): Promise<Set<number>> {
  const ids = new Set<number>();
  const total = rows.length + extraSteps;
  let done = 0;
  progress.update(done, total, summary);
  for (const batch of batches(rows)) {
    const items = batch.map((c) => c.row.body);
    const { results } = await (kind === 'artworks' ? client.postArtworks : client.postEvents)(items, { idempotencyKey: randomUUID() });
    for (const result of results) {
      const row = batch[result.index]!.row;
      if (result.status !== 201) refuse(row, result);
      else if (result.created) summary.created++;
      else if (result.changed) summary.updated++;
      else summary.unchanged++;
      if (result.status === 201 && result.id !== undefined) ids.add(result.id);
    }
    done += batch.length;
    progress.update(done, total, summary);
  }
  return ids;
}

async function prune(client: ArtCatalogClient, kind: Kind, records: Listed[], summary: Summary, progress: Progress, sent: number): Promise<void> {
  const remove = kind === 'artworks' ? client.deleteArtwork : client.deleteEvent;
  for (const record of records) {
    try {
      await remove(record.id);
      summary.deleted++;
    } catch (error) {
      // Deleted by someone else meanwhile: the goal is reached all the same.
      if (!(error instanceof ApiClientError && error.status === 404)) throw error;
    }
    progress.update(sent + summary.deleted, sent + records.length, summary);
  }
}

/** A dry run: what a push would create, update or leave unchanged, from the server's current records. */
async function planChanges(client: ArtCatalogClient, catalog: Catalog, plan: Plan, summary: Summary): Promise<Planned[]> {
  const get = plan.kind === 'artworks' ? client.getArtwork : client.getEvent;
  // Four reads of a full record at a time, for rows that set a field the list does not show.
  await compareRows(plan, catalog, async (id) => await get(id), { concurrency: 4 });
  summary.created = plan.creates.length;
  summary.updated = plan.updates.length;
  summary.unchanged = plan.unchanged;
  summary.failed = plan.refused.length;
  return [
    ...plan.creates.map((p) => ({ action: 'create' as const, label: p.label, title: p.title, line: p.line })),
    ...plan.updates.map((p) => ({ action: 'update' as const, label: p.label, id: p.id!, title: p.title, fields: p.fields!, line: p.line })),
  ].sort((a, b) => a.line - b.line).map(({ line: _line, ...planned }) => planned);
}

export function formatSummary(s: Summary): string {
  const lines: string[] = [];
  lines.push(countsLine(s, { dryRun: !!s.dry_run, deletions: !!s.plan?.some((p) => p.action === 'delete') }));
  if (!s.dry_run && s.created + s.updated + s.deleted === 0) lines.push('nothing changed on the server');
  if (s.prune_skipped) lines.push(`not pruned: ${s.prune_skipped}`);
  for (const p of s.plan ?? []) {
    const where = p.label ? `${printable(p.label)}: ` : '';
    const what = p.action === 'create' ? `create "${printable(p.title)}"` : `${p.action} #${p.id} "${printable(p.title)}"${p.fields ? ` (${p.fields.join(', ')})` : ''}`;
    lines.push(`  ${where}${what}`);
  }
  for (const f of s.failures) lines.push(`  ${printable(f.label)}: ${printable(f.message)}`);
  return `${lines.join('\n')}\n`;
}

export function registerPushCommand(program: Command): void {
  program.command('push')
    .description('send a CSV, JSON or Excel file of artworks or events to the API in batches, with retries')
    .argument('<file>', `CSV with a header row of field names (\`,\` \`;\` or tab), a JSON array of objects, or an Excel .xlsx workbook; at most ${megabytes(PUSH_MAX_BYTES)}`)
    .requiredOption('--kind <kind>', 'artworks or events')
    .option('--base-url <url>', 'service URL (default: ART_CATALOG_URL)')
    .option('--key <key>', 'API key (default: ART_CATALOG_KEY)')
    .option('--encoding <name>', `the file's encoding: ${ENCODINGS.join(' or ')} (Windows-1252, older spreadsheet exports)`, 'utf8')
    .option('--sheet <name>', 'Excel: the sheet to read (default: the first)')
    .option('--map <pairs>', 'columns named otherwise than the fields, e.g. "Inventory No.=external_id,Artist=artist_name"; "Notes=" leaves a column out')
    .option('--no-suggest', 'read only columns named as fields or mapped with --map; no suggested columns')
    .option('--strict', 'refuse the file when a column fills no field (instead of leaving it out and naming it)')
    .option('--dry-run', 'compare the file with the server and print what would change; write nothing')
    .option('--prune', 'delete the records of this kind that the file does not name (at most half of them)')
    .option('--force', 'with --prune: delete even when that is more than half of the records')
    .option('--json', 'print the summary as one JSON object')
    .action(async (file: string, opts: { kind: string; baseUrl?: string; key?: string; encoding: string; sheet?: string; map?: string; suggest?: boolean; strict?: boolean; dryRun?: boolean; prune?: boolean; force?: boolean; json?: boolean }) => {
      if (opts.kind !== 'artworks' && opts.kind !== 'events') throw new CliError(`--kind must be artworks or events (got "${opts.kind}")`);
      const encoding = encodingNamed(opts.encoding);
      if (!encoding) throw new CliError(`--encoding must be ${ENCODINGS.join(' or ')} (got "${opts.encoding}")`);
      let map: ColumnMap | undefined;
      try {
        map = opts.map === undefined ? undefined : parseColumnMap(opts.map, opts.kind);
      } catch (error) {
        if (error instanceof FileProblem) throw stop(error.message);
        throw error;
      }
      const { env, stdout } = cliIo();
      const baseUrl = opts.baseUrl ?? env.ART_CATALOG_URL;
      const key = opts.key ?? env.ART_CATALOG_KEY;
      if (!baseUrl) throw new CliError('no service URL: pass --base-url or set ART_CATALOG_URL');
      if (!key) throw new CliError('no API key: pass --key or set ART_CATALOG_KEY');
      const progress = progressReporter();
      let summary: Summary;
      try {
        summary = await runPush(file, {
          kind: opts.kind, baseUrl, key, encoding, sheet: opts.sheet, ...(map ? { map } : {}),
          suggest: opts.suggest !== false, strict: !!opts.strict, dryRun: !!opts.dryRun, prune: !!opts.prune, force: !!opts.force,
        }, progress);
      } finally {
        progress.stop();
      }
      stdout.write(opts.json ? `${JSON.stringify(summary)}\n` : formatSummary(summary));
      if (summary.failures.length > 0) setExitCode(1);
    });
}
