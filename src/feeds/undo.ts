import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { nowIso } from '../clock.js';
import { viewsText } from '../domain/artwork.js';
import type { FieldChanges } from '../domain/diff.js';
import { ApiError } from '../domain/errors.js';
import type { JobKind } from '../jobs/index.js';
import type { Work } from '../db/work.js';
import { WRITABLE_ARTWORK_FIELDS, type ViewInput } from '../schemas/artworks.js';
import { WRITABLE_EVENT_FIELDS } from '../schemas/events.js';
import type { Db } from '../db/types.js';
import { deleteArtwork, restoreArtwork, updateArtwork } from '../store/artworks.js';
import type { Actor } from '../store/changelog.js';
import { findEntity } from '../store/entities.js';
import { deleteEvent, restoreEvent, updateEvent } from '../store/events.js';
import {
  UNDO_JOB, beginUndo, endUndo, failUndo, recordNow, recordUndoProgress, runEntriesPage, type RunEntry, type UndoCounts, type UndoProblem,
} from '../store/undo.js';

type Kind = 'artworks' | 'events';
type Values = Record<string, unknown>;

/** What a run did to one record, from its changelog entries in order. */
interface RecordWrites {
  kind: Kind;
  id: number;
  /** The run created it (its first entry is a `create`). */
  created: boolean;
  /** Its last entry is a `delete`. */
  deleted: boolean;
  /** Per writable field: its value before the run's first change of it, and after the run's last. */
  fields: Map<string, { old: unknown; new: unknown }>;
}

const KIND_OF_ENTRY: Record<string, Kind> = { artwork: 'artworks', event: 'events' };
/** Only what a person writes is put back: computed fields (sync time, fingerprint, slug, feed) never are. */
const REVERTIBLE: Record<Kind, ReadonlySet<string>> = {
  artworks: new Set<string>(WRITABLE_ARTWORK_FIELDS), events: new Set<string>(WRITABLE_EVENT_FIELDS),
};

/** Reads a run's writes, page by page (a bounded read each), one summary per record in the order first written. */
export async function runWrites(db: Db, entityId: number, runId: number): Promise<Map<string, RecordWrites>> {
  const records = new Map<string, RecordWrites>();
  let after = 0;
  for (;;) {
    const { entries, more } = await runEntriesPage(db, entityId, runId, after);
    for (const entry of entries) addEntry(records, entry);
    if (!more) return records;
    after = entries.at(-1)!.id;
    await yieldToEventLoop();
  }
}

function addEntry(records: Map<string, RecordWrites>, entry: RunEntry): void {
  const kind = KIND_OF_ENTRY[entry.entity_type];
  if (!kind) return; // an artist's entry: artists follow their works
  const key = `${kind}:${entry.record_id}`;
  let record = records.get(key);
  if (!record) {
    record = { kind, id: entry.record_id, created: entry.action === 'create', deleted: false, fields: new Map() };
    records.set(key, record);
  }
  record.deleted = entry.action === 'delete';
  if (entry.action === 'delete') return;
  const changes = JSON.parse(entry.field_changes) as FieldChanges;
  for (const [field, change] of Object.entries(changes)) {
    if (!REVERTIBLE[kind].has(field)) continue;
    const seen = record.fields.get(field);
    record.fields.set(field, { old: seen ? seen.old : change.old, new: change.new });
  }
}

/** What an undo of a run will do, counted from the run's writes (the console shows it before the Undo). */
export interface UndoPlan { toTrash: number; fieldsBack: number; recordsBack: number; restores: number }

export async function undoPlan(db: Db, entityId: number, runId: number): Promise<UndoPlan> {
  const plan: UndoPlan = { toTrash: 0, fieldsBack: 0, recordsBack: 0, restores: 0 };
  for (const record of (await runWrites(db, entityId, runId)).values()) {
    const step = stepOf(record);
    if (step === 'trash') plan.toTrash++;
    else if (step === 'restore') plan.restores++;
    else if (step === 'revert' && record.fields.size > 0) {
      plan.recordsBack++;
      plan.fieldsBack += record.fields.size;
    }
  }
  return plan;
}

/** A record the run created and left goes to the trash; one it deleted comes back; one it changed gets its fields back. */
function stepOf(record: RecordWrites): 'trash' | 'restore' | 'revert' | 'none' {
  if (record.created) return record.deleted ? 'none' : 'trash';
  return record.deleted ? 'restore' : 'revert';
}

/** The stored form of a field's value as the changelog shows it (more views: arrays there, canonical text in the row). */
const stored = (field: string, value: unknown): unknown =>
  (field === 'additional_images' ? viewsText(value as ViewInput[] | null) : value ?? null);

/** Whether the record still holds what the run wrote to this field. */
const holds = (row: Values, field: string, wrote: unknown): boolean => (row[field] ?? null) === stored(field, wrote);

const problem = (id: number, field: string | null, message: string): UndoProblem => ({ id, field, message, level: 'warning' });

const CHANGED_SINCE = 'changed since the run';
const PROGRESS_EVERY = 200;

interface Progress { counts: UndoCounts; problems: UndoProblem[]; listed: Set<string> }

function list(progress: Progress, item: UndoProblem): void {
  const key = `${item.id}|${item.field ?? ''}|${item.message}`;
  if (progress.listed.has(key)) return;
  progress.listed.add(key);
  progress.problems.push(item);
}

/**
 * Does an undo run (docs/api.md, Runs: undo a run), each record in a transaction of its own through
 * the store's writes (changelog with the undo's `run_id` and source, counts, webhooks). A record the
 * undo already wrote (its changelog holds an entry of the undo: a process died after it) is skipped, so
 * a taken-over undo goes on where its process stopped and each record is either before or after it.
 */
export async function runUndo(db: Db, undoId: number, signal?: AbortSignal): Promise<UndoOutcome | undefined> {
  const undo = await beginUndo(db, undoId, nowIso());
  if (!undo || undo.entity_id === null || undo.undo_of === null) return undefined;
  const entity = await findEntity(db, undo.entity_id);
  if (!entity) return undefined;
  const actor: Actor = { entityId: entity.id, entitySlug: entity.slug, source: undo.source ?? `undo:${undo.undo_of}`, runId: undo.id, feedId: null };
  const saved = undo.problems === null ? [] : JSON.parse(undo.problems) as UndoProblem[];
  const progress: Progress = { counts: emptyCounts(), problems: [], listed: new Set() };
  for (const item of saved) list(progress, item);
  // What the undo wrote before (a process that died): those records are done, counted by what was written.
  const done = await runWrites(db, entity.id, undo.id);
  for (const record of done.values()) count(progress.counts, record.created ? 'restore' : record.deleted ? 'trash' : 'revert');
  const writes = await runWrites(db, entity.id, undo.undo_of);
  let step = 0;
  for (const [key, record] of writes) {
    signal?.throwIfAborted();
    if (done.has(key)) continue;
    progress.counts.rows++;
    const outcome = await undoRecord(db, actor, record, progress);
    if (outcome !== 'none') count(progress.counts, outcome);
    else progress.counts.unchanged++;
    if (++step % PROGRESS_EVERY === 0) await recordUndoProgress(db, undo.id, progress.counts, progress.problems);
    // On SQLite a record's transaction runs on the event loop (about 1.5 ms): a turn for requests after each.
    await yieldToEventLoop();
  }
  progress.counts.rows += done.size;
  return { counts: progress.counts, problems: progress.problems };
}

/** What an undo did: its run's counts and problems, written with its job's end (in that transaction). */
export interface UndoOutcome { counts: UndoCounts; problems: UndoProblem[] }

const emptyCounts = (): UndoCounts => ({ rows: 0, created: 0, updated: 0, unchanged: 0, deleted: 0, refused: 0, duplicates: 0 });

function count(counts: UndoCounts, step: 'trash' | 'restore' | 'revert'): void {
  if (step === 'trash') counts.deleted++;
  else if (step === 'restore') counts.created++;
  else counts.updated++;
}

const STORE = {
  artworks: { remove: deleteArtwork, restore: restoreArtwork, update: updateArtwork },
  events: { remove: deleteEvent, restore: restoreEvent, update: updateEvent },
} as const;

/** Undoes one record; what it did (`none`: left as it is, and listed). */
async function undoRecord(db: Db, actor: Actor, record: RecordWrites, progress: Progress): Promise<'trash' | 'restore' | 'revert' | 'none'> {
  const step = stepOf(record);
  if (step === 'none') return 'none';
  const store = STORE[record.kind];
  const now = await recordNow(db, actor.entityId, record.kind, record.id);
  const id = record.id;
  if (step === 'restore') {
    if (now.state !== 'trash') {
      list(progress, problem(id, null, now.state === 'live' ? 'restored already: skipped' : 'deleted for good since the run: not restored'));
      return 'none';
    }
    try {
      await store.restore(db, actor, id);
      return 'restore';
    } catch (error) {
      if (error instanceof ApiError && error.code === 'duplicate') {
        const holder = error.extras.existing_id;
        list(progress, problem(id, null, `not restored: a live record${holder === undefined ? '' : ` (#${holder})`} now has its identity`));
        return 'none';
      }
      if (error instanceof ApiError && error.status === 404) {
        list(progress, problem(id, null, 'restored or deleted for good meanwhile: skipped'));
        return 'none';
      }
      // Any other refusal of the store's rules is listed too: one record never stops the undo.
      if (error instanceof ApiError) {
        list(progress, problem(id, null, `not restored: ${error.message}`));
        return 'none';
      }
      throw error;
    }
  }
  if (now.state !== 'live') {
    list(progress, problem(id, null, now.state === 'trash' ? 'in the trash already: skipped' : 'deleted for good since the run: skipped'));
    return 'none';
  }
  const row = now.row as unknown as Values;
  if (step === 'trash') {
    const edited = [...record.fields].filter(([field, change]) => !holds(row, field, change.new)).map(([field]) => field);
    try {
      await store.remove(db, actor, id);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      list(progress, problem(id, null, error.status === 404 ? 'deleted meanwhile: skipped' : `not moved to the trash: ${error.message}`));
      return 'none';
    }
    for (const field of edited) list(progress, problem(id, field, 'changed since the run; the record went to the trash all the same'));
    return 'trash';
  }
  // Fields back, only those still as the run left them; worked out again on the locked row.
  let kept: string[] = [];
  const patchOf = (current: Values): Values => {
    const patch: Values = {};
    kept = [];
    for (const [field, change] of record.fields) {
      if (holds(current, field, change.new)) patch[field] = stored(field, change.old);
      else kept.push(field);
    }
    return patch;
  };
  if (Object.keys(patchOf(row)).length === 0) {
    for (const field of kept) list(progress, problem(id, field, CHANGED_SINCE));
    return 'none';
  }
  try {
    await (store.update as (db: Db, actor: Actor, id: number, change: (existing: Values) => Values) => Promise<unknown>)(db, actor, id, patchOf);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const message = error.code === 'duplicate'
      ? `not put back: another record${error.extras.existing_id === undefined ? '' : ` (#${error.extras.existing_id})`} now has the identity it would get back`
      : error.status === 404 ? 'deleted meanwhile: skipped' : `not put back: ${error.message}`;
    list(progress, problem(id, null, message));
    return 'none';
  }
  for (const field of kept) list(progress, problem(id, field, CHANGED_SINCE));
  return 'revert';
}

/** A run's time limit: a 10,000-record undo takes well under a minute (docs/performance.md, Undo). */
const UNDO_TIMEOUT_MS = 30 * 60_000;
// A job whose undo had ended already records nothing.
function* noWork(): Work<void> {}
const undoIdOfJob = (key: string): number => Number(key.slice('undo:'.length));

/**
 * Undos as jobs of the one queue (src/jobs/README.md): one job per undo run, leased, and taken over
 * when its process dies (`runUndo` goes on where it stopped). The run ends `applied`, with its counts
 * and problems, in the transaction that ends the job.
 */
export function undoJobKind(db: Db, concurrency = 1): JobKind<null> {
  return {
    name: UNDO_JOB,
    concurrency,
    timeoutMs: UNDO_TIMEOUT_MS,
    async run(job, { signal }) {
      const id = undoIdOfJob(job.key);
      const outcome = await runUndo(db, id, signal);
      return { end: 'done', record: () => (outcome ? endUndo(id, outcome, nowIso()) : noWork()) };
    },
    giveUp(job, reason) {
      const id = undoIdOfJob(job.key);
      const error = reason === 'took too long' ? 'took too long' : 'the undo was interrupted too often';
      return { end: 'done', failed: error, record: () => failUndo(id, error, nowIso()) };
    },
  };
}
