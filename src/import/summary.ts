/** The counts an import ends with, worded once for `push` and the console (docs/push.md; docs/console.md, Import: "the same summary"). */
export interface ImportCounts {
  total: number;
  created: number;
  updated: number;
  unchanged: number;
  duplicate: number;
  failed: number;
  deleted: number;
}

/** `267 rows: created 259, updated 0, unchanged 0, duplicate 3, failed 5` (a dry run: `would create …`). */
export function countsLine(s: ImportCounts, { dryRun = false, deletions = false } = {}): string {
  const counts = dryRun
    ? [`would create ${s.created}`, `update ${s.updated}`, `leave unchanged ${s.unchanged}`]
    : [`created ${s.created}`, `updated ${s.updated}`, `unchanged ${s.unchanged}`];
  counts.push(`duplicate ${s.duplicate}`, `failed ${s.failed}`);
  if (s.deleted > 0 || deletions) counts.push(dryRun ? `delete ${s.deleted}` : `deleted ${s.deleted}`);
  return `${dryRun ? 'dry run, nothing written: ' : ''}${s.total} rows: ${counts.join(', ')}`;
}

/** docs/push.md, Dry run and mirror: a mirror deletes at most half of the records unless forced. */
export const overPruneLimit = (deleting: number, total: number): boolean => deleting > total / 2;
