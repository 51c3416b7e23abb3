import type { Db, EntityRow } from '../db/types.js';
import { ApiError, invalidFields } from '../domain/errors.js';
import type { HeaderReading } from '../import/columns.js';
import type { Row } from '../import/rows.js';
import { columnsOf } from '../import/planner.js';
import { previewImport, type Preview } from '../apply/index.js';
import type { FeedRow } from '../store/feeds.js';
import { FetchFailed, explainFetchError, type FeedFetcher } from './fetcher.js';
import { RunFailed, read, readFeedRows, runProblems } from './run.js';
import { PROBLEMS_KEPT } from '../schemas/feeds.js';

/**
 * The feed preview (docs/api.md, Feed preview): the file read once, as a run would read it, compared
 * with the entity's records, nothing written — the mapping in use, the first 20 rows as they would be
 * written, a run's counts and the problems.
 */

/** What a preview reads: a feed's settings (those of POST /v1/feeds). */
export type PreviewSpec = Pick<FeedRow, 'url' | 'kind' | 'mapping' | 'mapping_frozen' | 'encoding' | 'sheet' | 'mode'>;

/** The rows a preview shows. */
export const PREVIEW_ROWS = 20;

export interface FeedPreviewAnswer {
  mapping: Record<string, string | null>;
  unmapped_columns: string[];
  rows: { line: number | null; action: 'create' | 'update' | 'unchanged' | 'refused'; id: number | null; fields: Record<string, unknown> }[];
  counts: { rows: number; created: number; updated: number; unchanged: number; deleted: number; refused: number; duplicates: number };
  problems: { line: number | null; column: string | null; message: string; level: 'error' | 'warning' }[];
}

/**
 * A turn to parse a file in this process (the console's HeldImports.readTurn): the answer ends it, or
 * undefined when none came in time.
 */
export type ReadTurn = () => Promise<(() => void) | undefined>;

/** Seconds a preview refused a read turn asks its client to wait (as the console's Import does). */
export const PREVIEW_BUSY_RETRY_S = 30;

/**
 * Fetches the feed's file (unconditionally) and reads it as a run would: its table, rows and reading. 400 when
 * it cannot be read. The file is parsed in a read turn (docs/api.md, Feed preview): the process parses at
 * most a few files at once, fairly between galleries; a preview that gets no turn is 503 with Retry-After.
 */
export async function readFeedFile(fetch: FeedFetcher, entity: EntityRow, spec: PreviewSpec, readTurn: ReadTurn, signal?: AbortSignal): Promise<{ rows: Row[]; reading: HeaderReading }> {
  let fetched;
  try {
    fetched = await fetch(spec.url, { etag: null, lastModified: null }, signal);
    if (fetched.notModified) throw new RunFailed('HTTP 304');
  } catch (error) {
    throw unreadable(error);
  }
  const endTurn = await readTurn();
  if (!endTurn) {
    throw new ApiError('service_unavailable', `The server is reading other large files right now; try again in ${PREVIEW_BUSY_RETRY_S} seconds.`, { retry_after: PREVIEW_BUSY_RETRY_S });
  }
  try {
    const table = await read(fetched.bytes, spec);
    const { rows, reading } = await readFeedRows(table, spec, entity.default_currency);
    return { rows, reading };
  } catch (error) {
    throw unreadable(error);
  } finally {
    endTurn();
  }
}

/** A fetch or read failure as the preview's 400; anything else as it is. */
const unreadable = (error: unknown): unknown => (error instanceof FetchFailed || error instanceof RunFailed
  ? invalidFields([{ field: 'url', message: `the file cannot be read: ${explainFetchError(error.message)}` }])
  : error);

export async function previewFeed(deps: { db: Db; fetch: FeedFetcher; readTurn: ReadTurn }, entity: EntityRow, spec: PreviewSpec): Promise<FeedPreviewAnswer> {
  const { rows, reading } = await readFeedFile(deps.fetch, entity, spec, deps.readTurn);
  const actor = { entityId: entity.id, entitySlug: entity.slug, source: 'preview' };
  const preview = await previewImport(deps.db, actor, spec.kind, rows, columnsOf(reading), { prune: spec.mode === 'mirror', force: false, skipUnchanged: true });
  return feedPreviewOf(preview, rows, reading, spec.mode);
}

/** A preview's answer from a read file and its import preview: the one shape the API and the console's Connect show. */
export function feedPreviewOf(preview: Preview, rows: Row[], reading: HeaderReading, mode: PreviewSpec['mode']): FeedPreviewAnswer {
  // The plan's lists are in file order: the shown rows, the file's first, are among the first of each list.
  // Only those are read (sets of a 380,000-row file's labels held the event loop).
  const first = <T>(list: readonly T[]) => list.slice(0, PREVIEW_ROWS);
  const created = new Set(first(preview.creates).map((c) => c.label));
  const updated = new Map(first(preview.updates).map((u) => [u.label, u.id!]));
  const refused = new Set([...first(preview.refused), ...first(preview.duplicates)].map((r) => r.label));
  const shown = rows.slice(0, PREVIEW_ROWS).map((row) => {
    const action = refused.has(row.label) ? 'refused' as const : created.has(row.label) ? 'create' as const
      : updated.has(row.label) ? 'update' as const : 'unchanged' as const;
    const id = action === 'update' ? updated.get(row.label)! : action === 'unchanged' ? preview.sameIds.get(row.label) ?? null : null;
    return { line: row.line, action, id, fields: row.body };
  });
  // Each row has a problem at least: the first PROBLEMS_KEPT by line are among the first rows of each list.
  const kept = <T>(list: readonly T[]) => list.slice(0, PROBLEMS_KEPT);
  const problems = [
    ...runProblems([...kept(preview.refused), ...kept(preview.duplicates)], 'error'),
    ...runProblems(kept(preview.warnings), 'warning'),
  ].sort((a, b) => (a.line ?? 0) - (b.line ?? 0)).slice(0, PROBLEMS_KEPT);
  if (preview.pruneBlocked) problems.unshift({ line: null, column: null, message: `nothing would be deleted: ${preview.pruneBlocked}`, level: 'error' });
  const deleting = mode === 'mirror' && !preview.pruneBlocked ? preview.deletions.length : 0;
  return {
    mapping: reading.mapping,
    unmapped_columns: Object.keys(reading.mapping).filter((column) => reading.mapping[column] === null),
    rows: shown,
    counts: {
      rows: preview.total, created: preview.creates.length, updated: preview.updates.length, unchanged: preview.unchanged,
      deleted: deleting, refused: preview.refused.length, duplicates: preview.duplicates.length,
    },
    problems: problems.slice(0, PROBLEMS_KEPT),
  };
}
