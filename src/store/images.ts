import { sql, type ExpressionBuilder, type RawBuilder } from 'kysely';
import type { FieldChanges } from '../domain/diff.js';
import { read, single, transaction } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Database, Db, ImageStatus } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { cancelJob, enqueueJob, jobsOfClause } from './jobs.js';
import { isPostgres, lockForUpdate } from './sql.js';
import { recordImageMessages } from './webhooks.js';

/**
 * The image pipeline's state (docs/api.md, Images; migration 007): one `images` row per URL in use, and
 * its job in the one queue (store/jobs.ts, kind `image`, keyed by the URL), whose `due_at` says when
 * it is tried next; `image_originals` per SHA-256 of an original's bytes.
 */

// ---- enqueue and release, inside the writes that set, change or clear an image_url --------------

/*
 * A URL let go by one record may be taken up by another at the same moment: the release must not
 * delete the job the other record now needs. The database makes that safe on PostgreSQL with the
 * job row's lock. Whoever takes a URL up locks its row, inserted or existing (`on conflict do update
 * ... where false` updates nothing but locks the row it met, where `do nothing` would not), until
 * it commits. A release locks the row first and only then deletes it if no record uses the URL: that
 * delete is a statement of its own, so its snapshot, taken once the lock is granted, sees the records
 * of a writer that took the URL up and committed meanwhile. A writer that takes the URL up after the
 * release has deleted the row waits for the release to commit, then inserts the row again. SQLite
 * runs one write transaction at a time: the two never interleave.
 */

// Returns the URL only when its row is new: a URL already known has its job already, or needs none.
const enqueue = statement((db, p: Params<{ url: string; at: string }>) => db.insertInto('images')
  .values({ url: p.url, status: 'pending', attempts: 0, created_at: p.at })
  .onConflict((oc) => oc.column('url').doUpdateSet({ url: (eb) => eb.ref('excluded.url') }).where(sql<boolean>`false`))
  .returning('url'));

/** The job kind of images (src/images/worker.ts). */
export const IMAGE_JOB = 'image';

/**
 * The image jobs of the URLs (as `key`) a statement's CTE `queued` has just inserted, as more CTEs of
 * that PostgreSQL statement (store/jobs.ts writes them): one job per new URL, for the writing entity.
 */
const imageJobsClause = (entityId: Params<{ entityId: number }>['entityId'], at: Params<{ at: string }>['at']) =>
  jobsOfClause(IMAGE_JOB, 'queued', entityId, at);

/** An image URL's job, for the writing entity, in the write's transaction. */
function imageJob(url: string, entityId: number, at: string, existing: 'keep' | 'reschedule' = 'keep'): Work<void> {
  return enqueueJob({ kind: IMAGE_JOB, key: url, entityId, dueAt: at, at, existing });
}

const usedBy = (db: Db, url: Params<{ url: string }>['url']) => [
  db.selectFrom('artworks').select('id').where('image_url', '=', url),
  db.selectFrom('events').select('id').where('image_url', '=', url),
  db.selectFrom('artwork_views').select('artwork_id as id').where('url', '=', url),
  // A record in the trash keeps its image until the purge (docs/api.md, Trash); its views keep their rows.
  db.selectFrom('trash').select('record_id as id').where('image_url', '=', url),
] as const;

// An artwork's additional views (docs/api.md, More views of a work): one row per view's URL, by position.
const dropViews = statement((db, p: Params<{ artworkId: number }>) => db.deleteFrom('artwork_views').where('artwork_id', '=', p.artworkId));
const addView = statement((db, p: Params<{ artworkId: number; position: number; url: string }>) => db.insertInto('artwork_views')
  .values({ artwork_id: p.artworkId, position: p.position, url: p.url }));

const viewUrls = (views: unknown): string[] =>
  (Array.isArray(views) ? views.map((view) => (view as { url: string }).url) : []);

const lockJob = statement((db, p: Params<{ url: string }>) => lockForUpdate(db, db.selectFrom('images').select('url').where('url', '=', p.url)));

/** A URL no record uses any more goes; its derivatives are left to the sweep (another URL may share them). */
const release = statement((db, p: Params<{ url: string }>) => db.deleteFrom('images').where('url', '=', p.url)
  .where((eb) => eb.not(eb.or(usedBy(db, p.url).map((query) => eb.exists(query)))))
  .returning('url'));

/**
 * The image jobs of written records: each URL set is queued (unless it is known already: one URL is
 * fetched once for every record using it), each URL let go is released when nothing else uses it.
 * Read from the writes' changelog entries, so every write that records its changes (POST, PUT,
 * batch, delete, the console) queues in its own transaction (store/changelog.ts, `recordWrite`).
 * PostgreSQL queues the URLs in the write's record statement (`queuedImagesClause`): they are
 * returned, sorted, for it; SQLite queues them here and returns none.
 */
export function* imagesWritten(
  db: Db, entityId: number, changes: ReadonlyArray<{ fieldChanges: FieldChanges; entityType?: string; recordId?: number; action?: string }>, at: string,
): Work<string[]> {
  const set = new Set<string>();
  const released = new Set<string>();
  for (const { fieldChanges, entityType, recordId, action } of changes) {
    // A deleted record goes to the trash with its images: the purge lets them go (store/trash.ts).
    if (action === 'delete') continue;
    const change = fieldChanges.image_url;
    if (change) {
      if (typeof change.new === 'string') set.add(change.new);
      if (typeof change.old === 'string') released.add(change.old);
    }
    // An artwork's views changed: its rows are written again, their URLs queued or released like image_url's.
    const views = fieldChanges.additional_images;
    if (views && entityType === 'artwork' && recordId !== undefined) {
      yield* all(dropViews, { artworkId: recordId });
      for (const [position, url] of viewUrls(views.new).entries()) {
        yield* all(addView, { artworkId: recordId, position, url });
        set.add(url);
      }
      for (const url of viewUrls(views.old)) released.add(url);
    }
  }
  yield* releaseImages(db, [...released].filter((url) => !set.has(url)));
  // Rows locked in one order everywhere: two writes taking up the same URLs never wait for each other in a cycle.
  const urls = [...set].sort();
  if (isPostgres(db)) return urls;
  for (const url of urls) if (yield* first(enqueue, { url, at })) yield* imageJob(url, entityId, at);
  return [];
}

/** Whether a write's changes set or let go an image URL or an artwork's views (then `imagesWritten` has work beyond queuing). */
export const touchesImages = (changes: ReadonlyArray<{ fieldChanges: FieldChanges }>): boolean =>
  changes.some(({ fieldChanges }) => (fieldChanges.image_url !== undefined && fieldChanges.image_url.old != null) || fieldChanges.additional_images !== undefined);

/** Lets each URL go (its row and its job) unless a record, a view or the trash still uses it. */
export function* releaseImages(db: Db, urls: readonly string[]): Work<void> {
  for (const url of [...new Set(urls)].sort()) {
    if (isPostgres(db)) yield* all(lockJob, { url });
    // A released URL's job goes with its row (a URL still in use keeps both).
    if (yield* first(release, { url })) yield* cancelJob(IMAGE_JOB, url);
  }
}

/** A purged artwork's view rows (store/trash.ts), before its URLs are released. */
export function* dropArtworkViews(artworkId: number): Work<void> {
  yield* all(dropViews, { artworkId });
}

/**
 * PostgreSQL: the URLs of `urls` (sorted) not known yet, inserted as the CTE `queued` of a write's
 * record statement (store/changelog.ts), locking each row as `enqueue` does, and their jobs.
 * `when`: a condition on the rest of the statement.
 */
export const queuedImagesClause = (
  urls: Params<{ urls: string[] }>['urls'], entityId: Params<{ entityId: number }>['entityId'], at: Params<{ at: string }>['at'],
  when: RawBuilder<unknown>,
): RawBuilder<unknown> => sql`
  queued as (
    insert into images (url, status, attempts, created_at)
    select u, 'pending', 0, cast(${at} as text) from unnest(cast(${urls} as text[])) as u
    where ${when}
    on conflict (url) do update set url = excluded.url where false
    returning url as key),
  ${imageJobsClause(entityId, at)}`;

/**
 * The CTE `queued` of a record statement whose write sets no image URL (most writes): empty, a plain
 * select the planner folds away. The inserts of `queuedImagesClause` cost PostgreSQL's backend their
 * executor start (each opens its table and indexes) even with no URL to insert, ~8 % of a new
 * artwork's statement (docs/performance.md, Writes, CPU per POST).
 */
export const noQueuedImagesClause = sql`
  queued as (select cast(null as text) as key where false)`;

// ---- results ------------------------------------------------------------------------------------

export interface OriginalInfo {
  hash: string;
  width: number;
  height: number;
  derivatives: StoredDerivative[];
}

export interface StoredDerivative { name: string; width: number; height: number; format: 'avif' | 'webp' | 'jpeg' }

const originalByHash = statement((db, p: Params<{ hash: string }>) => db.selectFrom('image_originals').selectAll().where('hash', '=', p.hash));

export async function imageOriginal(db: Db, hash: string): Promise<OriginalInfo | undefined> {
  const row = await read(db, () => first(originalByHash, { hash }));
  return row && { hash: row.hash, width: Number(row.width), height: Number(row.height), derivatives: JSON.parse(row.derivatives) as StoredDerivative[] };
}

const insertOriginal = statement((db, p: Params<{ hash: string; width: number; height: number; derivatives: string; at: string }>) =>
  db.insertInto('image_originals').values({ hash: p.hash, width: p.width, height: p.height, derivatives: p.derivatives, created_at: p.at })
    // Recorded again (identical bytes met again): its time is refreshed, so the sweep leaves it alone.
    .onConflict((oc) => oc.column('hash').doUpdateSet({ width: p.width, height: p.height, derivatives: p.derivatives, created_at: p.at })));

/**
 * What an original gave, recorded before its derivatives are stored: the sweep leaves the files of a
 * recent original alone, so files being stored are never taken for unused ones.
 */
export async function recordOriginal(db: Db, original: OriginalInfo, at: string): Promise<void> {
  await single(db, () => all(insertOriginal, { ...original, derivatives: JSON.stringify(original.derivatives), at }));
}

export interface ImageOutcome {
  url: string;
  status: ImageStatus;
  error: string | null;
  hash: string | null;
  attempts: number;
  at: string;
}

// When it is tried next is its job's `due_at` (store/jobs.ts), the one schedule.
const saveOutcome = statement((db, p: Params<ImageOutcome>) => db.updateTable('images')
  .set({
    status: p.status, error: p.error, checked_at: p.at, hash: sql<string>`coalesce(${p.hash}, hash)`, attempts: p.attempts,
  })
  .where('url', '=', p.url));

/**
 * An image's state change is not an API write (no changelog entry), but every entity with a record
 * using the URL shows it: their data version moves, so ETags and public page caches change.
 */
const bumpVersions = statement((db, p: Params<{ url: string }>) => db.updateTable('entity_stats')
  .set((eb) => ({ version: eb('version', '+', 1) }))
  .where('slot', '=', 0)
  .where('entity_id', 'in', db.selectFrom('artworks').select('entity_id').where('image_url', '=', p.url)
    .union(db.selectFrom('events').select('entity_id').where('image_url', '=', p.url))
    .union(db.selectFrom('artwork_views').innerJoin('artworks', 'artworks.id', 'artwork_views.artwork_id').select('artworks.entity_id')
      .where('artwork_views.url', '=', p.url))));

const statusOfUrl = statement((db, p: Params<{ url: string }>) => db.selectFrom('images').select(['status', 'checked_at']).where('url', '=', p.url));

/**
 * An image job's outcome, saved as its job ends (in that transaction, only if the run held its claim).
 * A new state (the first outcome, or ready after failed and back) raises `image.ready` or
 * `image.failed` in the same transaction (docs/api.md, Webhooks); a retry that fails again does not.
 */
export function* saveImageOutcome(outcome: ImageOutcome): Work<void> {
  const before = yield* first(statusOfUrl, { url: outcome.url });
  yield* all(saveOutcome, outcome);
  yield* all(bumpVersions, { url: outcome.url });
  if (outcome.status !== 'pending' && (before?.checked_at == null || before.status !== outcome.status)) {
    yield* recordImageMessages(outcome.url, outcome.status, outcome.at);
  }
}

// ---- what the API and the pages show -------------------------------------------------------------

/** An image's state as stored, for one URL: what `present` turns into the API's `image`. */
export interface ImageState {
  status: ImageStatus;
  error: string | null;
  checked_at: string | null;
  width: number | null;
  height: number | null;
  /** JSON text of StoredDerivative[], or null before the image was ever processed. */
  derivatives: string | null;
}

const stateOfUrl = statement((db, p: Params<{ url: string }>) => db.selectFrom('images')
  .leftJoin('image_originals', 'image_originals.hash', 'images.hash')
  .select(['images.status', 'images.error', 'images.checked_at', 'image_originals.width', 'image_originals.height', 'image_originals.derivatives'])
  .where('images.url', '=', p.url));

export async function imageState(db: Db, url: string | null): Promise<ImageState | null> {
  if (url === null) return null;
  return (await read(db, () => first(stateOfUrl, { url }))) ?? PENDING;
}

/**
 * A URL with no row: not expected (a write that sets a URL queues it in its own transaction, and a
 * release never deletes a row a committed record uses), yet a record must not fail on it: it is on its way.
 */
const PENDING: ImageState = { status: 'pending', error: null, checked_at: null, width: null, height: null, derivatives: null };

// Many URLs in one statement: an array on PostgreSQL, a JSON array on SQLite.
const statesOfUrls = statement((db, p: Params<{ urls: string[] | string }>) => db.selectFrom('images')
  .leftJoin('image_originals', 'image_originals.hash', 'images.hash')
  .select(['images.url', 'images.status', 'images.error', 'images.checked_at', 'image_originals.width', 'image_originals.height', 'image_originals.derivatives'])
  .where('images.url', 'in', isPostgres(db)
    ? sql<string>`(select unnest(cast(${p.urls} as text[])))`
    : sql<string>`(select value from json_each(${p.urls}))`));

/** The image states of a page of records, by URL (a record's URL without a row is on its way: pending). */
export async function imageStates(db: Db, urls: ReadonlyArray<string | null>): Promise<Map<string, ImageState>> {
  const wanted = [...new Set(urls.filter((url): url is string => url !== null))];
  const states = new Map<string, ImageState>();
  if (wanted.length === 0) return states;
  const rows = await read(db, () => all(statesOfUrls, { urls: isPostgres(db) ? wanted : JSON.stringify(wanted) }));
  for (const { url, ...state } of rows) states.set(url, state);
  for (const url of wanted) if (!states.has(url)) states.set(url, PENDING);
  return states;
}

/** Only records whose image is in this state (a list's `image_status`); null: every record. */
export const imageStatusIs = (db: Db, eb: ExpressionBuilder<Database, 'artworks' | 'events'>, table: 'artworks' | 'events', status: Params<{ s: ImageStatus | null }>['s']) =>
  eb.or([
    eb(sql`cast(${status} as text)`, 'is', null),
    eb.exists(db.selectFrom('images').select('images.url').whereRef('images.url', '=', sql.ref(`${table}.image_url`)).where('images.status', '=', status)),
  ]);

/** The URLs of an entity's additional views (docs/api.md, More views of a work): counted and retried like image_url's. */
const entityViews = (db: Db, entityId: Params<{ entityId: number }>['entityId']) => db.selectFrom('artwork_views')
  .innerJoin('artworks', 'artworks.id', 'artwork_views.artwork_id').where('artworks.entity_id', '=', entityId);

// Counts over an entity's records with an image (migration 010's indexes; off the event loop on SQLite).
const countsOfEntity = statement((db, p: Params<{ entityId: number }>) => db.selectFrom(
  db.selectFrom('artworks').select('image_url').where('entity_id', '=', p.entityId).where('image_url', 'is not', null)
    .unionAll(db.selectFrom('events').select('image_url').where('entity_id', '=', p.entityId).where('image_url', 'is not', null))
    .unionAll(entityViews(db, p.entityId).select('artwork_views.url as image_url'))
    .as('used'))
  .innerJoin('images', 'images.url', 'used.image_url')
  .select(['images.status', (eb) => eb.fn.countAll<number>().as('n')])
  .groupBy('images.status'), { cost: 'scan' });

export type ImageCounts = Record<ImageStatus, number>;

export function* imageCountsWork(entityId: number): Work<ImageCounts, 'point' | 'scan'> {
  const counts: ImageCounts = { pending: 0, ready: 0, failed: 0 };
  for (const row of yield* all(countsOfEntity, { entityId })) counts[row.status] = Number(row.n);
  return counts;
}

// ---- the operator: status, retry, and the sweep ------------------------------------------------------

const allCounts = statement((db) => db.selectFrom(
  db.selectFrom('artworks').select('image_url').where('image_url', 'is not', null)
    .unionAll(db.selectFrom('events').select('image_url').where('image_url', 'is not', null))
    .unionAll(db.selectFrom('artwork_views').select('url as image_url'))
    .as('used'))
  .innerJoin('images', 'images.url', 'used.image_url')
  .select(['images.status', (eb) => eb.fn.countAll<number>().as('n')])
  .groupBy('images.status'), { cost: 'scan' });

/** The URLs an entity's records use (or every URL in use): what `images status|retry --entity` covers. */
const entityUrls = (db: Db, entityId: Params<{ entityId: number }>['entityId']) =>
  db.selectFrom('artworks').select('image_url as url').where('entity_id', '=', entityId).where('image_url', 'is not', null)
    .union(db.selectFrom('events').select('image_url as url').where('entity_id', '=', entityId).where('image_url', 'is not', null))
    .union(entityViews(db, entityId).select('artwork_views.url as url'));

const FAILED_SHOWN = 100;
const failedImages = (scoped: boolean) => statement((db, p: Params<{ entityId: number }>) => {
  // When it is tried next: its job's time (none once it stays failed).
  const failed = db.selectFrom('images')
    .leftJoin('jobs', (join) => join.onRef('jobs.key', '=', 'images.url').on('jobs.kind', '=', IMAGE_JOB))
    .select(['images.url', 'images.error', 'images.checked_at', 'images.attempts', 'jobs.due_at']).where('images.status', '=', 'failed');
  return (scoped ? failed.where('images.url', 'in', entityUrls(db, p.entityId)) : failed).orderBy('images.checked_at', 'desc').limit(FAILED_SHOWN);
}, { cost: 'scan' });
const failedOfEntity = failedImages(true);
const failedOfAll = failedImages(false);

const recordsUsing = statement((db, p: Params<{ url: string }>) => db.selectFrom('artworks')
  .select([sql<'artwork' | 'event'>`'artwork'`.as('kind'), 'id', 'entity_id']).where('image_url', '=', p.url)
  .unionAll(db.selectFrom('events').select([sql<'artwork' | 'event'>`'event'`.as('kind'), 'id', 'entity_id']).where('image_url', '=', p.url))
  .limit(20), { cost: 'scan' });

export interface FailedImage {
  url: string;
  error: string | null;
  checked_at: string | null;
  attempts: number;
  /** When it is tried again; null: not any more (until its URL changes or `images retry`). */
  next_try: string | null;
  records: Array<{ kind: 'artwork' | 'event'; id: number; entity_id: number }>;
}

export interface ImageReport { counts: ImageCounts; failed: FailedImage[] }

/** Records by image state and the failed images (the latest 100) with their error, for one entity or all. */
export function imageReport(db: Db, entityId?: number): Promise<ImageReport> {
  return read(db, function* () {
    const counts: ImageCounts = { pending: 0, ready: 0, failed: 0 };
    if (entityId === undefined) for (const row of yield* all(allCounts, {})) counts[row.status] = Number(row.n);
    else Object.assign(counts, yield* imageCountsWork(entityId));
    const rows = yield* all(entityId === undefined ? failedOfAll : failedOfEntity, { entityId: entityId ?? 0 });
    const failed: FailedImage[] = [];
    for (const row of rows) {
      const records = (yield* all(recordsUsing, { url: row.url })).map((r) => ({ kind: r.kind, id: Number(r.id), entity_id: Number(r.entity_id) }));
      failed.push({ url: row.url, error: row.error, checked_at: row.checked_at, attempts: Number(row.attempts), next_try: row.due_at, records });
    }
    return { counts, failed };
  });
}

const retryable = (failedOnly: boolean, scoped: boolean) => statement((db, p: Params<{ entityId: number }>) => {
  let urls = db.selectFrom('images').select('url');
  if (failedOnly) urls = urls.where('status', '=', 'failed');
  return scoped ? urls.where('url', 'in', entityUrls(db, p.entityId)) : urls;
}, { cost: 'scan' });
const RETRYABLE = {
  all: retryable(false, false), failed: retryable(true, false), entity: retryable(false, true), entityFailed: retryable(true, true),
};

const retryOne = statement((db, p: Params<{ url: string; at: string }>) => db.updateTable('images')
  .set({
    status: sql<ImageStatus>`case when status = 'failed' then 'pending' else status end`,
    error: sql<null>`case when status = 'failed' then null else error end`,
    attempts: 0,
  })
  .where('url', '=', p.url));

// Whose job a URL is when the operator or the sweep queues it: the entity of its oldest record.
const ownerOf = statement((db, p: Params<{ url: string }>) => db.selectFrom(
  db.selectFrom('artworks').select('entity_id').where('image_url', '=', p.url)
    .unionAll(db.selectFrom('events').select('entity_id').where('image_url', '=', p.url)).as('used'))
  .select((eb) => eb.fn.min<number>('used.entity_id').as('entity_id')));

function* requeue(url: string, at: string): Work<void> {
  const owner = yield* first(ownerOf, { url });
  yield* imageJob(url, Number(owner?.entity_id ?? 0), at, 'reschedule');
}

/** Writes of one transaction: each a point statement, so a retry of many images commits in slices. */
const SLICE = 500;

/**
 * `images retry`: the images (failed ones only, or all, of one entity or every one) are due now,
 * their retry schedule starts again, and a failed image shows pending until it is tried.
 */
export async function retryImages(db: Db, options: { entityId?: number | undefined; failedOnly: boolean }, at: string): Promise<number> {
  const which = options.entityId === undefined ? (options.failedOnly ? RETRYABLE.failed : RETRYABLE.all)
    : (options.failedOnly ? RETRYABLE.entityFailed : RETRYABLE.entity);
  const urls = (await read(db, () => all(which, { entityId: options.entityId ?? 0 }))).map((row) => row.url);
  for (let start = 0; start < urls.length; start += SLICE) {
    await transaction(db, function* () {
      for (const url of urls.slice(start, start + SLICE)) {
        yield* all(retryOne, { url, at });
        yield* requeue(url, at);
        yield* all(bumpVersions, { url });
      }
    });
  }
  return urls.length;
}

// The sweep's reads: each a walk over a whole table, run rarely (once an hour) and off the event loop.
const orphanUrls = statement((db) => db.selectFrom(
  db.selectFrom('artworks').select('image_url as url').where('image_url', 'is not', null)
    .union(db.selectFrom('events').select('image_url as url').where('image_url', 'is not', null))
    .union(db.selectFrom('artwork_views').select('url')).as('used'))
  .select('used.url')
  .where((eb) => eb.not(eb.exists(db.selectFrom('images').select('images.url').where('images.url', '=', sql.ref<string>('used.url'))))), { cost: 'scan' });
const unusedOriginals = statement((db, p: Params<{ before: string }>) => db.selectFrom('image_originals').select('hash')
  .where('created_at', '<', p.before)
  .where((eb) => eb.not(eb.exists(db.selectFrom('images').select('images.url').where('images.hash', '=', sql.ref<string>('image_originals.hash'))))), { cost: 'scan' });
const originalHashes = statement((db) => db.selectFrom('image_originals').select('hash'), { cost: 'scan' });
// Checked again as it deletes: an original used (or recorded) since the read stays.
const deleteOriginal = statement((db, p: Params<{ hash: string; before: string }>) => db.deleteFrom('image_originals')
  .where('hash', '=', p.hash).where('created_at', '<', p.before)
  .where((eb) => eb.not(eb.exists(db.selectFrom('images').select('images.url').where('images.hash', '=', p.hash)))));

/** How long an original no URL uses is kept: a job that just recorded it is still storing its files. */
export const UNUSED_ORIGINAL_GRACE_MS = 60 * 60_000;

export interface SweepResult { queued: number; originals: number }

/**
 * The sweep's database half: records whose URL has no job (none is expected: a safety net, e.g. for
 * a release that crossed a new use of the URL before releases locked the job's row) are queued, and originals no URL has used for an hour are forgotten. The caller then deletes
 * the stored files of every hash `knownHashes` no longer lists.
 */
export async function sweepImageRows(db: Db, now: number): Promise<SweepResult> {
  const at = new Date(now).toISOString();
  const before = new Date(now - UNUSED_ORIGINAL_GRACE_MS).toISOString();
  const orphans = (await read(db, () => all(orphanUrls, {}))).flatMap((row) => (row.url === null ? [] : [row.url]));
  const unused = (await read(db, () => all(unusedOriginals, { before }))).map((row) => row.hash);
  for (let start = 0; start < Math.max(orphans.length, unused.length); start += SLICE) {
    await transaction(db, function* () {
      for (const url of orphans.slice(start, start + SLICE)) if (yield* first(enqueue, { url, at })) yield* requeue(url, at);
      for (const hash of unused.slice(start, start + SLICE)) yield* all(deleteOriginal, { hash, before });
    });
  }
  return { queued: orphans.length, originals: unused.length };
}

/** Every original the database knows (whose stored files are kept). */
export async function knownHashes(db: Db): Promise<Set<string>> {
  return new Set((await read(db, () => all(originalHashes, {}))).map((row) => row.hash));
}
