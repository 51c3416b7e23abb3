import type { Db, EntityRow } from '../db/types.js';
import { invalidFields } from '../domain/errors.js';
import type { HeaderReading } from '../import/columns.js';
import type { Row } from '../import/rows.js';
import { columnsOf } from '../import/planner.js';
import { previewImport, type Preview } from '../apply/index.js';
import type { FeedRow } from '../store/feeds.js';
import { FetchFailed, explainFetchError, type FeedFetcher } from './fetcher.js';
import { PROBLEMS_KEPT, RunFailed, read, readFeedRows, runProblems } from './run.js';

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

/** Fetches the feed's file (unconditionally) and reads it as a run would: its table, rows and reading. 400 when it cannot be read. */
export async function readFeedFile(fetch: FeedFetcher, entity: EntityRow, spec: PreviewSpec, signal?: AbortSignal): Promise<{ rows: Row[]; reading: HeaderReading }> {
  try {
    const fetched = await fetch(spec.url, { etag: null, lastModified: null }, signal);
    if (fetched.notModified) throw new RunFailed('HTTP 304');
    const table = await read(fetched.bytes, spec);
    const { rows, reading } = readFeedRows(table, spec, entity.default_currency);
    return { rows, reading };
  } catch (error) {
    if (error instanceof FetchFailed || error instanceof RunFailed) {
      throw invalidFields([{ field: 'url', message: `the file cannot be read: ${explainFetchError(error.message)}` }]);
    }
    throw error;
  }
}

export async function previewFeed(deps: { db: Db; fetch: FeedFetcher }, entity: EntityRow, spec: PreviewSpec): Promise<FeedPreviewAnswer> {
  const { rows, reading } = await readFeedFile(deps.fetch, entity, spec);
  const actor = { entityId: entity.id, entitySlug: entity.slug, source: 'preview' };
  const preview = await previewImport(deps.db, actor, spec.kind, rows, columnsOf(reading), { prune: spec.mode === 'mirror', force: false, skipUnchanged: true });
  return feedPreviewOf(preview, rows, reading, spec.mode);
}

/** A preview's answer from a read file and its import preview: the one shape the API and the console's Connect show. */
export function feedPreviewOf(preview: Preview, rows: Row[], reading: HeaderReading, mode: PreviewSpec['mode']): FeedPreviewAnswer {
  const created = new Set(preview.creates.map((c) => c.label));
  const updated = new Map(preview.updates.map((u) => [u.label, u.id!]));
  const refused = new Set([...preview.refused, ...preview.duplicates].map((r) => r.label));
  const shown = rows.slice(0, PREVIEW_ROWS).map((row) => {
    const action = refused.has(row.label) ? 'refused' as const : created.has(row.label) ? 'create' as const
      : updated.has(row.label) ? 'update' as const : 'unchanged' as const;
    const id = action === 'update' ? updated.get(row.label)! : action === 'unchanged' ? preview.sameIds.get(row.label) ?? null : null;
    return { line: row.line, action, id, fields: row.body };
  });
  const problems = [
    ...runProblems([...preview.refused, ...preview.duplicates], 'error'),
    ...runProblems(preview.warnings, 'warning'),
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
