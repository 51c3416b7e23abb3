import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { ArtworkInput } from '../domain/artwork.js';
import { ApiError } from '../domain/errors.js';
import type { Db } from '../db/types.js';
import { Catalog, type Candidate, type Listed } from '../import/plan.js';
import { checkRows, compareRows, mirrorDeletions, namedRecords, refusalProblems, rowLine, type ColumnOf, type HintWords, type Plan, type RowIssue } from '../import/planner.js';
import type { Kind, Row } from '../import/rows.js';
import { overPruneLimit, type ImportCounts } from '../import/summary.js';
import { deleteArtwork, getArtwork, listArtworks, postArtworksWork, postArtworkWork, postNewArtworksWork, type PostedArtwork } from '../store/artworks.js';
import { itemsPerTransaction, writeEach } from '../store/batch.js';
import type { Actor } from '../store/changelog.js';
import { deleteEvent, getEvent, listEvents, postEventWork } from '../store/events.js';
import { feedOwnedIds, finishImportRun, startImportRun } from '../store/feeds.js';
import type { UnchangedSince } from '../store/trash.js';
import { nowIso } from '../clock.js';
import { PROBLEMS_KEPT } from '../schemas/feeds.js';

/**
 * What the Import page does with rows read by `push`'s reader (docs/console.md, Import): a preview like
 * `push --dry-run`, from the entity's records as the store lists them, and Apply, which writes the rows
 * through the same store functions as the API's batch routes — a few rows per transaction, yielding the
 * event loop between them, so that a 10,000-row import never holds other requests up.
 */

/**
 * A mirror's deletions between two yields of the event loop. Apply writes as many rows per transaction
 * as the API's batches do (store/batch.ts `itemsPerTransaction`), yielding after each; 20 keep a slice
 * within the 50 ms budget (docs/performance.md, Console).
 */
const BATCH = 20;

/**
 * The hints as the API's runs word them (docs/api.md, Runs: a run's `problems`): a feed's run and a
 * console import's run alike.
 */
export const runHintWords: HintWords = (hint) => {
  switch (hint.kind) {
    case 'external-id': return '; give the row an external_id';
    case 'currency': return ' (set one in a currency column, in the price, or as the default currency of your profile)';
    case 'map-column': return '';
  }
};

/** A record a mirror would delete. */
export interface Deletion {
  id: number;
  title: string;
  external_id: string | null;
}

/** A plan (src/import/planner.ts) against the store's records, with what a mirror would delete. */
export interface Preview extends Plan {
  /** With mirror: the records the file does not name. */
  deletions: Deletion[];
  /** With mirror: why nothing will be deleted, when so. */
  pruneBlocked?: string;
  /** With mirror: the deletions are past the limit (the console: more than half, not confirmed; a feed: docs/api.md, Feeds). */
  pruneLimitHit?: boolean;
}

export interface MirrorChoice {
  prune: boolean;
  /** Delete even more than half of the records (the console's `--force`). */
  force: boolean;
  /**
   * Leave rows equal to their stored record unwritten (feeds: docs/api.md, Feeds). The console's
   * Apply re-posts them, as `push` does, which marks them synced with an entry of their own.
   */
  skipUnchanged?: boolean;
  /**
   * A feed's mirror deletes only the records it owns (`feed_id`), never the console's, the API's or
   * another feed's (docs/api.md, Feeds). The console's one-off mirror (none) keeps its meaning: the whole kind.
   */
  ownerFeedId?: number;
  /**
   * A feed's mirror: the deletions of the feed's runs in the last 24 hours. Its deletions stop for a
   * person to confirm when they, added to these, exceed `feedDeleteLimit` of its own records.
   */
  recentDeletes?: number;
}

/**
 * The most a feed's mirror deletes without a person's confirmation, counted over its last 24 hours
 * (docs/api.md, Feeds: mass deletes): the larger of 10 % of its own records and 10.
 */
const feedDeleteLimit = (ownRecords: number): number => Math.max(Math.ceil(0.1 * ownRecords), 10);

/** Records per page of the list read into a preview's catalog. */
export const CATALOG_PAGE = 100;

/**
 * Every record of one kind, as the list shows it, page by page (a cursor page costs the same at any
 * depth), into a catalog, yielding the event loop after each page. On SQLite a page is read on the
 * event loop and resolves without a turn of it, and adding a record hashes its fingerprint: a gallery's
 * 9,000 artworks read and added in one go held the loop 40-70 ms (docs/performance.md, Feeds); a page
 * is about 1 ms. `onPage` is told each page's size (tests).
 */
export async function readCatalog(db: Db, entityId: number, kind: Kind, entitySlug: string, onPage?: (size: number) => void): Promise<Catalog> {
  const catalog = new Catalog(kind, [], entitySlug);
  let after = 0;
  for (;;) {
    const page = kind === 'artworks'
      ? await listArtworks(db, entityId, { after, limit: CATALOG_PAGE }).then((p) => ({ ...p, items: JSON.parse(p.json) as Listed[] }))
      : await listEvents(db, entityId, { after, limit: CATALOG_PAGE, today: '' }).then((p) => ({ ...p, items: p.events as unknown as Listed[] }));
    catalog.add(page.items);
    onPage?.(page.items.length);
    if (!page.hasMore || page.nextAfter === null) return catalog;
    after = page.nextAfter;
    await yieldToEventLoop();
  }
}

const getRecord = (db: Db, kind: Kind, entityId: number, id: number): Promise<Record<string, unknown>> =>
  (kind === 'artworks' ? getArtwork(db, entityId, id) : getEvent(db, entityId, id));

/**
 * What Apply would do, planned from the store's records (src/import/planner.ts, the planner `push`
 * uses too): nothing is written. `columnOf` places each problem in its column.
 */
export async function previewImport(db: Db, actor: Actor, kind: Kind, rows: Row[], columnOf: ColumnOf, mirror: MirrorChoice): Promise<Preview> {
  const checked = await checkRows(kind, rows, actor.entitySlug, columnOf);
  const catalog = await readCatalog(db, actor.entityId, kind, actor.entitySlug);
  const plan = await compareRows(checked, catalog, (id) => getRecord(db, kind, actor.entityId, id));
  const preview: Preview = { ...plan, deletions: [] };
  if (mirror.prune) {
    const owned = mirror.ownerFeedId === undefined ? undefined : await feedOwnedIds(db, mirror.ownerFeedId, kind);
    preview.deletions = mirrorDeletions(catalog, namedRecords(plan, catalog), owned)
      .map(({ id, title, external_id }) => ({ id, title, external_id: typeof external_id === 'string' ? external_id : null }));
    const recent = mirror.recentDeletes ?? 0;
    const { refused } = preview;
    if (refused.length > 0) {
      preview.pruneBlocked = `${refused.length} row${refused.length === 1 ? ' is' : 's are'} refused: a record they name would be deleted`;
    } else if (owned && preview.deletions.length > 0 && preview.deletions.length + recent > feedDeleteLimit(owned.size)) {
      preview.pruneLimitHit = true;
      preview.pruneBlocked = `the file would delete ${preview.deletions.length} of the feed's ${owned.size} ${kind}`
        + `${recent > 0 ? ` after ${recent} deleted in the last 24 hours` : ''}, more than ${feedDeleteLimit(owned.size)}: `
        + 'check that the file is complete, or confirm the deletions';
    } else if (!owned && overPruneLimit(preview.deletions.length, catalog.records.length) && !mirror.force) {
      preview.pruneLimitHit = true;
      preview.pruneBlocked = `mirroring would delete ${preview.deletions.length} of the ${catalog.records.length} ${kind}, more than half; check that the file is complete, or confirm the deletions`;
    }
  }
  return preview;
}

/** A running or finished Apply, as its progress page shows it. */
export interface ApplyJob {
  done: number;
  steps: number;
  counts: ImportCounts;
  /** The rows refused, left out as duplicates or refused by a write, in file order. */
  failures: RowIssue[];
  finished: boolean;
  /** Why the mirror deleted nothing, when so. */
  pruneSkipped?: string;
  /** The job stopped on an error that was not a row's (a database failure). */
  error?: string;
  /** The console import's run (docs/api.md, Runs), once it started. */
  runId?: number;
}

type Written = { id: number; created: boolean; changed: boolean };

const writtenArtwork = (p: PostedArtwork): Written => ({ id: p.artwork.id, created: p.created, changed: p.changed });

function writeBatch(db: Db, actor: Actor, kind: Kind, batch: Candidate[]) {
  if (kind === 'artworks') {
    return writeEach<Candidate, Written>(db, batch,
      function* (c) { return writtenArtwork(yield* postArtworkWork(db, actor, c.input)); },
      {
        * many(items) {
          return (yield* postArtworksWork(db, actor, items.map((c) => c.input as ArtworkInput))).map(writtenArtwork);
        },
        * alone(items) {
          return (yield* postNewArtworksWork(db, actor, items.map((c) => c.input as ArtworkInput)))?.map(writtenArtwork);
        },
      });
  }
  return writeEach<Candidate, Written>(db, batch,
    function* (c) { const p = yield* postEventWork(db, actor, c.input); return { id: p.event.id, created: p.created, changed: p.changed }; });
}

/** A new Apply of a preview, before its first write. */
function newApplyJob(preview: Preview, mirror: MirrorChoice): ApplyJob {
  const job: ApplyJob = {
    done: 0, steps: preview.send.length + (mirror.prune && !preview.pruneBlocked ? preview.deletions.length : 0), finished: false,
    counts: { total: preview.total, created: 0, updated: 0, unchanged: 0, duplicate: preview.duplicates.length, failed: preview.refused.length, deleted: 0 },
    failures: [...preview.refused, ...preview.duplicates],
  };
  if (mirror.prune && preview.pruneBlocked) job.pruneSkipped = preview.pruneBlocked;
  return job;
}

/**
 * Starts writing a preview's rows in the background and returns the job it updates; with mirror, the
 * records the file does not name are deleted afterwards, unless a row failed.
 */
export function startApply(db: Db, actor: Actor, preview: Preview, mirror: MirrorChoice): ApplyJob {
  const job = newApplyJob(preview, mirror);
  void importRun(db, actor, preview, mirror, job).catch((error: unknown) => {
    job.error = error instanceof ApiError ? error.message : 'the database did not answer; the rows written so far stay written, and applying again finishes the rest';
    job.finished = true;
  });
  return job;
}

/** A console import is a run (docs/api.md, Runs): each of its writes names it, and it ends with its counts. */
async function importRun(db: Db, actor: Actor, preview: Preview, mirror: MirrorChoice, job: ApplyJob): Promise<void> {
  const runId = await startImportRun(db, actor.entityId, preview.kind, actor.source, nowIso());
  job.runId = runId;
  let error: string | null = null;
  try {
    await applyRows(db, { ...actor, runId }, preview, mirror, job);
  } catch (failure) {
    error = failure instanceof ApiError ? failure.message : 'the database did not answer';
    throw failure;
  } finally {
    const { total, created, updated, unchanged, deleted, failed, duplicate } = job.counts;
    // One problem per row, its parts in one message, as the console's summary lists them.
    const problems = [
      ...job.failures.map((row) => ({ line: row.line, column: null, message: rowLine(row, runHintWords).message, level: 'error' as const })),
      ...preview.warnings.map((row) => ({ line: row.line, column: null, message: rowLine(row, runHintWords).message, level: 'warning' as const })),
    ].slice(0, PROBLEMS_KEPT);
    await finishImportRun(db, runId, {
      counts: { rows: total, created, updated, unchanged, deleted, refused: failed, duplicates: duplicate }, problems, error,
    }, nowIso()).catch(() => undefined);
  }
  // Finished once its run says so: the summary and GET /v1/runs agree.
  job.finished = true;
}

/**
 * Writes a preview's rows (the one writer of the console's Import and of feeds), then, with mirror,
 * deletes the records the file does not name unless a row failed; resolves with the finished job.
 * Each transaction holds a few whole rows: a process that dies leaves every row before or after.
 */
export async function applyPreview(db: Db, actor: Actor, preview: Preview, mirror: MirrorChoice, job = newApplyJob(preview, mirror)): Promise<ApplyJob> {
  await applyRows(db, actor, preview, mirror, job);
  job.finished = true;
  return job;
}

/** `applyPreview` short of saying it finished (a console import records its run first). */
async function applyRows(db: Db, actor: Actor, preview: Preview, mirror: MirrorChoice, job: ApplyJob): Promise<void> {
  const deleting = mirror.prune && !preview.pruneBlocked ? preview.deletions : [];
  const send = mirror.skipUnchanged ? preview.send.filter((c) => !preview.same.has(c)) : preview.send;
  if (send.length < preview.send.length) {
    job.counts.unchanged += preview.send.length - send.length;
    job.done += preview.send.length - send.length;
  }
  const { kind } = preview;
  const size = itemsPerTransaction(db);
  for (let at = 0; at < send.length; at += size) {
    const batch = send.slice(at, at + size);
    const outcomes = await writeBatch(db, actor, kind, batch);
    outcomes.forEach((outcome, i) => {
      if ('error' in outcome) {
        job.counts.failed++;
        const { row } = batch[i]!;
        job.failures.push({ label: row.label, line: row.line, problems: refusalProblems(row, { message: outcome.error.message, ...outcome.error.extras }, preview.columnOf) });
      } else if (outcome.value.created) job.counts.created++;
      else if (outcome.value.changed) job.counts.updated++;
      else job.counts.unchanged++;
    });
    job.done += batch.length;
    await yieldToEventLoop();
  }
  if (deleting.length > 0 && job.counts.failed > 0) {
    job.pruneSkipped = 'some rows failed: a record they name would be deleted';
    job.steps = job.done;
  } else {
    for (const [i, record] of deleting.entries()) {
      // Deleted by someone else meanwhile: the goal is reached all the same.
      if (await removeRecord(db, actor, kind, record.id)) job.counts.deleted++;
      job.done++;
      if (i % BATCH === BATCH - 1) await yieldToEventLoop();
    }
  }
  job.failures.sort((a, b) => a.line - b.line);
}

/**
 * A mirror's delete of one record (to the trash, with the actor's source and run): false when it is
 * gone already. The one delete path of imports, feeds and a feed run's confirmed deletions.
 */
async function removeRecord(db: Db, actor: Actor, kind: Kind, id: number): Promise<boolean> {
  return await removeUnchanged(db, actor, kind, id) === 'deleted';
}

/**
 * `removeRecord`, and with `unchanged` only a record not changed since then and still the feed's own,
 * checked in the delete's transaction: what became of it.
 */
export async function removeUnchanged(db: Db, actor: Actor, kind: Kind, id: number, unchanged?: UnchangedSince): Promise<'deleted' | 'gone' | 'changed'> {
  try {
    await (kind === 'artworks' ? deleteArtwork : deleteEvent)(db, actor, id, unchanged);
    return 'deleted';
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return 'gone';
    if (error instanceof ApiError && error.code === 'conflict') return 'changed';
    throw error;
  }
}
