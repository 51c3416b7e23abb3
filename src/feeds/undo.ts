import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { nowIso } from '../clock.js';
import { viewsText } from '../domain/artwork.js';
import type { FieldChanges } from '../domain/diff.js';
import type { ChangeEntityType } from '../schemas/changelog.js';
import { ApiError } from '../domain/errors.js';
import type { JobKind } from '../jobs/index.js';
import type { Work } from '../db/work.js';
import { WRITABLE_ARTWORK_FIELDS, type ViewInput } from '../schemas/artworks.js';
import { WRITABLE_EVENT_FIELDS } from '../schemas/events.js';
import { transaction } from '../db/run.js';
import type { Db } from '../db/types.js';
import {
  deleteArtwork, deleteArtworkWork, restoreArtwork, restoreArtworkWork, updateArtwork, updateArtworkWork,
} from '../store/artworks.js';
import type { Actor } from '../store/changelog.js';
import { findEntity } from '../store/entities.js';
import { deleteEvent, deleteEventWork, restoreEvent, restoreEventWork, updateEvent, updateEventWork } from '../store/events.js';
import { isPostgres } from '../store/sql.js';
import { PROBLEMS_KEPT } from '../schemas/feeds.js';
import {
  UNDO_JOB, UndoEnded, beginUndo, endUndo, entriesOfRecordsPage, failUndo, recordNow, recordsNow, recordUndoProgress, runEntriesPage, undoProgress, undosOf,
  type RecordEntry, type RecordNow, type UndoCounts, type UndoProblem,
} from '../store/undo.js';

type Kind = 'artworks' | 'events';
type Values = Record<string, unknown>;

type Step = 'trash' | 'restore' | 'revert';

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
  /** An undo of the run wrote it already: this one (a process that died after it) or one given up before. */
  done?: { step: Step; self: boolean };
}

const KIND_OF_ENTRY: Record<string, Kind> = { artwork: 'artworks', event: 'events' };
const STEP_OF_ACTION: Record<string, Step> = { delete: 'trash', create: 'restore', update: 'revert' };
/** Only what a person writes is put back: computed fields (sync time, fingerprint, slug, feed) never are. */
const REVERTIBLE: Record<Kind, ReadonlySet<string>> = {
  artworks: new Set<string>(WRITABLE_ARTWORK_FIELDS), events: new Set<string>(WRITABLE_EVENT_FIELDS),
};

/**
 * A run's records, a page at a time, each once, in the order the run first wrote them: memory holds
 * one page of entries and its records whatever the run's size. A page of the run's entries (by id)
 * names its records; one read per kind then gives those records' entries of the run and of its undos
 * (by record, over the changelog's record index). A record whose first entry of the run came before
 * the page was handed out with an earlier page. `undoIds`: the undos whose writes count as done
 * (`self`: this one).
 */
async function* runRecords(db: Db, entityId: number, runId: number, undoIds: readonly number[], self: number | null): AsyncGenerator<RecordWrites[]> {
  let after = 0;
  for (;;) {
    const { entries, more } = await runEntriesPage(db, entityId, runId, after);
    const idsByKind = new Map<ChangeEntityType, Set<number>>();
    for (const entry of entries) {
      if (!KIND_OF_ENTRY[entry.entity_type]) continue; // an artist's entry: artists follow their works
      let ids = idsByKind.get(entry.entity_type as ChangeEntityType);
      if (!ids) idsByKind.set(entry.entity_type as ChangeEntityType, (ids = new Set()));
      ids.add(entry.record_id);
    }
    const records = new Map<string, { first: number; writes: RecordWrites }>();
    for (const [entityType, ids] of idsByKind) {
      for (const entry of await entriesOfRecordsPage(db, entityId, entityType, [...ids], [runId, ...undoIds])) addEntry(records, entry, runId, self);
    }
    // In the order the page first names them; those first written before the page are done with.
    const page: RecordWrites[] = [];
    for (const entry of entries) {
      const record = records.get(`${entry.entity_type}:${entry.record_id}`);
      if (record && record.first === entry.id) page.push(record.writes);
    }
    if (page.length > 0) yield page;
    if (!more) return;
    after = entries.at(-1)!.id;
    await yieldToEventLoop();
  }
}

function addEntry(records: Map<string, { first: number; writes: RecordWrites }>, entry: RecordEntry, runId: number, self: number | null): void {
  const kind = KIND_OF_ENTRY[entry.entity_type]!;
  const key = `${entry.entity_type}:${entry.record_id}`;
  let record = records.get(key);
  if (entry.run_id !== runId) {
    // An undo's entry (entries come by record, in id order: the run's own first).
    const step = STEP_OF_ACTION[entry.action];
    if (record && step && !record.writes.done) record.writes.done = { step, self: entry.run_id === self };
    return;
  }
  if (!record) {
    record = { first: entry.id, writes: { kind, id: entry.record_id, created: entry.action === 'create', deleted: false, fields: new Map() } };
    records.set(key, record);
  }
  const writes = record.writes;
  writes.deleted = entry.action === 'delete';
  if (entry.action === 'delete') return;
  const changes = JSON.parse(entry.field_changes) as FieldChanges;
  for (const [field, change] of Object.entries(changes)) {
    if (!REVERTIBLE[kind].has(field)) continue;
    const seen = writes.fields.get(field);
    writes.fields.set(field, { old: seen ? seen.old : change.old, new: change.new });
  }
}

/** What an undo of a run will do, counted from the run's writes (the console shows it before the Undo). */
export interface UndoPlan { toTrash: number; fieldsBack: number; recordsBack: number; restores: number }

export async function undoPlan(db: Db, entityId: number, runId: number): Promise<UndoPlan> {
  const plan: UndoPlan = { toTrash: 0, fieldsBack: 0, recordsBack: 0, restores: 0 };
  // What an undo given up wrote is done: a new undo leaves it.
  for await (const page of runRecords(db, entityId, runId, await undosOf(db, entityId, runId), null)) for (const record of page) {
    if (record.done) continue;
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
function stepOf(record: RecordWrites): Step | 'none' {
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

interface Progress { counts: UndoCounts; problems: UndoProblem[]; listed: Set<string> }

/** Lists a problem once, up to the most a run keeps (PROBLEMS_KEPT): memory holds no more, whatever the run's size. */
function list(progress: Progress, item: UndoProblem): void {
  const key = `${item.id}|${item.field ?? ''}|${item.message}`;
  if (progress.listed.has(key) || progress.problems.length >= PROBLEMS_KEPT) return;
  progress.listed.add(key);
  progress.problems.push(item);
}

/** Records per transaction at most, and the first batch's. */
const BATCH_RECORDS = 100;
const BATCH_FIRST = 8;
/**
 * A batch's time: on SQLite its transaction runs on the event loop, so a request waits about this
 * long, plus one record's time (docs/performance.md, Undo); on PostgreSQL it waits on round trips, not
 * on the loop, and a longer batch only holds its records' row locks a little longer.
 */
const batchMs = (db: Db): number => (isPostgres(db) ? 50 : 5);

/**
 * Does an undo run (docs/api.md, Runs: undo a run) in batches: each a transaction of up to
 * BATCH_RECORDS records (fewer at first, then about twice what the last one's time allowed) or about
 * `batchMs` of work, through the store's writes (changelog with the
 * undo's `run_id` and source, counts, webhooks), with the undo's counts and problems so far as its
 * last statement; a turn for requests after each. A batch commits whole or not at all, so a record the
 * undo already wrote (its changelog holds an entry of the undo: a process died after it) is skipped,
 * a taken-over undo goes on where its process stopped, and each record is either before or after it.
 * A record the store refuses (a live record has its identity, …) rolls its batch back: the records
 * before it go again as a batch, it goes alone through the store's own transaction and is listed.
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
  // Its own writes (a process that died) and those of an undo of the run given up before are done.
  const undoIds = await undosOf(db, entity.id, undo.undo_of);
  for await (const page of runRecords(db, entity.id, undo.undo_of, undoIds, undo.id)) {
    const todo: RecordWrites[] = [];
    for (const record of page) {
      if (!record.done) {
        todo.push(record);
        continue;
      }
      progress.counts.rows++;
      if (record.done.self) count(progress.counts, record.done.step);
      else progress.counts.unchanged++;
    }
    let next = 0;
    let limit = BATCH_FIRST;
    while (next < todo.length) {
      signal?.throwIfAborted();
      const batch = await undoBatch(db, actor, todo.slice(next, next + limit), progress);
      if ('handled' in batch) {
        next += batch.handled;
        // The next batch reads about as many records as this one's time let it do.
        limit = Math.min(BATCH_RECORDS, Math.max(BATCH_FIRST, 2 * batch.handled));
      } else if (batch.refusedAt > 0) {
        limit = batch.refusedAt;
      } else {
        await undoAlone(db, actor, todo[next]!, progress);
        next++;
        limit = BATCH_FIRST;
      }
      await yieldToEventLoop();
    }
  }
  return { counts: progress.counts, problems: progress.problems };
}

/** One batch in one transaction: how many records it did, or the index of the record that rolled it back. */
async function undoBatch(db: Db, actor: Actor, records: readonly RecordWrites[], progress: Progress): Promise<{ handled: number } | { refusedAt: number }> {
  const at = { record: 0 };
  const budget = batchMs(db);
  try {
    const done = await transaction(db, function* () {
      const started = performance.now();
      const counts = { ...progress.counts };
      const found: UndoProblem[] = [];
      const { kind } = records[0]!;
      const now = yield* recordsNow(db, actor.entityId, kind, records.map((record) => record.id));
      let handled = 0;
      for (const record of records) {
        if (record.kind !== kind || (handled > 0 && performance.now() - started >= budget)) break;
        at.record = handled;
        counts.rows++;
        const outcome = yield* undoRecordWork(db, actor, record, now.get(record.id)!, found);
        if (outcome !== 'none') count(counts, outcome);
        else counts.unchanged++;
        handled++;
      }
      yield* undoProgress(actor.runId!, counts, [...progress.problems, ...found]);
      return { handled, counts, found };
    });
    progress.counts = done.counts;
    for (const item of done.found) list(progress, item);
    return { handled: done.handled };
  } catch (error) {
    if (error instanceof UndoEnded) throw error;
    // The batch wrote nothing: a record the store refused, or the database failed (the record alone says which).
    return { refusedAt: at.record };
  }
}

/** One record in the store's own transaction (its refusal listed), then the undo's progress. */
async function undoAlone(db: Db, actor: Actor, record: RecordWrites, progress: Progress): Promise<void> {
  progress.counts.rows++;
  const outcome = await undoRecord(db, actor, record, progress);
  if (outcome !== 'none') count(progress.counts, outcome);
  else progress.counts.unchanged++;
  await recordUndoProgress(db, actor.runId!, progress.counts, progress.problems);
}

const STORE_WORK = {
  artworks: { remove: deleteArtworkWork, restore: restoreArtworkWork, update: updateArtworkWork },
  events: { remove: deleteEventWork, restore: restoreEventWork, update: updateEventWork },
} as const;

/** What the undo does to one record as it is now: a step, or nothing with the reasons to list. */
type Decision =
  | { step: 'none'; problems: UndoProblem[] }
  | { step: 'restore' }
  | { step: 'trash'; row: Values }
  | { step: 'revert'; patchOf: (current: Values) => Values; kept: string[] };

/**
 * The one reading of what to do with a record (docs/api.md, Runs: undo a run), for a batch and for a
 * record alone alike: a record deleted since is skipped, one restored already too, a revert of only
 * fields changed since does nothing.
 */
function decide(record: RecordWrites, now: RecordNow): Decision {
  const step = stepOf(record);
  const id = record.id;
  const none = (...problems: UndoProblem[]): Decision => ({ step: 'none', problems });
  if (step === 'none') return none();
  if (step === 'restore') {
    if (now.state === 'trash') return { step };
    return none(problem(id, null, now.state === 'live' ? 'restored already: skipped' : 'deleted for good since the run: not restored'));
  }
  if (now.state !== 'live') return none(problem(id, null, now.state === 'trash' ? 'in the trash already: skipped' : 'deleted for good since the run: skipped'));
  if (step === 'trash') return { step, row: now.row as unknown as Values };
  const { patchOf, kept } = revertPatch(record);
  if (Object.keys(patchOf(now.row)).length === 0) return none(...keptProblems(id, kept));
  return { step, patchOf, kept };
}

const keptProblems = (id: number, kept: readonly string[]): UndoProblem[] => kept.map((field) => problem(id, field, CHANGED_SINCE));

/** The fields of a record sent to the trash that were changed since the run: listed, the record goes all the same. */
const editedProblems = (record: RecordWrites, row: Values): UndoProblem[] => [...record.fields]
  .filter(([field, change]) => !holds(row, field, change.new))
  .map(([field]) => problem(record.id, field, 'changed since the run; the record went to the trash all the same'));

/**
 * Undoes one record inside its batch's transaction; what it did (`none`: left as it is, and listed in
 * `found`). A refusal of the store's rules throws, and rolls the batch back.
 */
function* undoRecordWork(db: Db, actor: Actor, record: RecordWrites, now: RecordNow, found: UndoProblem[]): Work<Step | 'none'> {
  const decision = decide(record, now);
  const store = STORE_WORK[record.kind];
  const id = record.id;
  if (decision.step === 'none') {
    found.push(...decision.problems);
  } else if (decision.step === 'restore') {
    yield* store.restore(db, actor, id);
  } else if (decision.step === 'trash') {
    found.push(...editedProblems(record, yield* store.remove(db, actor, id)));
  } else {
    yield* (store.update as (db: Db, actor: Actor, id: number, patchOf: (existing: Values) => Values) => Work<unknown>)(db, actor, id, decision.patchOf);
    // `kept` as worked out again on the locked row.
    found.push(...keptProblems(id, decision.kept));
  }
  return decision.step;
}

/** A record's fields back, only those still as the run left them (worked out again on the locked row); `kept`: the others. */
function revertPatch(record: RecordWrites): { patchOf: (current: Values) => Values; kept: string[] } {
  const kept: string[] = [];
  const patchOf = (current: Values): Values => {
    const patch: Values = {};
    kept.length = 0;
    for (const [field, change] of record.fields) {
      if (holds(current, field, change.new)) patch[field] = stored(field, change.old);
      else kept.push(field);
    }
    return patch;
  };
  return { patchOf, kept };
}

/** What an undo did: its run's counts and problems, written with its job's end (in that transaction). */
export interface UndoOutcome { counts: UndoCounts; problems: UndoProblem[] }

const emptyCounts = (): UndoCounts => ({ rows: 0, created: 0, updated: 0, unchanged: 0, deleted: 0, refused: 0, duplicates: 0 });

function count(counts: UndoCounts, step: Step): void {
  if (step === 'trash') counts.deleted++;
  else if (step === 'restore') counts.created++;
  else counts.updated++;
}

const STORE = {
  artworks: { remove: deleteArtwork, restore: restoreArtwork, update: updateArtwork },
  events: { remove: deleteEvent, restore: restoreEvent, update: updateEvent },
} as const;

/** Why the store refused a record's step, as the undo lists it. */
function refusalOf(step: Step, error: ApiError): string {
  const holder = error.extras.existing_id === undefined ? '' : ` (#${error.extras.existing_id})`;
  if (step === 'restore') {
    if (error.code === 'duplicate') return `not restored: a live record${holder} now has its identity`;
    return error.status === 404 ? 'restored or deleted for good meanwhile: skipped' : `not restored: ${error.message}`;
  }
  if (step === 'revert' && error.code === 'duplicate') return `not put back: another record${holder} now has the identity it would get back`;
  if (error.status === 404) return 'deleted meanwhile: skipped';
  return `${step === 'trash' ? 'not moved to the trash' : 'not put back'}: ${error.message}`;
}

/**
 * Undoes one record in the store's own transaction (which names a record holding the identity it
 * would take); what it did (`none`: left as it is, and listed). Any refusal of the store's rules is
 * listed: one record never stops the undo.
 */
async function undoRecord(db: Db, actor: Actor, record: RecordWrites, progress: Progress): Promise<Step | 'none'> {
  if (stepOf(record) === 'none') return 'none';
  const decision = decide(record, await recordNow(db, actor.entityId, record.kind, record.id));
  const store = STORE[record.kind];
  const id = record.id;
  let problems: UndoProblem[] = [];
  try {
    if (decision.step === 'none') problems = decision.problems;
    else if (decision.step === 'restore') await store.restore(db, actor, id);
    else if (decision.step === 'trash') {
      problems = editedProblems(record, decision.row);
      await store.remove(db, actor, id);
    } else {
      await (store.update as (db: Db, actor: Actor, id: number, change: (existing: Values) => Values) => Promise<unknown>)(db, actor, id, decision.patchOf);
      problems = keptProblems(id, decision.kept);
    }
  } catch (error) {
    if (!(error instanceof ApiError) || decision.step === 'none') throw error;
    list(progress, problem(id, null, refusalOf(decision.step, error)));
    return 'none';
  }
  for (const item of problems) list(progress, item);
  return decision.step;
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
export function undoJobKind(db: Db, concurrency = 1, timeoutMs = UNDO_TIMEOUT_MS): JobKind<null> {
  return {
    name: UNDO_JOB,
    concurrency,
    timeoutMs,
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
