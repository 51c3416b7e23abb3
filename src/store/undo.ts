import { sql } from 'kysely';
import type { ChangeEntityType } from '../schemas/changelog.js';
import { ApiError, notFound } from '../domain/errors.js';
import { read, transaction } from '../db/run.js';
import { statement, type Param, type Params } from '../db/statement.js';
import { all, first, type Work } from '../db/work.js';
import type { Cost } from '../db/statement.js';
import type { ArtworkRow, Db, EventRow } from '../db/types.js';
import { enqueue } from './jobs.js';
import type { FeedRunRow } from './feeds.js';
import { isPostgres, lockForUpdate } from './sql.js';
import { DAY_MS } from '../domain/days.js';
import { PROBLEMS_KEPT } from '../schemas/feeds.js';

/** The job kind of an undo (docs/api.md, Runs: undo a run): one job per undo run, key `undo:<undo run id>`. */
export const UNDO_JOB = 'undo';

/** One of a run's own problems: a record the undo left as it is, and why (docs/api.md, Runs). */
export interface UndoProblem {
  id: number;
  field: string | null;
  message: string;
  level: 'warning';
}

/** What an undo did, as a run's counts: `deleted` went to the trash, `created` came back from it, `updated` got fields back. */
export interface UndoCounts {
  rows: number; created: number; updated: number; unchanged: number; deleted: number; refused: number; duplicates: number;
}

const runForUndo = statement((db, p: Params<{ entityId: number; id: number }>) => lockForUpdate(db,
  db.selectFrom('feed_runs').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id)));
const insertUndoRun = statement((db, p: Params<{ entityId: number; recordKind: 'artworks' | 'events'; source: string; undoOf: number; at: string }>) =>
  db.insertInto('feed_runs').values({
    feed_id: null, entity_id: p.entityId, kind: 'undo', record_kind: p.recordKind, source: p.source, undo_of: p.undoOf,
    status: 'queued', queued_at: p.at,
  }).returningAll());
// The database decides between two undos at once: only one sets `undone_by` (the other updates no row).
const markUndone = statement((db, p: Params<{ id: number; by: number }>) => db.updateTable('feed_runs')
  .set({ undone_by: p.by }).where('id', '=', p.id).where('undone_by', 'is', null).returning('id'));
// A feed whose run is undone waits for a person, and its next run reads the file whole (no 304, no equal hash).
const pauseForUndo = statement((db, p: Params<{ entityId: number; id: number; reason: string }>) => db.updateTable('feeds')
  .set({ paused: 1, paused_reason: p.reason, etag: null, last_modified: null, body_hash: null })
  .where('entity_id', '=', p.entityId).where('id', '=', p.id));

/** Why a run cannot be undone now, or undefined when it can (docs/api.md, Runs: undo a run). */
export function undoRefusal(run: FeedRunRow, now: number, trashDays: number): ApiError | undefined {
  if (run.kind === 'undo') {
    return new ApiError('conflict', `Run ${run.id} is an undo: an undo is not undone again. Undo it by hand: restore from the Trash, or edit the records.`);
  }
  if (run.status === 'queued' || run.status === 'running') {
    return new ApiError('conflict', `Run ${run.id} is ${run.status}: it can be undone once it has ended.`);
  }
  if (run.undone_by !== null) {
    return new ApiError('conflict', `Run ${run.id} was undone already, by run ${run.undone_by}.`, { undone_by: run.undone_by });
  }
  const ended = run.finished_at === null ? NaN : Date.parse(run.finished_at);
  if (!(ended + trashDays * DAY_MS > now)) {
    return new ApiError('conflict', `Run ${run.id} ended more than ${trashDays} days ago: what it deleted has left the trash, so it can no longer be undone.`);
  }
  return undefined;
}

/**
 * Starts the undo of a run (docs/api.md, Runs: undo a run): in one transaction the undo run is
 * queued, the run is marked `undone_by` it (two requests at once: the database lets one through, the
 * other is a 409 `conflict`), a feed's run pauses its feed, and the job that does the undo is queued.
 * `check` is what the caller checks of the run first (the API: the write scope of its kind, 403), on
 * the row read here: the run is read once.
 */
export function startUndo(db: Db, entityId: number, runId: number, trashDays: number, at: string, check?: (run: FeedRunRow) => void): Promise<FeedRunRow> {
  return transaction(db, function* () {
    const run = yield* first(runForUndo, { entityId, id: runId });
    if (!run) throw notFound('Run');
    check?.(run);
    const refusal = undoRefusal(run, Date.parse(at), trashDays);
    if (refusal) throw refusal;
    const undo = (yield* first(insertUndoRun, {
      entityId, recordKind: run.record_kind ?? 'artworks', source: `undo:${run.id}`, undoOf: run.id, at,
    }))!;
    if (!(yield* first(markUndone, { id: run.id, by: undo.id }))) {
      const by = (yield* first(runForUndo, { entityId, id: runId }))?.undone_by ?? null;
      throw new ApiError('conflict', `Run ${run.id} was undone already${by === null ? '' : `, by run ${by}`}.`, by === null ? {} : { undone_by: by });
    }
    if (run.feed_id !== null) yield* all(pauseForUndo, { entityId, id: run.feed_id, reason: `run ${run.id} undone` });
    yield* enqueue(UNDO_JOB, { key: `undo:${undo.id}`, entityId, dueAt: at, at });
    return undo;
  });
}

/** A changelog entry of a run, as the undo reads it. */
export interface RunEntry {
  id: number;
  entity_type: string;
  record_id: number;
  action: string;
  field_changes: string;
}

const ENTRIES_PAGE = 500;
// Over the (owner_id, run_id, id) index: a bounded page wherever it starts.
const runEntries = statement((db, p: Params<{ entityId: number; runId: number; after: number }>) => db.selectFrom('changelog')
  .select(['id', 'entity_type', 'record_id', 'action', 'field_changes'])
  .where('owner_id', '=', p.entityId).where('run_id', '=', p.runId).where('id', '>', p.after)
  .orderBy('id').limit(sql.lit(ENTRIES_PAGE)));

/** A run's changelog entries in order, a bounded read per page (`after`: the last id of the previous page). */
export const runEntriesPage = (db: Db, entityId: number, runId: number, after: number): Promise<{ entries: RunEntry[]; more: boolean }> =>
  read(db, function* () {
    const entries = yield* all(runEntries, { entityId, runId, after });
    return { entries: entries.map((e) => ({ ...e, id: Number(e.id), record_id: Number(e.record_id) })), more: entries.length === ENTRIES_PAGE };
  });

/** A record's entries of some runs (the undone run and its undos), as the undo reads it. */
export interface RecordEntry extends RunEntry { run_id: number }

// Many ids in one statement: an array on PostgreSQL, a JSON array on SQLite.
const idList = (db: Db, ids: Param<number[] | string>) => (isPostgres(db)
  ? sql<number>`(select unnest(cast(${ids} as integer[])))` : sql<number>`(select value from json_each(${ids}))`);
const listParam = (db: Db, ids: readonly number[]): number[] | string => (isPostgres(db) ? [...ids] : JSON.stringify(ids));

// Over the (owner_id, entity_type, record_id, id) index: each record's own history, filtered to the runs.
const entriesOfRecords = statement((db, p: Params<{ entityId: number; entityType: ChangeEntityType; ids: number[] | string; runs: number[] | string }>) =>
  db.selectFrom('changelog').select(['id', 'entity_type', 'record_id', 'action', 'field_changes', 'run_id'])
    .where('owner_id', '=', p.entityId).where('entity_type', '=', p.entityType)
    .where('record_id', 'in', idList(db, p.ids)).where('run_id', 'in', idList(db, p.runs))
    .orderBy('record_id').orderBy('id'), { cost: 'scan' });

/** The entries of these runs for a page of one kind's records (at most a page of ids), by record in order. */
export const entriesOfRecordsPage = (db: Db, entityId: number, entityType: ChangeEntityType, ids: readonly number[], runs: readonly number[]): Promise<RecordEntry[]> =>
  read(db, function* () {
    const rows = yield* all(entriesOfRecords, { entityId, entityType, ids: listParam(db, ids), runs: listParam(db, runs) });
    return rows.map((e) => ({ ...e, id: Number(e.id), record_id: Number(e.record_id), run_id: Number(e.run_id) }));
  });

const undosOfRun = statement((db, p: Params<{ entityId: number; runId: number }>) => db.selectFrom('feed_runs').select('id')
  .where('entity_id', '=', p.entityId).where('kind', '=', 'undo').where('undo_of', '=', p.runId), { cost: 'scan' as Cost });

/** The undo runs of a run (an undo given up leaves its writes: a later undo takes them as done). */
export const undosOf = (db: Db, entityId: number, runId: number): Promise<number[]> => read(db, function* () {
  return (yield* all(undosOfRun, { entityId, runId })).map((row) => Number(row.id));
});

const liveArtworks = statement((db, p: Params<{ entityId: number; ids: number[] | string }>) =>
  db.selectFrom('artworks').selectAll().where('entity_id', '=', p.entityId).where('id', 'in', idList(db, p.ids)));
const liveEvents = statement((db, p: Params<{ entityId: number; ids: number[] | string }>) =>
  db.selectFrom('events').selectAll().where('entity_id', '=', p.entityId).where('id', 'in', idList(db, p.ids)));
const trashedIds = statement((db, p: Params<{ entityId: number; kind: 'artworks' | 'events'; ids: number[] | string }>) => db.selectFrom('trash')
  .select('record_id').where('owner_id', '=', p.entityId).where('kind', '=', p.kind).where('record_id', 'in', idList(db, p.ids)));

/** A batch's records as they are now (at most a batch of ids: two statements), in the batch's transaction. */
export function* recordsNow(db: Db, entityId: number, kind: 'artworks' | 'events', ids: readonly number[]): Work<Map<number, RecordNow>> {
  const list = listParam(db, ids);
  const rows: Array<ArtworkRow | EventRow> = kind === 'artworks' ? yield* all(liveArtworks, { entityId, ids: list }) : yield* all(liveEvents, { entityId, ids: list });
  const now = new Map<number, RecordNow>(ids.map((id) => [id, { state: 'gone' }]));
  for (const row of rows) now.set(Number(row.id), { state: 'live', row });
  const missing = ids.filter((id) => now.get(id)!.state === 'gone');
  if (missing.length > 0) for (const { record_id } of yield* all(trashedIds, { entityId, kind, ids: listParam(db, missing) })) now.set(Number(record_id), { state: 'trash' });
  return now;
}

/** The undo ended meanwhile (the queue gave it up): its batch is rolled back, and nothing more is written. */
export class UndoEnded extends Error {}

const progressIfRunning = statement((db, p: Params<{ id: number; counts: string; problems: string }>) => db.updateTable('feed_runs')
  .set({ counts: p.counts, problems: p.problems }).where('id', '=', p.id).where('status', '=', 'running').returning('id'));

/** What an undo did so far, in the transaction of its batch (the last statement): throws `UndoEnded` once it is no longer running. */
export function* undoProgress(id: number, counts: UndoCounts, problems: readonly UndoProblem[]): Work<void> {
  if (!(yield* first(progressIfRunning, { id, counts: JSON.stringify(counts), problems: JSON.stringify(problems.slice(0, PROBLEMS_KEPT)) }))) {
    throw new UndoEnded(`undo run ${id} is no longer running`);
  }
}

const undoRunById = statement((db, p: Params<{ id: number }>) => db.selectFrom('feed_runs').selectAll().where('id', '=', p.id).where('kind', '=', 'undo'));
const beginUndoRow = statement((db, p: Params<{ id: number; at: string }>) => db.updateTable('feed_runs')
  .set({ status: 'running', started_at: p.at }).where('id', '=', p.id).where('status', 'in', ['queued', 'running']).returningAll());
const endUndoRow = statement((db, p: Params<{ id: number; at: string; counts: string; problems: string }>) =>
  db.updateTable('feed_runs').set({ status: 'applied', finished_at: p.at, counts: p.counts, problems: p.problems, error: null })
    .where('id', '=', p.id).where('status', 'in', ['queued', 'running']));
const failUndoRow = statement((db, p: Params<{ id: number; at: string; error: string }>) =>
  db.updateTable('feed_runs').set({ status: 'failed', finished_at: p.at, error: p.error })
    .where('id', '=', p.id).where('status', 'in', ['queued', 'running']));

/** The undo run a job does, started (`running`; a run taken over stays so); undefined once it has ended. */
export const beginUndo = (db: Db, id: number, at: string): Promise<FeedRunRow | undefined> => transaction(db, function* () {
  const run = yield* first(undoRunById, { id });
  if (!run || (run.status !== 'queued' && run.status !== 'running')) return undefined;
  return yield* first(beginUndoRow, { id, at: run.started_at ?? at });
});

/** What an undo did so far (a process that dies keeps it: its taker goes on from there). */
export const recordUndoProgress = (db: Db, id: number, counts: UndoCounts, problems: readonly UndoProblem[]): Promise<void> =>
  transaction(db, function* () {
    yield* all(progressIfRunning, { id, counts: JSON.stringify(counts), problems: JSON.stringify(problems.slice(0, PROBLEMS_KEPT)) });
  });

/** The end of an undo run: `applied` with what it did. */
export function* endUndo(id: number, outcome: { counts: UndoCounts; problems: readonly UndoProblem[] }, at: string): Work<void> {
  yield* all(endUndoRow, { id, at, counts: JSON.stringify(outcome.counts), problems: JSON.stringify(outcome.problems.slice(0, PROBLEMS_KEPT)) });
}

const releaseRun = statement((db, p: Params<{ id: number; undoId: number }>) => db.updateTable('feed_runs')
  .set({ undone_by: null }).where('id', '=', p.id).where('undone_by', '=', p.undoId));

/**
 * An undo the queue gave up (it took too long, or its processes kept dying): `failed`, with what it
 * did so far (its counts and problems as of its last batch; its writes stay in the changelog under
 * its run), and the run it undid is let go (`undone_by` null), so a person can undo it again: that
 * undo takes the records this one wrote as done.
 */
export function* failUndo(id: number, error: string, at: string): Work<void> {
  const undo = yield* first(undoRunById, { id });
  if (!undo || (undo.status !== 'queued' && undo.status !== 'running')) return;
  yield* all(failUndoRow, { id, at, error });
  if (undo.undo_of !== null) yield* all(releaseRun, { id: undo.undo_of, undoId: id });
}

/** A record as it is now: live (its row), in the trash, or gone for good. */
export type RecordNow = { state: 'live'; row: ArtworkRow | EventRow } | { state: 'trash' } | { state: 'gone' };

export const recordNow = (db: Db, entityId: number, kind: 'artworks' | 'events', id: number): Promise<RecordNow> => read(db, function* () {
  return (yield* recordsNow(db, entityId, kind, [id])).get(id)!;
});
