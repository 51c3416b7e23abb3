import { PROBLEMS_KEPT, type FeedRunType } from '../schemas/feeds.js';
import { recordFeedRunMessages } from './webhooks.js';
import { sql } from 'kysely';
import { ApiError, invalidFields, notFound } from '../domain/errors.js';
import { isUniqueViolation } from '../db/errors.js';
import { read, transaction } from '../db/run.js';
import { statement, statementPerPageSize, type Params } from '../db/statement.js';
import type { Db, FeedRunStatus, FeedRunsTable, FeedsTable } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import type { Selectable } from 'kysely';
import { applyStats, statsUpdate, upsertStatsSlot, type StatsUpdate } from './stats.js';
import { isPostgres, lockEntity, rawQuery } from './sql.js';
import { cancel, enqueue, waitingSince } from './jobs.js';

/**
 * Feeds and their runs (docs/api.md, Feeds). A feed's run goes queued → running → its outcome; the job
 * that runs it (src/feeds) takes the feed's oldest unfinished run, or starts one when the feed is due.
 */

export type FeedRow = Selectable<FeedsTable>;
export type FeedRunRow = Selectable<FeedRunsTable>;

/** At most this many feeds per entity. */
export const FEEDS_PER_ENTITY = 10;
/** "Run now" at most once in this many milliseconds per feed. */
export const RUN_NOW_EVERY_MS = 60_000;
/** This many failed runs in a row pause the feed. */
export const FAILURES_TO_PAUSE = 5;
/** Runs are kept this long. */
export const RUNS_KEPT_MS = 90 * 24 * 3600_000;
export const RUNS_PAGE_MAX = 100;

/** The job kind of feed runs (src/feeds/job.ts): one job per feed, keyed `feed:<id>`, due at the feed's next run. */
export const FEED_RUN_JOB = 'feed_run';
const jobKey = (feedId: number): string => `feed:${feedId}`;
export const feedIdOfJob = (key: string): number => Number(key.slice('feed:'.length));

export interface FeedSpec {
  url: string;
  kind: FeedRow['kind'];
  mapping: Record<string, string | null>;
  encoding: FeedRow['encoding'];
  sheet: string | null;
  mode: FeedRow['mode'];
  interval_minutes: number;
  paused: boolean;
}

const plusMinutes = (at: string, minutes: number): string => new Date(Date.parse(at) + minutes * 60_000).toISOString();

const feedsOfEntity = statement((db, p: Params<{ entityId: number }>) =>
  db.selectFrom('feeds').selectAll().where('entity_id', '=', p.entityId).orderBy('id').limit(FEEDS_PER_ENTITY + 1));
const feedById = statement((db, p: Params<{ entityId: number; id: number }>) =>
  db.selectFrom('feeds').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id));
const feedByIdOnly = statement((db, p: Params<{ id: number }>) => db.selectFrom('feeds').selectAll().where('id', '=', p.id));
const countFeeds = statement((db, p: Params<{ entityId: number }>) =>
  db.selectFrom('feeds').select((eb) => eb.fn.countAll<number>().as('n')).where('entity_id', '=', p.entityId));
const feedByUrl = statement((db, p: Params<{ entityId: number; kind: string; url: string }>) =>
  db.selectFrom('feeds').select('id').where('entity_id', '=', p.entityId).where('kind', '=', p.kind as never).where('url', '=', p.url));

const insertFeed = statement((db, p: Params<Omit<FeedRow, 'id' | 'failures'>>) => db.insertInto('feeds').values({
  entity_id: p.entity_id, url: p.url, kind: p.kind, mapping: p.mapping, mapping_frozen: p.mapping_frozen, encoding: p.encoding, sheet: p.sheet, mode: p.mode,
  interval_minutes: p.interval_minutes, paused: p.paused, paused_reason: p.paused_reason,
  etag: p.etag, last_modified: p.last_modified, body_hash: p.body_hash, run_now_at: p.run_now_at, created_at: p.created_at,
}).returningAll());

const updateFeedRow = statement((db, p: Params<Pick<FeedRow, 'id' | 'url' | 'kind' | 'mapping' | 'encoding' | 'sheet' | 'mode'
  | 'interval_minutes' | 'paused' | 'paused_reason' | 'etag' | 'last_modified' | 'body_hash' | 'failures' | 'mapping_frozen'>>) =>
  db.updateTable('feeds').set({
    url: p.url, kind: p.kind, mapping: p.mapping, mapping_frozen: p.mapping_frozen, encoding: p.encoding, sheet: p.sheet, mode: p.mode,
    interval_minutes: p.interval_minutes, paused: p.paused, paused_reason: p.paused_reason,
    etag: p.etag, last_modified: p.last_modified, body_hash: p.body_hash, failures: p.failures,
  }).where('id', '=', p.id).returningAll());

const freezeMapping = statement((db, p: Params<{ id: number; mapping: string }>) =>
  db.updateTable('feeds').set({ mapping: p.mapping, mapping_frozen: 1 }).where('id', '=', p.id).where('mapping_frozen', '=', 0));

/**
 * Stores a feed's whole reading of its file, suggestions included, at its first read (docs/api.md,
 * Feeds): from then on a change of the words never changes how the feed reads. A feed frozen
 * meanwhile keeps its mapping.
 */
export const freezeFeedMapping = (db: Db, id: number, mapping: Record<string, string | null>): Promise<void> =>
  transaction(db, function* () { yield* all(freezeMapping, { id, mapping: JSON.stringify(mapping) }); });

const removeFeed = statement((db, p: Params<{ id: number }>) => db.deleteFrom('feeds').where('id', '=', p.id));
// A deleted feed's records stay, nobody's own any more (docs/api.md, Feeds).
const disownArtworks = statement((db, p: Params<{ feedId: number }>) => db.updateTable('artworks').set({ feed_id: null }).where('feed_id', '=', p.feedId));
const disownEvents = statement((db, p: Params<{ feedId: number }>) => db.updateTable('events').set({ feed_id: null }).where('feed_id', '=', p.feedId));
const ownedArtworks = statement((db, p: Params<{ feedId: number }>) => db.selectFrom('artworks').select('id').where('feed_id', '=', p.feedId), { cost: 'scan' });
const ownedEvents = statement((db, p: Params<{ feedId: number }>) => db.selectFrom('events').select('id').where('feed_id', '=', p.feedId), { cost: 'scan' });

/** The ids of the live records a feed owns (`feed_id`): the only ones its mirror may delete. */
export const feedOwnedIds = (db: Db, feedId: number, kind: FeedRow['kind']): Promise<Set<number>> => read(db, function* () {
  return new Set((yield* all(kind === 'artworks' ? ownedArtworks : ownedEvents, { feedId })).map((row) => Number(row.id)));
});
// A deleted feed's runs stay, of no feed, until the runs sweep: they can still be undone (docs/api.md, Runs).
const keepRunsOfFeed = statement((db, p: Params<{ feedId: number }>) => db.updateTable('feed_runs').set({ feed_id: null }).where('feed_id', '=', p.feedId));

// A feed's run: its entity, kind and changelog source are the feed's (docs/api.md, Runs).
const insertRun = statement((db, p: Params<{ feedId: number; at: string }>) => db.insertInto('feed_runs')
  .columns(['feed_id', 'status', 'queued_at', 'entity_id', 'kind', 'record_kind', 'source'])
  .expression(db.selectFrom('feeds').select((eb) => [
    'id', sql.lit('queued').as('status'), eb.val(p.at).as('queued_at'),
    'entity_id', sql.lit('feed').as('kind'), 'kind as record_kind', sql<string>`'feed:' || cast(id as text)`.as('source'),
  ]).where('id', '=', p.feedId))
  .returningAll());
const latestRun = statement((db, p: Params<{ feedId: number }>) =>
  db.selectFrom('feed_runs').selectAll().where('feed_id', '=', p.feedId).orderBy('id', 'desc').limit(1));
const unfinishedRun = statement((db, p: Params<{ feedId: number }>) => db.selectFrom('feed_runs').selectAll()
  .where('feed_id', '=', p.feedId).where('status', 'in', ['queued', 'running']).orderBy('id').limit(1));
const runById = statement((db, p: Params<{ feedId: number; id: number }>) =>
  db.selectFrom('feed_runs').selectAll().where('feed_id', '=', p.feedId).where('id', '=', p.id));
const runsPage = statementPerPageSize(RUNS_PAGE_MAX + 1, (db, p: Params<{ feedId: number; after: number }>, limit) =>
  db.selectFrom('feed_runs').selectAll().where('feed_id', '=', p.feedId).where('id', '<', p.after).orderBy('id', 'desc').limit(sql.lit(limit) as never));
const setRunNow = statement((db, p: Params<{ id: number; at: string }>) => db.updateTable('feeds').set({ run_now_at: p.at }).where('id', '=', p.id));
const startRunRow = statement((db, p: Params<{ id: number; at: string }>) =>
  db.updateTable('feed_runs').set({ status: 'running', started_at: p.at }).where('id', '=', p.id).returningAll());
const finishRunRow = statement((db, p: Params<Pick<FeedRunRow, 'id' | 'status' | 'finished_at' | 'http_status' | 'counts' | 'problems' | 'error' | 'new_columns' | 'pending_deletes'>>) =>
  db.updateTable('feed_runs').set({
    status: p.status, finished_at: p.finished_at, http_status: p.http_status, counts: p.counts, problems: p.problems,
    error: p.error, new_columns: p.new_columns, pending_deletes: p.pending_deletes,
  }).where('id', '=', p.id).where('status', '=', 'running').returningAll());
// Runs that ended before the cut-off, a bounded batch over the finished_at index.
const RUNS_SWEEP_BATCH = 500;
const oldRuns = statement((db, p: Params<{ before: string }>) => db.deleteFrom('feed_runs')
  .where('id', 'in', db.selectFrom('feed_runs').select('id').where('finished_at', '<', p.before).limit(RUNS_SWEEP_BATCH)).returning('id'));

/**
 * Runs are kept for the longer of 90 days and TRASH_DAYS, so a run stays while it may be undone
 * (docs/api.md, Runs): the sweep `sweep_feed_runs` forgets older ones, of every kind, paused feeds' too.
 */
export async function sweepFeedRuns(db: Db, now = Date.now(), trashDays = 0): Promise<number> {
  const before = new Date(now - Math.max(RUNS_KEPT_MS, trashDays * 24 * 3600_000)).toISOString();
  let removed = 0;
  for (;;) {
    const chunk = (await transaction(db, () => all(oldRuns, { before }))).length;
    removed += chunk;
    if (chunk < RUNS_SWEEP_BATCH) return removed;
  }
}

// PostgreSQL: the kind's last sync time in this connection's counts slot (src/store/stats.ts).
const syncedSlot = statement((db, p: Params<StatsUpdate>) => rawQuery(db, upsertStatsSlot(p)));

/** A feed with its latest run, as the store hands it to the API and the console. */
export interface FeedWithRun {
  feed: FeedRow;
  lastRun: FeedRunRow | null;
  /** When its job is due (store/jobs.ts, the one schedule); null while it runs, or when it has none (paused). */
  dueAt: string | null;
}

function* withLastRun(feed: FeedRow): Work<FeedWithRun> {
  const lastRun = (yield* first(latestRun, { feedId: feed.id })) ?? null;
  return { feed, lastRun, dueAt: yield* waitingSince(FEED_RUN_JOB, jobKey(feed.id)) };
}

function* ownFeed(entityId: number, id: number): Work<FeedRow> {
  const feed = yield* first(feedById, { entityId, id });
  if (!feed) throw notFound('Feed');
  return feed;
}

function* sameUrlCheck(entityId: number, kind: string, url: string, id: number | null): Work<void> {
  const other = yield* first(feedByUrl, { entityId, kind, url });
  if (other && other.id !== id) {
    throw new ApiError('duplicate', `This entity already has a feed of ${kind} from this URL.`, { existing_id: other.id });
  }
}

const asRow = (spec: FeedSpec) => ({
  url: spec.url, kind: spec.kind, mapping: JSON.stringify(spec.mapping), encoding: spec.encoding, sheet: spec.sheet,
  mode: spec.mode, interval_minutes: spec.interval_minutes, paused: spec.paused ? 1 : 0,
});


/**
 * The feed's job, the one record of when it runs next (store/jobs.ts): at once for a queued run, else
 * at `next`; none for a paused feed with nothing queued. `move`: a waiting job takes the new time (a
 * job being run is left alone: its end schedules the next). In the caller's transaction.
 */
function* scheduleFeed(feed: FeedRow, queued: boolean, next: string, at: string, existing: 'keep' | 'move' = 'move'): Work<void> {
  if (!queued && feed.paused === 1) return;
  yield* enqueue({ name: FEED_RUN_JOB }, { key: jobKey(feed.id), entityId: feed.entity_id, dueAt: queued ? at : next, at, existing: queued ? 'move' : existing });
}

/** After a run's job: the feed's next job, an interval after its last run ended, from its state now (nothing once it is deleted). */
export function* nextFeedJob(feedId: number, at: string): Work<void> {
  const feed = yield* first(feedByIdOnly, { id: feedId });
  if (!feed) return;
  const ended = (yield* first(latestRun, { feedId }))?.finished_at ?? at;
  yield* scheduleFeed(feed, (yield* first(unfinishedRun, { feedId })) !== undefined, plusMinutes(ended, feed.interval_minutes), at);
}

/** A run the job queue gave up (it took too long, or its processes kept dying): it ends `failed` with the reason. */
export function giveUpFeedRun(db: Db, feedId: number, reason: string, at: string): Work<void> {
  return (function* () {
    const run = yield* first(unfinishedRun, { feedId });
    if (run?.status === 'running') {
      yield* finishRun(db, feedId, run.id, { status: 'failed', httpStatus: null, counts: null, problems: [], error: reason, newColumns: [] }, at);
    }
    yield* nextFeedJob(feedId, at);
  })();
}

/**
 * Why a feed's URL is refused, or null: a user name or password in it would be kept, shown and sent
 * to every address the file redirects to (docs/api.md, Feeds), as an endpoint's (docs/api.md, Webhooks).
 */
export function feedUrlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  return url.username || url.password ? 'must not hold a user name or password' : null;
}

function checkFeedUrl(url: string): void {
  const problem = feedUrlProblem(url);
  if (problem) throw invalidFields([{ field: 'url', message: problem }]);
}

/** A new feed and its first run, queued at once (docs/api.md, Feeds). */
export async function createFeed(db: Db, entityId: number, spec: FeedSpec, at: string, mappingFrozen = false): Promise<FeedWithRun> {
  checkFeedUrl(spec.url);
  try {
    return await transaction(db, function* () {
      yield* first(lockEntity, { entityId });
      const count = yield* first(countFeeds, { entityId });
      if (Number(count?.n ?? 0) >= FEEDS_PER_ENTITY) {
        throw new ApiError('bad_request', `An account has at most ${FEEDS_PER_ENTITY} feeds: delete one before adding another.`);
      }
      yield* sameUrlCheck(entityId, spec.kind, spec.url, null);
      const feed = (yield* first(insertFeed, {
        entity_id: entityId, ...asRow(spec), paused_reason: null,
        etag: null, last_modified: null, body_hash: null, run_now_at: null, created_at: at, mapping_frozen: mappingFrozen ? 1 : 0,
      }))!;
      const run = spec.paused ? null : (yield* first(insertRun, { feedId: feed.id, at }))!;
      yield* scheduleFeed(feed, run !== null, plusMinutes(at, spec.interval_minutes), at);
      return { feed, lastRun: run, dueAt: null };
    });
  } catch (error) {
    // Two requests adding the same URL at once: the unique constraint settles it.
    if (isUniqueViolation(error)) throw new ApiError('duplicate', `This entity already has a feed of ${spec.kind} from this URL.`);
    throw error;
  }
}

export const listFeeds = (db: Db, entityId: number): Promise<FeedWithRun[]> => read(db, function* () {
  const feeds = yield* all(feedsOfEntity, { entityId });
  const result: FeedWithRun[] = [];
  for (const feed of feeds) result.push(yield* withLastRun(feed));
  return result;
});

export const getFeed = (db: Db, entityId: number, id: number): Promise<FeedWithRun> =>
  read(db, function* () { return yield* withLastRun(yield* ownFeed(entityId, id)); });

/**
 * Changes a feed. A new URL, kind, mapping, encoding, sheet or mode forgets the last file read (the next
 * run applies the file whatever it holds); resuming clears the failures and the reason, and schedules the
 * next run one interval from now: Pause and Resume never start a run (only "Run now" does, once a minute).
 */
export async function updateFeed(db: Db, entityId: number, id: number, patch: Partial<FeedSpec>, at: string): Promise<FeedWithRun> {
  if (patch.url !== undefined) checkFeedUrl(patch.url);
  try {
    return await transaction(db, function* () {
      const feed = yield* ownFeed(entityId, id);
      const current: FeedSpec = {
        url: feed.url, kind: feed.kind, mapping: JSON.parse(feed.mapping) as FeedSpec['mapping'], encoding: feed.encoding,
        sheet: feed.sheet, mode: feed.mode, interval_minutes: feed.interval_minutes, paused: feed.paused === 1,
      };
      const next: FeedSpec = { ...current, ...patch };
      const reread = (['url', 'kind', 'encoding', 'sheet', 'mode'] as const).some((k) => next[k] !== current[k])
        || JSON.stringify(next.mapping) !== JSON.stringify(current.mapping);
      if (next.url !== current.url || next.kind !== current.kind) yield* sameUrlCheck(entityId, next.kind, next.url, id);
      const resumed = current.paused && !next.paused;
      const updated = (yield* first(updateFeedRow, {
        id, ...asRow(next),
        paused_reason: next.paused ? feed.paused_reason : null,
        etag: reread ? null : feed.etag, last_modified: reread ? null : feed.last_modified, body_hash: reread ? null : feed.body_hash,
        failures: resumed ? 0 : feed.failures,
        // A new mapping (or kind) is read with the suggestions for the columns it leaves out, at the next read.
        mapping_frozen: patch.mapping !== undefined || next.kind !== current.kind ? 0 : feed.mapping_frozen,
      }))!;
      // Resumed or a new interval: due an interval from now; else the job keeps its time.
      const moved = resumed || next.interval_minutes !== current.interval_minutes;
      yield* scheduleFeed(updated, (yield* first(unfinishedRun, { feedId: id })) !== undefined,
        plusMinutes(at, next.interval_minutes), at, moved ? 'move' : 'keep');
      return yield* withLastRun(updated);
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new ApiError('duplicate', 'This entity already has a feed of this kind from this URL.');
    throw error;
  }
}

/** Deletes a feed; the records it wrote stay, and its runs (listed by /v1/runs, still undoable) until the runs sweep. */
export function deleteFeed(db: Db, entityId: number, id: number): Promise<void> {
  return transaction(db, function* () {
    yield* ownFeed(entityId, id);
    yield* first(keepRunsOfFeed, { feedId: id });
    yield* all(disownArtworks, { feedId: id });
    yield* all(disownEvents, { feedId: id });
    yield* first(removeFeed, { id });
    yield* cancel({ name: FEED_RUN_JOB }, jobKey(id));
  });
}

/** "Run now": a queued run, at most one a minute per feed (429 with the seconds to wait). */
export function queueRun(db: Db, entityId: number, id: number, at: string): Promise<FeedRunRow> {
  return transaction(db, function* () {
    const feed = yield* ownFeed(entityId, id);
    const since = feed.run_now_at === null ? Infinity : Date.parse(at) - Date.parse(feed.run_now_at);
    if (since < RUN_NOW_EVERY_MS) {
      const wait = Math.max(1, Math.ceil((RUN_NOW_EVERY_MS - since) / 1000));
      throw new ApiError('rate_limited', `This feed was run less than a minute ago: try again in ${wait} s.`, { retry_after: wait });
    }
    yield* first(setRunNow, { id, at });
    const run = (yield* first(insertRun, { feedId: id, at }))!;
    yield* scheduleFeed(feed, true, at, at);
    return run;
  });
}

export interface RunsPage {
  runs: FeedRunRow[];
  hasMore: boolean;
  nextAfter: number | null;
}

/** A feed's runs, newest first, by cursor: runs with an id below `after`. */
export const listRuns = (db: Db, entityId: number, id: number, after: number | undefined, limit: number): Promise<RunsPage> =>
  read(db, function* () {
    yield* ownFeed(entityId, id);
    const rows = yield* all(runsPage(limit + 1), { feedId: id, after: after ?? 2_147_483_647 });
    const runs = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return { runs, hasMore, nextAfter: hasMore ? runs[runs.length - 1]!.id : null };
  });

export const getRun = (db: Db, entityId: number, id: number, runId: number): Promise<FeedRunRow> => read(db, function* () {
  yield* ownFeed(entityId, id);
  const run = yield* first(runById, { feedId: id, id: runId });
  if (!run) throw notFound('Run');
  return run;
});

/**
 * When a feed wants its next run: its queued run's time, else its job's (null: paused, nothing queued).
 * Between a run's end and its job's end (two transactions) the job is still claimed: the next run is then
 * what the job's end will schedule, an interval after the run ended (nextFeedJob), so no read sees null.
 */
export const nextRunOf = ({ feed, lastRun, dueAt }: FeedWithRun): string | null => {
  if (lastRun && (lastRun.status === 'queued' || lastRun.status === 'running')) return lastRun.queued_at;
  if (feed.paused === 1) return null;
  return dueAt ?? (lastRun?.finished_at ? plusMinutes(lastRun.finished_at, feed.interval_minutes) : null);
};

/**
 * Starts the run of a feed the caller holds the lease of: its oldest unfinished run (a `running` one
 * is a run whose process died: it is taken over), else a new one (its job is due: the feed is). Undefined
 * when there is nothing to run (deleted, paused).
 */
export function startFeedRun(db: Db, feedId: number, at: string): Promise<{ feed: FeedRow; run: FeedRunRow } | undefined> {
  return transaction(db, function* () {
    const feed = yield* first(feedByIdOnly, { id: feedId });
    if (!feed) return undefined;
    let run = yield* first(unfinishedRun, { feedId });
    if (!run) {
      if (feed.paused === 1) return undefined;
      run = (yield* first(insertRun, { feedId, at }))!;
    }
    run = (yield* first(startRunRow, { id: run.id, at }))!;
    return { feed, run };
  });
}

export interface RunOutcome {
  status: Exclude<FeedRunStatus, 'queued' | 'running'>;
  httpStatus: number | null;
  counts: Record<string, number> | null;
  problems: { line: number | null; column: string | null; message: string; level: 'error' | 'warning' }[];
  error: string | null;
  newColumns: string[];
  /** A mirror's deletions waiting for a person (needs_attention): docs/api.md, Feeds. */
  pendingDeletes?: PendingDelete[];
  /** What the file was when it was read whole (applied, needs_attention, or unchanged by its hash): kept for the next conditional fetch. */
  file?: { etag: string | null; lastModified: string | null; hash: string };
}

/**
 * Records a run's end and moves its feed on: the next run an interval later, the failures in a row (5
 * pause the feed with the run's error), and for `applied` and `unchanged` the kind's last sync time.
 */
export function finishFeedRun(db: Db, feedId: number, runId: number, outcome: RunOutcome, at: string): Promise<FeedRunRow | undefined> {
  return transaction(db, () => finishRun(db, feedId, runId, outcome, at));
}

function* finishRun(db: Db, feedId: number, runId: number, outcome: RunOutcome, at: string): Work<FeedRunRow | undefined> {
  {
    const run = yield* first(finishRunRow, {
      id: runId, status: outcome.status, finished_at: at, http_status: outcome.httpStatus,
      counts: outcome.counts ? JSON.stringify(outcome.counts) : null, problems: JSON.stringify(outcome.problems),
      error: outcome.error, new_columns: JSON.stringify(outcome.newColumns),
      pending_deletes: outcome.pendingDeletes ? JSON.stringify(outcome.pendingDeletes) : null,
    });
    const feed = yield* first(feedByIdOnly, { id: feedId });
    if (!run || !feed) return run;
    const failures = outcome.status === 'failed' ? feed.failures + 1 : 0;
    const pause = failures >= FAILURES_TO_PAUSE && feed.paused === 0;
    yield* first(updateFeedRow, {
      id: feedId, url: feed.url, kind: feed.kind, mapping: feed.mapping, mapping_frozen: feed.mapping_frozen, encoding: feed.encoding,
      sheet: feed.sheet, mode: feed.mode, interval_minutes: feed.interval_minutes, paused: pause ? 1 : feed.paused,
      paused_reason: pause ? `${FAILURES_TO_PAUSE} runs in a row failed; the last: ${outcome.error ?? 'unknown error'}` : feed.paused_reason,
      etag: outcome.file ? outcome.file.etag : feed.etag,
      last_modified: outcome.file ? outcome.file.lastModified : feed.last_modified,
      body_hash: outcome.file ? outcome.file.hash : feed.body_hash,
      failures,
    });
    // The run's outcome goes to the entity's webhooks in this same transaction (docs/api.md, Webhooks).
    const type = outcome.status === 'applied' || outcome.status === 'unchanged' ? 'feed.run.completed' : 'feed.run.failed';
    yield* recordFeedRunMessages(feed.entity_id, feedId, runJson(run), type, at);
    if (outcome.status === 'applied' || outcome.status === 'unchanged') {
      const update = statsUpdate(feed.entity_id, [{ synced: feed.kind }], at);
      if (isPostgres(db)) yield* first(syncedSlot, update);
      else yield* applyStats(update);
    }
    return run;
  }
}

/** A run as the API shows it (docs/api.md, Feeds): here, beside its row, because a run's end sends it in a message too. */
export const runJson = (run: FeedRunRow): FeedRunType => ({
  id: run.id,
  kind: run.kind,
  feed_id: run.feed_id,
  record_kind: run.record_kind ?? 'artworks',
  source: run.source ?? '',
  undone_by: run.undone_by,
  status: run.status,
  started_at: run.started_at,
  finished_at: run.finished_at,
  http_status: run.http_status,
  counts: run.counts === null ? null : JSON.parse(run.counts) as FeedRunType['counts'],
  // Runs before problems had levels held only refused rows.
  problems: run.problems === null ? [] : (JSON.parse(run.problems) as FeedRunType['problems']).map((p) => ({ ...p, level: p.level ?? 'error' })),
  error: run.error,
  new_columns: run.new_columns === null ? [] : JSON.parse(run.new_columns) as string[],
  pending_deletes: run.pending_deletes === null ? null : JSON.parse(run.pending_deletes) as PendingDelete[],
});

// ---- mass deletes wait for a person (docs/api.md, Feeds: mass deletes) ------------------------------

/** A record a mirror run would have deleted, listed for a person to confirm. */
export interface PendingDelete {
  id: number;
  title: string;
  external_id: string | null;
}

/**
 * Changelog deletes by one feed since a time: its runs' and their confirmed deletions, over the index of
 * deletes (migration 021; `action` a literal, so PostgreSQL's plan of the statement may use that partial
 * index). Not from the runs' counts: a confirmed deletion counts when it is confirmed, and the deletes of a
 * run that failed half-way are in no count.
 */
const feedDeletesSince = statement((db, p: Params<{ entityId: number; source: string; since: string }>) => db.selectFrom('changelog')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .where('owner_id', '=', p.entityId).where('source', '=', p.source).where('created_at', '>', p.since).where('action', '=', sql.lit('delete')), { cost: 'scan' });

/** How many records feed `feedId` deleted in the 24 hours before `at`. */
export const recentFeedDeletes = (db: Db, entityId: number, feedId: number, at: string): Promise<number> => read(db, function* () {
  const since = new Date(Date.parse(at) - 24 * 3600_000).toISOString();
  return Number((yield* first(feedDeletesSince, { entityId, source: `feed:${feedId}`, since }))?.n ?? 0);
});

const laterRunThatCounts = statement((db, p: Params<{ feedId: number; id: number }>) => db.selectFrom('feed_runs').select('id')
  .where('feed_id', '=', p.feedId).where('id', '>', p.id).where('status', 'in', ['applied', 'needs_attention']).limit(1));
const claimPendingDeletes = statement((db, p: Params<{ id: number }>) => db.updateTable('feed_runs')
  .set({ status: 'applied', pending_deletes: null, error: null })
  .where('id', '=', p.id).where('status', '=', 'needs_attention').where('pending_deletes', 'is not', null).returningAll());
// The next run reads the file whole (no 304, no equal hash short cut).
const forgetFile = statement((db, p: Params<{ id: number }>) => db.updateTable('feeds').set({ etag: null, last_modified: null, body_hash: null }).where('id', '=', p.id));
const confirmedRow = statement((db, p: Params<{ id: number; counts: string | null; problems: string }>) => db.updateTable('feed_runs')
  .set({ counts: p.counts, problems: p.problems }).where('id', '=', p.id).returningAll());

/**
 * A person confirms a run's pending deletes: the run is taken (it ends `applied`, nothing pending) and
 * its list handed back for the deletes; 404 for another feed's run, 409 `conflict` when there is
 * nothing to confirm (never needed, or confirmed already) or a later run of the feed ended `applied`
 * or `needs_attention` (an `unchanged` one does not count).
 */
export function claimConfirmDeletes(db: Db, entityId: number, feedId: number, runId: number): Promise<{ feed: FeedRow; run: FeedRunRow; pending: PendingDelete[] }> {
  return transaction(db, function* () {
    const feed = yield* ownFeed(entityId, feedId);
    const run = yield* first(runById, { feedId, id: runId });
    if (!run) throw notFound('Run');
    if (run.status !== 'needs_attention' || run.pending_deletes === null) {
      throw new ApiError('conflict', run.status === 'applied' && run.counts !== null
        ? 'This run\'s deletions were confirmed already, or it had none waiting.'
        : 'This run has no deletions waiting for a confirmation.');
    }
    const later = yield* first(laterRunThatCounts, { feedId, id: runId });
    if (later) {
      throw new ApiError('conflict', `A later run of this feed (${later.id}) has read the file since: its deletions are what the file says now.`);
    }
    const claimed = yield* first(claimPendingDeletes, { id: runId });
    if (!claimed) throw new ApiError('conflict', 'This run\'s deletions are being confirmed by another request.');
    // Whatever of the list is still there after the confirm (a process that died half-way, a record
    // skipped or restored) is what the next run finds and, past the limit, lists again.
    yield* first(forgetFile, { id: feedId });
    return { feed, run: claimed, pending: JSON.parse(run.pending_deletes) as PendingDelete[] };
  });
}

/** A confirmed run's counts (`deleted` added) and problems (the records skipped added), as the API then shows it. */
export const recordConfirmedDeletes = (db: Db, run: FeedRunRow, deleted: number, skipped: RunOutcome['problems']): Promise<FeedRunRow> =>
  transaction(db, function* () {
    const counts = run.counts === null ? null : { ...JSON.parse(run.counts) as Record<string, number> };
    if (counts) counts.deleted = (counts.deleted ?? 0) + deleted;
    const problems = [...(run.problems === null ? [] : JSON.parse(run.problems) as RunOutcome['problems']), ...skipped].slice(0, PROBLEMS_KEPT);
    return (yield* first(confirmedRow, { id: run.id, counts: counts ? JSON.stringify(counts) : null, problems: JSON.stringify(problems) }))!;
  });

// ---- every run of an entity (docs/api.md, Runs): feed runs, console imports, undos -----------------

const entityRunsPage = (byKind: boolean) => statementPerPageSize(RUNS_PAGE_MAX + 1,
  (db, p: Params<{ entityId: number; recordKind: FeedRow['kind']; after: number }>, limit) => {
    const runs = db.selectFrom('feed_runs').selectAll().where('entity_id', '=', p.entityId).where('id', '<', p.after);
    return (byKind ? runs.where('record_kind', '=', p.recordKind) : runs).orderBy('id', 'desc').limit(sql.lit(limit) as never);
  });
const entityRunsOfKind = entityRunsPage(true);
const entityRunsAll = entityRunsPage(false);
const entityRunById = statement((db, p: Params<{ entityId: number; id: number }>) =>
  db.selectFrom('feed_runs').selectAll().where('entity_id', '=', p.entityId).where('id', '=', p.id));

/** The entity's runs of `kinds` (those the key may read), newest first, by cursor: runs with an id below `after`. */
export const listEntityRuns = (db: Db, entityId: number, kinds: readonly FeedRow['kind'][], after: number | undefined, limit: number): Promise<RunsPage> =>
  read(db, function* () {
    if (kinds.length === 0) return { runs: [], hasMore: false, nextAfter: null };
    const rows = yield* all((kinds.length === 1 ? entityRunsOfKind : entityRunsAll)(limit + 1),
      { entityId, recordKind: kinds[0]!, after: after ?? 2_147_483_647 });
    const runs = rows.slice(0, limit);
    const hasMore = rows.length > limit;
    return { runs, hasMore, nextAfter: hasMore ? runs[runs.length - 1]!.id : null };
  });

/** One run of the entity; 404 when it has none by that id. */
export const getEntityRun = (db: Db, entityId: number, id: number): Promise<FeedRunRow> => read(db, function* () {
  const run = yield* first(entityRunById, { entityId, id });
  if (!run) throw notFound('Run');
  return run;
});

/** A console import's run (an undo's run is queued, by store/undo.ts). */
const insertImportRun = statement((db, p: Params<{ entityId: number; recordKind: FeedRow['kind']; source: string; at: string }>) =>
  db.insertInto('feed_runs').values({
    feed_id: null, entity_id: p.entityId, kind: 'import', record_kind: p.recordKind, source: p.source,
    status: 'running', queued_at: p.at, started_at: p.at,
  }).returning('id'));
const endImportRun = statement((db, p: Params<{ id: number; status: FeedRunStatus; at: string; counts: string; problems: string; error: string | null }>) =>
  db.updateTable('feed_runs').set({ status: p.status, finished_at: p.at, counts: p.counts, problems: p.problems, error: p.error })
    .where('id', '=', p.id).where('status', '=', 'running'));

/** A console import's Apply as a run (docs/api.md, Runs), running from now; its id goes on each of its writes. */
export const startImportRun = (db: Db, entityId: number, recordKind: FeedRow['kind'], source: string, at: string): Promise<number> =>
  transaction(db, function* () {
    return Number((yield* first(insertImportRun, { entityId, recordKind, source, at }))!.id);
  });

/** The end of a console import's run: `applied`, or `failed` with the reason. */
export const finishImportRun = (db: Db, id: number, outcome: Pick<RunOutcome, 'counts' | 'problems' | 'error'>, at: string): Promise<void> =>
  transaction(db, function* () {
    yield* first(endImportRun, {
      id, status: outcome.error === null ? 'applied' : 'failed', at, counts: JSON.stringify(outcome.counts),
      problems: JSON.stringify(outcome.problems.slice(0, PROBLEMS_KEPT)), error: outcome.error,
    });
  });
