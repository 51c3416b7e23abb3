import { nowIso } from '../clock.js';
import type { Db } from '../db/types.js';
import { fieldNamed, type Kind } from '../import/columns.js';
import { FileProblem, NotUtf8 } from '../import/problem.js';
import { readTableRowsInTurns } from '../import/rows.js';
import { readTable, type Table } from '../import/table.js';
import type { Encoding } from '../import/text.js';
import { columnsOf, worded, type RowIssue } from '../import/planner.js';
import { applyPreview, previewImport, runHintWords } from '../apply/index.js';
import { findEntity } from '../store/entities.js';
import { finishFeedRun, freezeFeedMapping, recentFeedDeletes, startFeedRun, type FeedRow, type FeedRunRow, type RunOutcome } from '../store/feeds.js';
import { FetchFailed, explainFetchError, type FeedFetcher } from './fetcher.js';
import { PROBLEMS_KEPT } from '../schemas/feeds.js';

/**
 * One run of a feed (docs/api.md, Feeds), for the job that holds the feed's lease: fetch the file
 * conditionally, read it with the import's reader, check the saved mapping against its columns, plan
 * it with the one planner (src/import/planner.ts) and apply it with the console's Apply
 * (src/apply/index.ts), each written record's changelog entry saying `feed:<id>`. A fetch error, an unreadable file or a mapped
 * column gone ends the run `failed` before anything is written.
 */

export interface FeedRunDeps {
  db: Db;
  fetch: FeedFetcher;
}

const ENCODING: Record<FeedRow['encoding'], Encoding> = { 'utf-8': 'utf8', 'windows-1252': 'latin1' };

/** Why a run, or a preview, cannot read the feed's file: one line. */
export class RunFailed extends Error {
  constructor(message: string, readonly httpStatus: number | null = null) {
    super(message);
  }
}

/** Runs feed `feedId` if it has a run to do; resolves with the finished run, or undefined when there was none. */
export async function runFeed(deps: FeedRunDeps, feedId: number, signal?: AbortSignal): Promise<FeedRunRow | undefined> {
  const started = await startFeedRun(deps.db, feedId, nowIso());
  if (!started) return undefined;
  const { feed, run } = started;
  let outcome: RunOutcome;
  try {
    outcome = await execute(deps, feed, run, signal);
  } catch (error) {
    if (!(error instanceof RunFailed)) throw error;
    outcome = { status: 'failed', httpStatus: error.httpStatus, counts: null, problems: [], error: error.message, newColumns: [] };
  }
  return finishFeedRun(deps.db, feed.id, run.id, outcome, nowIso());
}

async function execute(deps: FeedRunDeps, feed: FeedRow, run: FeedRunRow, signal?: AbortSignal): Promise<RunOutcome> {
  let fetched;
  try {
    fetched = await deps.fetch(feed.url, { etag: feed.etag, lastModified: feed.last_modified }, signal);
  } catch (error) {
    if (!(error instanceof FetchFailed)) throw error;
    const status = /^HTTP (\d{3})$/.exec(error.message);
    throw new RunFailed(explainFetchError(error.message), status ? Number(status[1]) : null);
  }
  const unchanged = { status: 'unchanged' as const, counts: null, problems: [], error: null, newColumns: [] };
  if (fetched.notModified) return { ...unchanged, httpStatus: 304 };
  const file = { etag: fetched.etag, lastModified: fetched.lastModified, hash: fetched.hash };
  if (fetched.hash === feed.body_hash) return { ...unchanged, httpStatus: fetched.status, file };

  const table = await read(fetched.bytes, feed);
  const entity = await findEntity(deps.db, feed.entity_id);
  if (!entity) throw new RunFailed('the account no longer exists', fetched.status);
  const { rows, map, reading, newColumns } = await readFeedRows(table, feed, entity.default_currency, fetched.status);
  if (!feed.mapping_frozen) await freezeFeedMapping(deps.db, feed.id, Object.fromEntries(table.columns.map((c) => [c, map.get(key(c)) ?? null])));
  // Each write names its run; what the feed creates or changes becomes its own (docs/api.md, Feeds; Runs).
  const actor = { entityId: entity.id, entitySlug: entity.slug, source: `feed:${feed.id}`, runId: run.id, feedId: feed.id };
  // Past its delete limit over 24 hours, a mirror deletes nothing and lists what it would (docs/api.md, Feeds: mass deletes).
  const recentDeletes = feed.mode === 'mirror' ? await recentFeedDeletes(deps.db, entity.id, feed.id, nowIso()) : 0;
  const mirror = { prune: feed.mode === 'mirror', force: false, skipUnchanged: true, ownerFeedId: feed.id, recentDeletes };
  const preview = await previewImport(deps.db, actor, feed.kind, rows, columnsOf(reading), mirror);
  const job = await applyPreview(deps.db, actor, preview, mirror);
  const refused = new Set(job.failures.map(({ label }) => label));
  const problems = [
    ...runProblems(job.failures, 'error'),
    ...runProblems(preview.warnings.filter((row) => !refused.has(row.label)), 'warning'),
  ].slice(0, PROBLEMS_KEPT);
  const limitHit = preview.pruneLimitHit === true;
  if (job.pruneSkipped && !limitHit) problems.unshift({ line: null, column: null, message: `nothing deleted: ${job.pruneSkipped}`, level: 'error' });
  return {
    status: limitHit ? 'needs_attention' : 'applied',
    httpStatus: fetched.status,
    counts: {
      rows: job.counts.total, created: job.counts.created, updated: job.counts.updated, unchanged: job.counts.unchanged,
      deleted: job.counts.deleted, refused: job.counts.failed, duplicates: job.counts.duplicate,
    },
    problems: problems.slice(0, PROBLEMS_KEPT),
    error: limitHit ? preview.pruneBlocked ?? null : null,
    newColumns,
    // Its deletions wait for a person; the file stays read (an unchanged file is `unchanged` next time).
    ...(limitHit ? { pendingDeletes: preview.deletions } : {}),
    file,
  };
}

/** The feed's file as a table, read with its encoding and sheet. */
export async function read(bytes: Buffer, feed: Pick<FeedRow, 'url' | 'encoding' | 'sheet'>): Promise<Table> {
  try {
    return await readTable(bytes, { name: new URL(feed.url).pathname, encoding: ENCODING[feed.encoding], sheet: feed.sheet ?? undefined });
  } catch (error) {
    if (error instanceof NotUtf8) throw new RunFailed(`not valid UTF-8 at line ${error.line}: choose Windows-1252`, 200);
    if (error instanceof FileProblem) throw new RunFailed(error.message, 200);
    throw error;
  }
}

const key = (column: string): string => column.trim().toLowerCase();

/**
 * The saved mapping applied to this file's columns: a mapped column the file no longer has fails the
 * run; a column the mapping does not name fills the field it is named after, as in Import, or is
 * ignored and named in the run's `new_columns`.
 */
export function columnMap(table: Table, kind: Kind, mapping: Record<string, string | null>): { map: Map<string, string | null>; newColumns: string[] } {
  const present = new Set(table.columns.map(key));
  const gone = Object.keys(mapping).filter((column) => !present.has(key(column)));
  if (gone.length > 0) {
    throw new RunFailed(gone.length === 1
      ? `column '${gone[0]}' is no longer in the file`
      : `columns ${gone.map((c) => `'${c}'`).join(', ')} are no longer in the file`, 200);
  }
  const map = new Map(Object.entries(mapping).map(([column, field]) => [key(column), field]));
  const newColumns: string[] = [];
  for (const column of table.columns) {
    if (map.has(key(column)) || fieldNamed(column, kind)) continue;
    map.set(key(column), null);
    newColumns.push(column);
  }
  return { map, newColumns };
}

/**
 * The rows of a feed's file, read as its mapping says (docs/api.md, Feeds): a frozen mapping as it is
 * (columns it does not name fill the field they are named after, or are new columns); a mapping not yet
 * frozen with the suggestions for the columns it leaves out, which the caller then stores. Read a slice
 * of rows per turn of the event loop: a feed's file may hold 400,000 rows.
 */
export async function readFeedRows(table: Table, feed: Pick<FeedRow, 'kind' | 'mapping' | 'mapping_frozen'>, defaultCurrency: string | null, status: number | null = null) {
  const mapping = JSON.parse(feed.mapping) as Record<string, string | null>;
  const frozen = columnMap(table, feed.kind, mapping);
  const given = feed.mapping_frozen ? frozen.map : new Map(Object.entries(mapping).map(([column, field]) => [key(column), field]));
  try {
    const { rows, reading } = await readTableRowsInTurns(table, feed.kind, { map: given, defaultCurrency });
    const map = new Map(table.columns.map((column, i) => [key(column), reading.fields[i] ?? null]));
    return { rows, map, reading, newColumns: feed.mapping_frozen ? frozen.newColumns : reading.unmapped };
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    // The file's problem as it is: a feed's mapping is changed in its settings, so no advice to map a column.
    throw new RunFailed(error.message, status);
  }
}

/** The planner's problems of some rows as a run's (docs/api.md, Feeds): one per problem, with its line, column and level. */
export const runProblems = (rows: readonly RowIssue[], level: 'error' | 'warning'): RunOutcome['problems'] =>
  rows.flatMap((row) => row.problems.map((p) => ({ line: p.line, column: p.column, message: worded(p, runHintWords), level })));
