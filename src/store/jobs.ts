import { sql, type RawBuilder } from 'kysely';
import { read, single, transaction } from '../db/run.js';
import { statement, type Params } from '../db/statement.js';
import type { Db } from '../db/types.js';
import { all, first, type Work } from '../db/work.js';
import { isPostgres, rawQuery } from './sql.js';

/**
 * The durable job queue (migrations 011 and 020, src/jobs/README.md): one table for every kind of
 * background work, and the only module that writes it (`jobs`, `job_turns`, `job_failures`). A job's
 * `due_at` is its schedule, the one place it is kept: an image's next try, a feed's next run, a
 * message's next attempt and a sweep's next round are read from here. The runner (src/jobs/runner.ts)
 * takes, renews and ends jobs through these functions; a kind enqueues its jobs with `enqueue`,
 * inside the write that gives rise to them.
 */

export interface NewJob {
  kind: string;
  key: string;
  entityId: number;
  /** Jobs of one group run at most the kind's group cap at once (a webhook endpoint); a group is one entity's. */
  group?: string | null;
  /** JSON text, the kind's own. */
  payload?: string | null;
  /** ISO time from which it may run. */
  dueAt: string;
  /**
   * A job with this kind and key already queued: `keep` leaves it as it is (one job for the key);
   * `reschedule` makes it due at `dueAt` with this job's fields and its attempts at 0 (a run under way
   * is dropped when it ends, and the job runs again); `move` makes a waiting job due at `dueAt` and
   * leaves one being run alone (its end schedules what follows).
   */
  existing?: 'keep' | 'reschedule' | 'move';
  at: string;
}

type JobParams = Params<{ kind: string; key: string; entityId: number; grp: string | null; payload: string | null; dueAt: string; at: string }>;

const insertValues = (p: JobParams) => ({
  kind: p.kind, key: p.key, entity_id: p.entityId, grp: p.grp, payload: p.payload, attempts: 0, claims: 0, due_at: p.dueAt, claim: null, created_at: p.at,
});

// Each insert tells this process's runner its kind once the transaction commits (src/db/run.ts, afterCommit).
const queued = { signal: (p: { kind: string }) => p.kind };

const insertKeep = statement((db, p: JobParams) => db.insertInto('jobs').values(insertValues(p))
  .onConflict((oc) => oc.columns(['kind', 'key']).doNothing()), queued);

const insertReschedule = statement((db, p: JobParams) => db.insertInto('jobs').values(insertValues(p))
  .onConflict((oc) => oc.columns(['kind', 'key']).doUpdateSet({
    entity_id: p.entityId, grp: p.grp, payload: p.payload, due_at: p.dueAt, attempts: 0, claims: 0, claim: null,
  })), queued);

const insertMove = statement((db, p: JobParams) => db.insertInto('jobs').values(insertValues(p))
  .onConflict((oc) => oc.columns(['kind', 'key']).doUpdateSet({ due_at: p.dueAt }).where('jobs.claim', 'is', null)), queued);

const INSERTS = { keep: insertKeep, reschedule: insertReschedule, move: insertMove };

/**
 * Whether the statement's snapshot sees no turn of the entity: a plain read, which never waits. A write
 * inserts the turn only then (`ensureTurn`, `jobsOfClause`): the insert's unique check on a turn row
 * that an uncommitted take updated (`served`) or end deleted (`deleteClaimedDropTurn`) waits for that
 * transaction, and with one busy entity every write queued behind the takes (docs/performance.md,
 * Webhooks, "Writes never wait for takes"). `on conflict do nothing` stays for two writes inserting the
 * turn at once. What this lets through, an end dropping the turn the write saw, `restoreTurns` repairs.
 */
const noTurn = (kind: unknown, entityId: unknown) => sql<boolean>`not exists (
  select 1 from job_turns seen where seen.kind = ${kind} and seen.entity_id = ${entityId})`;

// An entity never served (or not since its jobs last ran out) goes before every entity served.
const ensureTurn = statement((db, p: Params<{ kind: string; entityId: number }>) => rawQuery(db, sql`
  insert into job_turns (kind, entity_id, turn)
  select cast(${p.kind} as text), cast(${p.entityId} as integer), '' where ${noTurn(p.kind, p.entityId)}
  on conflict (kind, entity_id) do nothing`));

/** Queues a job in the caller's transaction: it exists exactly when the write that queued it commits. */
export function* enqueueJob(job: NewJob): Work<void> {
  const params = {
    kind: job.kind, key: job.key, entityId: job.entityId, grp: job.group ?? null, payload: job.payload ?? null, dueAt: job.dueAt, at: job.at,
  };
  yield* all(INSERTS[job.existing ?? 'keep'], params);
  yield* all(ensureTurn, { kind: job.kind, entityId: job.entityId });
}

/** What a statement's CTE gives each job besides its key (`key`, a column of the CTE, unless told). */
export interface JobsOf {
  key?: RawBuilder<unknown>;
  /** The job's group, an SQL expression over the CTE's columns (a webhook endpoint's id). */
  group?: RawBuilder<unknown>;
  /** The job's payload as JSON text, an SQL expression over the CTE's columns. */
  payload?: RawBuilder<unknown>;
}

/**
 * PostgreSQL, for a write that is one statement (store/changelog.ts, store/images.ts): a job of `kind`
 * for each row the statement's CTE `cte` returns, for one entity, and the entity's turn if the
 * statement sees none (`noTurn`), as two more CTEs (`<cte>_jobs`, `<cte>_turn`) of that statement. Such a statement says its kinds from its rows
 * (its `signal`, src/db/statement.ts) when the runner should look at once.
 */
export const jobsOfClause = (
  kind: string, cte: string, entityId: Params<{ entityId: number }>['entityId'], at: Params<{ at: string }>['at'], of: JobsOf = {},
): RawBuilder<unknown> => sql`
  ${sql.raw(cte)}_jobs as (
    insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, created_at)
    select ${kind}, ${of.key ?? sql.ref('key')}, cast(${entityId} as integer), ${of.group ?? sql`null`}, ${of.payload ?? sql`null`},
      0, 0, cast(${at} as text), cast(${at} as text) from ${sql.raw(cte)}
    on conflict (kind, key) do nothing),
  ${sql.raw(cte)}_turn as (
    insert into job_turns (kind, entity_id, turn)
    select ${kind}, cast(${entityId} as integer), '' where exists (select 1 from ${sql.raw(cte)})
      and ${noTurn(kind, sql`cast(${entityId} as integer)`)}
    on conflict (kind, entity_id) do nothing)`;

const deleteByKey = statement((db, p: Params<{ kind: string; key: string }>) => db.deleteFrom('jobs')
  .where('kind', '=', p.kind).where('key', '=', p.key));

/** Drops a queued job (its subject is gone); a run under way is dropped when it ends. */
export function* cancelJob(kind: string, key: string): Work<void> {
  yield* all(deleteByKey, { kind, key });
}

// ---- taking jobs ----------------------------------------------------------------------------------

/**
 * A take costs the same at 100 due jobs as at 100,000 (docs/performance.md, Webhooks): every statement
 * below is a probe of an index that stops at its first rows, never a walk over an entity's backlog.
 * The take of an entity looks at its groups one by one (a webhook endpoint's jobs: at most
 * ENDPOINT_CONCURRENCY in flight), over the index (kind, entity_id, grp, due_at) of migration 020;
 * a full group is left out by counting its claimed jobs (few) before probing it.
 */

/** How many entities one take looks at, least recently served first. */
const CANDIDATES = 8;
/** How many groups of one entity a take looks at (an entity has at most 10 webhook endpoints). */
const GROUPS = 50;

/**
 * The entities with a job due, least recently served first: one index probe each (jobs_entity_due).
 * A scalar subquery with LIMIT 1, not EXISTS: PostgreSQL turned EXISTS into a join that hashed every
 * due job of the kind (39 ms at 100,000 due jobs, docs/performance.md, Webhooks). The entity is a
 * range of one, not an equality, and the order is the index's (entity_id, due_at): with an equality
 * PostgreSQL drops entity_id from the order as constant, and may then walk jobs_kind_due (kind,
 * due_at) filtering by entity, which read 50,000 jobs of another entity for one whose job came last
 * (10 ms at 100,000 due jobs, bench/take-plan.mjs); only jobs_entity_due gives this order unsorted,
 * in the plan for these values and in the generic plan of the prepared statement alike.
 */
const nextEntities = statement((db, p: Params<{ kind: string; now: string }>) => db.selectFrom('job_turns').select(['job_turns.entity_id', 'job_turns.turn'])
  .where('job_turns.kind', '=', p.kind)
  .where((eb) => eb(db.selectFrom('jobs').select('jobs.id')
    .where('jobs.kind', '=', p.kind)
    .where('jobs.entity_id', '>=', sql.ref<number>('job_turns.entity_id')).where('jobs.entity_id', '<=', sql.ref<number>('job_turns.entity_id'))
    .where('jobs.due_at', '<=', p.now)
    .orderBy('jobs.entity_id').orderBy('jobs.due_at').limit(1), 'is not', null))
  .orderBy('job_turns.turn').orderBy('job_turns.entity_id')
  .limit(CANDIDATES));

/**
 * An entity's jobs able to start, due first first: the first due job of each of its groups not full
 * (`cap` jobs in flight: claimed, lease not passed), and of its jobs without a group. One statement,
 * each part a probe of an index that stops at its first rows: the groups by a skip scan of the take
 * index (one probe per group, not per job: the first group, then the next one above it, and so on),
 * the full ones from the entity's claims, which are few (jobs_claimed), and each group's first due job
 * from the take index (migration 020). The skip scan names the entity as a range of one, in the take
 * index's order, as `nextEntities` does: as `min(grp)` of an entity, the generic plan PostgreSQL keeps
 * for a prepared statement walked jobs_group (kind, grp, due_at) and filtered 100,000 jobs of another
 * entity (24 ms; bench/take-plan.mjs explains both plans).
 */
const dueHeads = statement((db, p: Params<{ kind: string; entityId: number; now: string; cap: number }>) => rawQuery<{ id: number; due_at: string; grp: string | null }>(db, sql`
  with recursive ${headsOf(p, p.entityId, sql`jobs j`)}
  select jobs.id, jobs.due_at, heads.grp from heads join jobs on jobs.id = heads.id
  order by jobs.due_at, jobs.id`));

/**
 * The CTEs `g`, `groups`, `full_groups` and `heads` of `dueHeads` and `nextHeads`: the jobs able to start
 * of the entity `entity` (an SQL value), read from `from`, which names the jobs `j` (and may bring the
 * table the entity comes from).
 */
function headsOf(p: Params<{ kind: string; now: string; cap: number }>, entity: unknown, from: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`g(grp) as (
    select (select j.grp from ${from} where j.kind = ${p.kind} and j.entity_id >= ${entity} and j.entity_id <= ${entity}
      and j.grp is not null order by j.entity_id, j.grp limit 1)
    union all
    select (select j.grp from ${from} where j.kind = ${p.kind} and j.entity_id >= ${entity} and j.entity_id <= ${entity}
      and j.grp > g.grp order by j.entity_id, j.grp limit 1)
    from g where g.grp is not null),
  groups as (select grp from g where grp is not null limit ${sql.lit(GROUPS)}),
  full_groups as (
    select j.grp from ${from} where j.kind = ${p.kind} and j.entity_id = ${entity} and j.claim is not null and j.grp is not null
      and j.due_at > ${p.now}
    group by j.grp having count(*) >= ${p.cap}),
  heads as (
    select groups.grp, (select j.id from ${from} where j.kind = ${p.kind} and j.entity_id = ${entity} and j.grp = groups.grp
      and j.due_at <= ${p.now} order by j.due_at limit 1) as id
    from groups where groups.grp not in (select grp from full_groups)
    union all
    select null, (select j.id from ${from} where j.kind = ${p.kind} and j.entity_id = ${entity} and j.grp is null
      and j.due_at <= ${p.now} order by j.due_at limit 1))`;
}

/**
 * PostgreSQL: `nextEntities` and the first one's `dueHeads` in one statement, the same index probes
 * (a round trip of every take, and of every delivery, whose end takes: docs/performance.md, Webhooks,
 * "Where a delivery's Node CPU goes"). The first entity is the CTE `first_entity`, a value its
 * probes read once, as a range of one in the index's order as in `dueHeads`. A row per entity
 * looked at, in turn order; the first entity's rows carry its jobs able to start (`id`), due first
 * first, and it has one row with a null `id` when it has none.
 */
const nextHeads = statement((db, p: Params<{ kind: string; now: string; cap: number }>) => rawQuery<{ entity_id: number; id: number | null; grp: string | null }>(db, sql`
  with recursive entities as (
    select t.entity_id, t.turn from job_turns t
    where t.kind = ${p.kind} and (select j.id from jobs j where j.kind = ${p.kind} and j.entity_id >= t.entity_id and j.entity_id <= t.entity_id
      and j.due_at <= ${p.now} order by j.entity_id, j.due_at limit 1) is not null
    order by t.turn, t.entity_id limit ${sql.lit(CANDIDATES)}),
  first_entity as (select entity_id from entities order by turn, entity_id limit 1),
  ${headsOf(p, sql.ref('f.entity_id'), sql`jobs j, first_entity f`)},
  startable as (select jobs.id, jobs.due_at, heads.grp, jobs.entity_id from heads join jobs on jobs.id = heads.id)
  select entities.entity_id, startable.id, startable.grp from entities left join startable on startable.entity_id = entities.entity_id
  order by entities.turn, entities.entity_id, startable.due_at, startable.id`));

/**
 * PostgreSQL: a group's places in flight are its cap's slots, 0 to cap - 1; a claim names its slot
 * (`<claim>#<slot>`). A taker takes a free slot's transaction-scoped advisory lock (skipped, never
 * waited for, when another taker holds it: no take waits in a cycle) and then claims the group's next
 * due job with it, if no live claim holds that slot by then. Each slot has at most one live claim, so
 * a group never has more than its cap in flight across processes, while up to cap takes of one group
 * (and any number of one entity's other groups) run at once. SQLite has one writer at a time: there a
 * take counts the group's claims.
 *
 * Two statements whatever the cap (a slot at a time, a lock and a check each, cost up to 2 x cap
 * round trips per take: docs/performance.md, Webhooks): `lockFreeSlot` locks the first slot its snapshot sees without a live
 * claim (`offset 0` keeps the lock out of the subquery, so slots are tried in order and the `limit`
 * stops at the first locked), and says how many it saw free; `takeOfGroup` checks the slot again in
 * its own snapshot, taken after the lock, so a claim committed in between is seen.
 */
const MAX_SLOTS = 64;
const slotKey = (kind: unknown, grp: unknown, slot: unknown) =>
  sql`hashtext(cast(${kind} as text) || '/' || cast(${grp} as text) || '#' || cast(${slot} as text))`;
type SlotOf = Params<{ kind: string; entityId: number; grp: string; now: string }>;
/** Whether a live claim of the group (claimed, lease not passed) holds a slot: `suffix`, `%#<slot>`. */
const slotHeld = (p: SlotOf, suffix: unknown) => sql<boolean>`exists (select 1 from jobs held
  where held.kind = ${p.kind} and held.entity_id = ${p.entityId} and held.claim is not null and held.grp = ${p.grp}
    and held.due_at > ${p.now} and held.claim like ${suffix})`;
const lockFreeSlot = statement((db, p: SlotOf & Params<{ cap: number }>) => rawQuery<{ slot: number; free: number }>(db, sql`
  select slot, free from (
    select s as slot, count(*) over () as free from generate_series(0, cast(${p.cap} as integer) - 1) s
    where not ${slotHeld(p, sql`'%#' || cast(s as text)`)}
    order by s offset 0) free_slots
  where pg_try_advisory_xact_lock(${slotKey(p.kind, p.grp, sql.ref('slot'))})
  limit 1`));
const inFlight = statement((db, p: Params<{ kind: string; entityId: number; grp: string; now: string }>) => db.selectFrom('jobs')
  .select((eb) => eb.fn.countAll<number>().as('n'))
  .where('kind', '=', p.kind).where('entity_id', '=', p.entityId).where('claim', 'is not', null).where('grp', '=', p.grp).where('due_at', '>', p.now));

const TAKEN = ['id', 'key', 'entity_id', 'grp', 'payload', 'attempts', 'claims', 'claim'] as const;

/** SQLite: the group's next due job (one writer at a time: nobody else is claiming). */
const takeOfGroupSqlite = statement((db, p: Params<{ kind: string; entityId: number; grp: string; now: string; claim: string; until: string }>) =>
  db.updateTable('jobs')
    .set((eb) => ({ claim: p.claim, due_at: p.until, claims: eb('claims', '+', 1) }))
    .where('id', 'in', db.selectFrom('jobs').select('jobs.id').where('jobs.kind', '=', p.kind).where('jobs.entity_id', '=', p.entityId)
      .where('jobs.grp', '=', p.grp).where('jobs.due_at', '<=', p.now).orderBy('jobs.due_at').limit(1))
    .returning(TAKEN));

/** The entity's turn set to now (see `served`). */
function servedOf(db: Db, p: Params<{ kind: string; entityId: number; now: string }>) {
  let turn = db.selectFrom('job_turns').select('job_turns.entity_id').where('job_turns.kind', '=', p.kind).where('job_turns.entity_id', '=', p.entityId);
  if (isPostgres(db)) turn = turn.forUpdate().skipLocked();
  return db.updateTable('job_turns').set({ turn: p.now }).where('kind', '=', p.kind).where('entity_id', 'in', turn);
}

type GroupTake = Params<{ kind: string; entityId: number; grp: string; now: string; claim: string; until: string; suffix: string }>;
/**
 * PostgreSQL: claims the group's next due job no other taker is claiming (SKIP LOCKED), over jobs_take;
 * `inSlot`: only while no live claim holds the taker's slot (`suffix`, `%#<slot>`; see `lockFreeSlot`).
 */
const groupTakeOf = (db: Db, p: GroupTake, inSlot: boolean) => {
  const update = db.updateTable('jobs')
    .set((eb) => ({ claim: p.claim, due_at: p.until, claims: eb('claims', '+', 1) }))
    .where('id', 'in', db.selectFrom('jobs').select('jobs.id').where('jobs.kind', '=', p.kind).where('jobs.entity_id', '=', p.entityId)
      .where('jobs.grp', '=', p.grp).where('jobs.due_at', '<=', p.now).orderBy('jobs.due_at').limit(1).forUpdate().skipLocked());
  return (inSlot ? update.where(sql<boolean>`not ${slotHeld(p, p.suffix)}`) : update).returning(TAKEN);
};
const takeOfGroup = statement((db, p: GroupTake) => groupTakeOf(db, p, false));
/**
 * The take in a slot, and its entity made the most recently served (`served`) when it took a job, in
 * one statement: the turn's update was a round trip of every take (docs/performance.md, Webhooks).
 */
const takeInSlot = statement((db, p: GroupTake) => db
  .with('taken', () => groupTakeOf(db, p, true))
  .with('turned', () => servedOf(db, p).where(sql<boolean>`exists (select 1 from taken)`))
  .selectFrom('taken').select(TAKEN));

/**
 * Takes a job found by a probe: its claim is set and `due_at` becomes the lease's end, if it is still
 * due (another taker may have had it meanwhile). On PostgreSQL a job another process is taking at
 * this moment is skipped (SKIP LOCKED).
 */
const takeById = statement((db, p: Params<{ id: number; now: string; claim: string; until: string }>) => {
  let next = db.selectFrom('jobs').select('jobs.id').where('jobs.id', '=', p.id).where('jobs.due_at', '<=', p.now);
  if (isPostgres(db)) next = next.forUpdate().skipLocked();
  return db.updateTable('jobs')
    .set((eb) => ({ claim: p.claim, due_at: p.until, claims: eb('claims', '+', 1) }))
    .where('id', 'in', next)
    .returning(TAKEN);
});

/**
 * The entity becomes the most recently served. On PostgreSQL a turn another taker is setting at this
 * moment is left to it (SKIP LOCKED): takes of one entity never wait for each other, so several run at
 * once up to its groups' caps (they were one at a time, on the entity's turn: docs/performance.md, Webhooks).
 */
const served = statement((db, p: Params<{ kind: string; entityId: number; now: string }>) => servedOf(db, p));

export interface TakenJob {
  id: number;
  kind: string;
  key: string;
  entityId: number;
  group: string | null;
  payload: string | null;
  /** Failures before this run. */
  attempts: number;
  /** Times taken, this one included. */
  claims: number;
  claim: string;
}

export interface TakeOptions {
  kind: string;
  now: string;
  until: string;
  claim: string;
  groupCap?: number | undefined;
}

/** A job taken, and whether another may be takeable now (the runner then wakes one more slot). */
export type Taken = TakenJob & { more: boolean };

/**
 * What a take saw: the job it took, if any, and whether the kind is `saturated`: it had jobs due
 * but none left that could start (their groups full), so a job queued now most likely waits for a
 * place too, and a take at once is wasted (src/jobs/runner.ts, nudge).
 */
export interface TakeResult {
  taken: Taken | undefined;
  saturated: boolean;
}

/**
 * Takes the next job of a kind, round-robin between entities: the entity served least recently that
 * has a job able to start gives its job due first (of its groups not full), and becomes the most
 * recently served.
 */
export async function takeJob(db: Db, options: TakeOptions): Promise<Taken | undefined> {
  return (await takeNextJob(db, options)).taken;
}

/** `takeJob`, with what the take saw of the queue (the runner's). */
export async function takeNextJob(db: Db, options: TakeOptions): Promise<TakeResult> {
  const postgres = isPostgres(db);
  // PostgreSQL: the entities and their startable jobs are read first, outside a transaction (each
  // statement has a snapshot of its own either way, at READ COMMITTED); a take that finds none is those
  // reads alone, without BEGIN and COMMIT: two of its four round trips, and under a write load 0.6 takes
  // per message found nothing (docs/performance.md, Webhooks, "Where a delivery's Node CPU goes").
  const seen = postgres ? await read(db, () => look(options)) : undefined;
  if (seen && !seen.found) return { taken: undefined, saturated: seen.saturated };
  // A take lost in a PostgreSQL crash is only a job not yet taken: its commit need not wait for the disk.
  return transaction(db, () => take(options, postgres, seen?.found), { durable: false });
}

/** PostgreSQL: the entities to look at, in turn order, and the first one's jobs able to start, in one statement (`nextHeads`). */
function* entitiesAndHeads(options: TakeOptions): Work<{ entities: Array<{ entity_id: number }>; heads: Array<{ id: number; grp: string | null }> }, 'point'> {
  const rows = yield* all(nextHeads, { kind: options.kind, now: options.now, cap: options.groupCap ?? 2 ** 31 - 1 });
  const entities: Array<{ entity_id: number }> = [];
  const heads: Array<{ id: number; grp: string | null }> = [];
  for (const row of rows) {
    if (entities.at(-1)?.entity_id !== Number(row.entity_id)) entities.push({ entity_id: Number(row.entity_id) });
    if (row.id !== null) heads.push({ id: Number(row.id), grp: row.grp });
  }
  return { entities, heads };
}

/** What a take's reads found: the entities looked at, and the first one's (at `index`) startable jobs. */
interface Found {
  entities: Array<{ entity_id: number }>;
  index: number;
  candidates: Array<{ id: number; grp: string | null }>;
}

/** A take's reads (`takeNextJob`): the first entity, in turn order, with a job able to start; or whether the kind is saturated. */
function* look(options: TakeOptions): Work<{ found?: Found; saturated: boolean }, 'point'> {
  const { kind, now } = options;
  const cap = options.groupCap ?? 2 ** 31 - 1;
  const { entities, heads } = yield* entitiesAndHeads(options);
  for (const [index, { entity_id: entityId }] of entities.entries()) {
    const candidates = index === 0 ? heads : yield* all(dueHeads, { kind, entityId, now, cap });
    if (candidates.length > 0) return { found: { entities, index, candidates }, saturated: false };
  }
  return { saturated: entities.length > 0 && entities.length < CANDIDATES };
}

/**
 * A take as a step of a transaction (`takeJob`, or `endAndTake` taking the next job). `more` is false
 * only when the take knows nothing else is takeable now: the group it took from has no other free
 * slot, and no other group or entity had a job due. The runner wakes another slot only when it is true
 * (under a backlog of one endpoint, each take woke a slot whose take found the endpoint full:
 * docs/performance.md, Webhooks).
 */
function* take(options: TakeOptions, postgres: boolean, found?: Found): Work<TakeResult> {
  const { kind, now, until, claim } = options;
  const cap = options.groupCap ?? 2 ** 31 - 1;
  // PostgreSQL: the entities and the first one's jobs able to start in one statement.
  const looked = found ? undefined : postgres ? yield* entitiesAndHeads(options) : { entities: yield* all(nextEntities, { kind, now }), heads: undefined };
  const entities = found?.entities ?? looked!.entities;
  for (const [index, { entity_id: entityId }] of entities.entries()) {
    // Those before the one the reads found had nothing able to start.
    if (found && index < found.index) continue;
    /**
     * A job of one group within its cap (see `lockFreeSlot`), whether the group has a free slot left,
     * and whether its statement made the entity the most recently served (`takeInSlot`).
     */
    const takeInGroup = function* (grp: string) {
      if (!postgres) {
        const n = Number((yield* first(inFlight, { kind, entityId, grp, now }))?.n ?? 0);
        if (n >= cap) return undefined;
        const row = yield* first(takeOfGroupSqlite, { kind, entityId, grp, now, claim, until });
        return row && { row, freeLeft: n + 1 < cap, served: false };
      }
      if (cap > MAX_SLOTS) {
        const row = yield* first(takeOfGroup, { kind, entityId, grp, now, claim, until, suffix: '' });
        return row && { row, freeLeft: true, served: false };
      }
      const slot = yield* first(lockFreeSlot, { kind, entityId, grp, now, cap });
      if (!slot) return undefined;
      // The group's next due job, or none left (or the slot taken meanwhile): either way this group is done with.
      const row = yield* first(takeInSlot, { kind, entityId, grp, now, claim: `${claim}#${slot.slot}`, until, suffix: `%#${slot.slot}` });
      return row && { row, freeLeft: Number(slot.free) > 1, served: true };
    };
    const candidates = found && index === found.index ? found.candidates
      : index === 0 && looked?.heads ? looked.heads : yield* all(dueHeads, { kind, entityId, now, cap });
    for (const [at, { id, grp }] of candidates.entries()) {
      const got = grp === null ? { row: yield* first(takeById, { id: Number(id), now, claim, until }), freeLeft: true, served: false } : yield* takeInGroup(grp);
      if (!got?.row) continue;
      const { row } = got;
      if (!got.served) yield* all(served, { kind, entityId, now });
      // Other candidates of this entity, entities after it (or beyond the CANDIDATES looked at), or room in this group.
      const more = got.freeLeft || at < candidates.length - 1 || index < entities.length - 1 || entities.length >= CANDIDATES;
      const taken = {
        id: Number(row.id), kind, key: row.key, entityId: Number(row.entity_id), group: row.grp, payload: row.payload,
        attempts: Number(row.attempts), claims: Number(row.claims), claim: row.claim!, more,
      };
      return { taken, saturated: !more };
    }
  }
  // Jobs due, none able to start (unless past the entities looked at).
  return { taken: undefined, saturated: entities.length > 0 && entities.length < CANDIDATES };
}

const extend = statement((db, p: Params<{ id: number; claim: string; until: string }>) => db.updateTable('jobs')
  .set({ due_at: p.until }).where('id', '=', p.id).where('claim', '=', p.claim).returning('id'));

/** Keeps a claim while its work goes on; false when it was lost (taken over, rescheduled or cancelled). */
export async function renewJob(db: Db, job: TakenJob, until: string): Promise<boolean> {
  return Boolean(await single(db, () => first(extend, { id: job.id, claim: job.claim, until })));
}

// ---- ending jobs ------------------------------------------------------------------------------------

const deleteClaimed = statement((db, p: Params<{ id: number; claim: string }>) => db.deleteFrom('jobs')
  .where('id', '=', p.id).where('claim', '=', p.claim).returning('id'));

const again = statement((db, p: Params<{ id: number; claim: string; dueAt: string; attempts: number }>) => db.updateTable('jobs')
  .set({ due_at: p.dueAt, attempts: p.attempts, claims: 0, claim: null }).where('id', '=', p.id).where('claim', '=', p.claim).returning('id'));

// What the gauges count as failed in the last hour (docs/operations.md, Jobs); swept after a day.
const insertFailure = statement((db, p: Params<{ kind: string; entityId: number; key: string; error: string; at: string }>) => db.insertInto('job_failures')
  .values({ kind: p.kind, entity_id: p.entityId, key: p.key, error: p.error, at: p.at }));

// Forgotten once its jobs ran out: its next job goes first again (it waited for nobody meanwhile).
const dropTurn = statement((db, p: Params<{ kind: string; entityId: number }>) => db.deleteFrom('job_turns')
  .where('kind', '=', p.kind).where('entity_id', '=', p.entityId)
  .where((eb) => eb.not(eb.exists(db.selectFrom('jobs').select('jobs.id').where('jobs.kind', '=', p.kind).where('jobs.entity_id', '=', p.entityId)))));

/**
 * PostgreSQL: `deleteClaimed` and `dropTurn` in one statement (the turn's delete was a round trip of
 * every job's end: docs/performance.md, Webhooks). The turn goes only if the job was deleted and no
 * other job of the entity is left; the statement sees the jobs as they were before it, the deleted
 * one among them, so that one is left out by its id.
 */
const deleteClaimedDropTurn = statement((db, p: Params<{ id: number; claim: string; kind: string; entityId: number }>) => rawQuery<{ id: number; dropped: boolean }>(db, sql`
  with gone as (delete from jobs where id = ${p.id} and claim = ${p.claim} returning id),
  turn as (delete from job_turns where kind = ${p.kind} and entity_id = ${p.entityId} and exists (select 1 from gone)
    and not exists (select 1 from jobs where kind = ${p.kind} and entity_id = ${p.entityId} and id <> ${p.id})
    returning entity_id)
  select id, exists (select 1 from turn) as dropped from gone`));

/** `done`: deleted; `retryAt`: due again then with `attempts` (0 for a recurring job's next round). */
export type JobEnd = ({ done: true } | { retryAt: string; attempts: number }) & { failed?: { error: string; at: string } | undefined };

/**
 * Ends a run under its claim, with `record` (the kind's outcome) in the same transaction: the job is
 * deleted (done, or failed for good) or due again at `retryAt`; a `failed` end is counted for the
 * gauges. False when the claim was lost: nothing is recorded, another run owns the job.
 */
export async function endJob(db: Db, job: TakenJob, end: JobEnd, record?: () => Work<void>): Promise<boolean> {
  return (await endAndTake(db, job, end, { record })).saved;
}

/**
 * `endJob`, and with `next` the take of the kind's next job (`takeJob`, round-robin as ever) in the
 * same transaction: a slot that ends a job starts its next one for one transaction, not two
 * (docs/performance.md, Webhooks; the freed place in its group is seen by the take, its own
 * transaction's delete). Such a transaction commits without waiting for the disk, as a take does: it
 * holds the entity's turn (`served`), which other takes of the entity skip (SKIP LOCKED) until it
 * commits, and writes never wait for (`noTurn`). An end lost in a database crash is a job run
 * again: delivery is at least once (docs/api.md, Webhooks).
 */
export function endAndTake(db: Db, job: TakenJob, end: JobEnd, also: EndWrites & { next?: TakeOptions | undefined }): Promise<EndAndTake> {
  const postgres = isPostgres(db);
  return transaction(db, function* () {
    // What happened outside whoever holds the job now (a webhook attempt reached its receiver).
    if (also.log) yield* also.log();
    const { saved, dropped } = yield* ended(job, end, also.record, postgres);
    return { saved, droppedTurn: dropped, next: also.next ? yield* take(also.next, postgres) : undefined };
  }, { durable: !also.next });
}

/**
 * What `endAndTake` did: whether the end was saved, the take's result, and `droppedTurn`: PostgreSQL
 * dropped the entity's turn with the job (its last one). A write running at that moment may have seen
 * the turn and queued a job without one: the runner has such entities' turns checked (`restoreTurns`)
 * a poll later (src/jobs/runner.ts).
 */
export interface EndAndTake {
  saved: boolean;
  droppedTurn: boolean;
  next: TakeResult | undefined;
}

/** A run's writes with its end: `record` only if the run still held its claim, `log` either way. */
export interface EndWrites {
  record?: (() => Work<void>) | undefined;
  log?: (() => Work<void>) | undefined;
}

function* ended(job: TakenJob, end: JobEnd, record: (() => Work<void>) | undefined, postgres: boolean): Work<{ saved: boolean; dropped: boolean }> {
  // A done job's turn is dropped with it on PostgreSQL (one statement), after its record on SQLite
  // (a record that queues a job of the same kind and entity keeps the turn there; on PostgreSQL its
  // queuing makes the turn again, first in line: that job waited for nobody).
  const dropsTurn = 'done' in end && postgres;
  const kept: { id: number; dropped?: boolean } | undefined = 'done' in end
    ? yield* first(dropsTurn ? deleteClaimedDropTurn : deleteClaimed, { id: job.id, claim: job.claim, kind: job.kind, entityId: job.entityId })
    : yield* first(again, { id: job.id, claim: job.claim, dueAt: end.retryAt, attempts: end.attempts });
  if (!kept) return { saved: false, dropped: false };
  if (end.failed) yield* all(insertFailure, { kind: job.kind, entityId: job.entityId, key: job.key, error: end.failed.error.slice(0, 500), at: end.failed.at });
  if (record) yield* record();
  // SQLite: one writer at a time, so no write is between its look at the turn and its commit now.
  if ('done' in end && !dropsTurn) yield* all(dropTurn, { kind: job.kind, entityId: job.entityId });
  return { saved: true, dropped: Boolean(kept.dropped) };
}

// ---- for tests and operators ------------------------------------------------------------------------

const countOfKind = statement((db, p: Params<{ kind: string }>) => db.selectFrom('jobs')
  .select((eb) => eb.fn.countAll<number>().as('n')).where('kind', '=', p.kind), { cost: 'scan' });

/** Jobs of a kind still to end. */
export async function jobsLeft(db: Db, kind: string): Promise<number> {
  return Number((await read(db, () => first(countOfKind, { kind })))?.n ?? 0);
}

export interface Enqueue<P> {
  /** One job per (kind, key): a webhook message id, a feed id, an image URL. */
  key: string;
  /** Whose job it is: jobs are taken round-robin between entities. */
  entityId: number;
  /** Its group for the kind's `groupCap` (a webhook endpoint's id). */
  group?: string | null;
  payload?: P;
  /** ISO time it may run from (now, for at once). */
  dueAt: string;
  /** The same key already queued: `keep` it (default), `reschedule` it with these fields, or `move` it if waiting (store/jobs.ts). */
  existing?: 'keep' | 'reschedule' | 'move';
  /** ISO time of the write. */
  at: string;
}

/**
 * Queues a job as a step of the caller's transaction (`yield* enqueue(kind, {...})` inside
 * `transaction(db, function* () {...})`): it exists exactly when that write commits. Call the
 * runner's `nudge(kind.name)` after the commit so an idle slot of this process starts it at once.
 */
export function enqueue<P>(kind: string | { name: string }, job: Enqueue<P>): Work<void> {
  return enqueueJob({
    kind: typeof kind === 'string' ? kind : kind.name, key: job.key, entityId: job.entityId, group: job.group ?? null,
    payload: job.payload === undefined ? null : JSON.stringify(job.payload), dueAt: job.dueAt, existing: job.existing ?? 'keep', at: job.at,
  });
}

/** Drops a queued job in the caller's transaction (its subject was deleted); a run under way ends unrecorded. */
export function cancel(kind: { name: string }, key: string): Work<void> {
  return cancelJob(kind.name, key);
}

const waitingJob = statement((db, p: Params<{ kind: string; key: string }>) => db.selectFrom('jobs').select('due_at')
  .where('kind', '=', p.kind).where('key', '=', p.key).where('claim', 'is', null));

/** When a waiting job is due (a feed's next run); null while it is being run, or when there is none. */
export function* waitingSince(kind: string, key: string): Work<string | null> {
  return (yield* first(waitingJob, { kind, key }))?.due_at ?? null;
}

// ---- the queue seen from outside (docs/operations.md, Jobs) -------------------------------------------

/**
 * Counts stop here: a gauge reads at most this many index entries per kind (a scrape costs the same at
 * a backlog of a million), and says "at least" past it.
 */
export const COUNT_CAP = 100_000;

type GaugeParams = Params<{ kind: string; now: string; since: string; entityId: number }>;
const capped = (db: Db, rows: { as(name: 'r'): never }) => db.selectFrom(rows.as('r')).select((eb) => eb.fn.countAll<number>().as('n'));

/** The gauges' statements, for every entity or (`scoped`) one: each over an index, bounded by COUNT_CAP. */
function gaugeStatements(scoped: boolean) {
  const jobsOf = (db: Db, p: GaugeParams) => {
    const rows = db.selectFrom('jobs').where('jobs.kind', '=', p.kind);
    return scoped ? rows.where('jobs.entity_id', '=', p.entityId) : rows;
  };
  return {
    // Waiting: not claimed (due now or later).
    queued: statement((db, p: GaugeParams) => capped(db, jobsOf(db, p).select('jobs.id').where('jobs.claim', 'is', null).limit(COUNT_CAP) as never), { cost: 'scan' }),
    // Running: claimed; few (each process's slots), over the partial index of claimed jobs.
    running: statement((db, p: GaugeParams) => capped(db, jobsOf(db, p).select('jobs.id').where('jobs.claim', 'is not', null).limit(COUNT_CAP) as never), { cost: 'scan' }),
    // The oldest job due (a claimed one whose lease passed is due again): the first entry of the index.
    oldest: statement((db, p: GaugeParams) => jobsOf(db, p).select('jobs.due_at').where('jobs.due_at', '<=', p.now).orderBy('jobs.due_at').limit(1), { cost: 'scan' }),
    failed: statement((db, p: GaugeParams) => {
      const rows = db.selectFrom('job_failures').select('job_failures.id').where('job_failures.kind', '=', p.kind).where('job_failures.at', '>=', p.since);
      return capped(db, (scoped ? rows.where('job_failures.entity_id', '=', p.entityId) : rows).limit(COUNT_CAP) as never);
    }, { cost: 'scan' }),
  };
}
const GAUGES = { all: gaugeStatements(false), entity: gaugeStatements(true) };

export interface KindGauges {
  kind: string;
  queued: number;
  running: number;
  /** Given up, or ended with a failed outcome, in the last hour. */
  failedLastHour: number;
  /** How long the oldest due job has waited (0: none is due). */
  oldestDueSeconds: number;
}

/**
 * The gauges of each kind (of one entity, or of all): four indexed queries per kind, each bounded
 * (COUNT_CAP), run off the event loop on SQLite.
 */
export function queueGauges(db: Db, kinds: readonly string[], now: number, entityId?: number): Promise<KindGauges[]> {
  return read(db, function* () {
    const gauges: KindGauges[] = [];
    for (const kind of kinds) {
      const p = { kind, now: new Date(now).toISOString(), since: new Date(now - 3_600_000).toISOString(), entityId: entityId ?? 0 };
      const statements = entityId === undefined ? GAUGES.all : GAUGES.entity;
      const oldest = (yield* first(statements.oldest, p))?.due_at;
      gauges.push({
        kind,
        queued: Number((yield* first(statements.queued, p))?.n ?? 0),
        running: Number((yield* first(statements.running, p))?.n ?? 0),
        failedLastHour: Number((yield* first(statements.failed, p))?.n ?? 0),
        oldestDueSeconds: oldest === undefined ? 0 : Math.max(0, Math.round((now - Date.parse(oldest)) / 1000)),
      });
    }
    return gauges;
  });
}

// ---- recurring jobs -------------------------------------------------------------------------------------

/** The one job of a recurring kind (a sweep): queued once, by whichever process starts first. */
export const RECURRING_KEY = 'recurring';

/** Makes sure each recurring kind has its job, first due at `firstAt` (a job already there keeps its time). */
export function ensureRecurring(db: Db, kinds: readonly string[], firstAt: string, at: string): Promise<void> {
  return transaction(db, function* () {
    for (const kind of kinds) yield* enqueueJob({ kind, key: RECURRING_KEY, entityId: 0, dueAt: firstAt, at });
  });
}

const FAILURES_KEPT_MS = 24 * 3_600_000;
const SWEEP_CHUNK = 1000;
const oldFailures = statement((db, p: Params<{ before: string }>) => db.deleteFrom('job_failures')
  .where('id', 'in', db.selectFrom('job_failures').select('id').where('at', '<', p.before).limit(SWEEP_CHUNK)).returning('id'));

/** Forgets failures older than a day (the gauges count the last hour), a bounded batch at a time. */
export async function sweepJobFailures(db: Db, now: number): Promise<{ removed: number }> {
  const before = new Date(now - FAILURES_KEPT_MS).toISOString();
  let removed = 0;
  for (;;) {
    const chunk = (await transaction(db, () => all(oldFailures, { before }))).length;
    removed += chunk;
    if (chunk < SWEEP_CHUNK) return { removed };
  }
}

// ---- turns restored ----------------------------------------------------------------------------------

/**
 * A job is taken only through its entity's turn (`nextEntities`). A write inserts the turn only when its
 * snapshot sees none (`noTurn`), so an end that drops the turn (its entity's last job, `deleteClaimedDropTurn`)
 * while such a write is under way leaves the write's job without one: the write saw the turn, the end
 * did not see the write's uncommitted job. PostgreSQL only: on SQLite a write transaction runs alone
 * (BEGIN IMMEDIATE on the one connection), so no write is between its look and its commit when an end
 * drops a turn. Two repairs, each bounded (docs/performance.md, Webhooks, "Writes never wait for takes"):
 * the runner has the turns its ends dropped checked a poll later (`restoreTurns`, src/jobs/runner.ts),
 * which catches a write that committed by then, and the sweep `sweep_job_turns` (`sweepJobTurns`)
 * catches the rest, one index probe per entity with jobs.
 */
const RESTORE_MAX = 1000;

/** PostgreSQL: a turn, first in line, for each of these entities with a job of the kind and no turn. */
const restoreTurnsOf = statement((db, p: Params<{ kind: string; ids: number[] }>) => rawQuery<{ entity_id: number }>(db, sql`
  insert into job_turns (kind, entity_id, turn)
  select cast(${p.kind} as text), e, '' from unnest(cast(${p.ids} as integer[])) e
  where exists (select 1 from jobs j where j.kind = ${p.kind} and j.entity_id = e) and ${noTurn(p.kind, sql.ref('e'))}
  on conflict (kind, entity_id) do nothing
  returning entity_id`), { signal: (p, rows) => (rows.length > 0 ? p.kind : undefined) });

/** One entity's turn, if it has a job of the kind and no turn (SQLite's sweep; PostgreSQL's uses `restoreTurnsOf`). */
const restoreTurnOf = statement((db, p: Params<{ kind: string; entityId: number }>) => rawQuery<{ entity_id: number }>(db, sql`
  insert into job_turns (kind, entity_id, turn)
  select cast(${p.kind} as text), cast(${p.entityId} as integer), ''
  where exists (select 1 from jobs j where j.kind = ${p.kind} and j.entity_id = ${p.entityId}) and ${noTurn(p.kind, p.entityId)}
  on conflict (kind, entity_id) do nothing
  returning entity_id`), { signal: (p, rows) => (rows.length > 0 ? p.kind : undefined) });

/**
 * Gives the entities of `entityIds` that have a job of `kind` and no turn their turn (first in line:
 * their jobs waited); how many it gave. Once committed, this process's idle slots of the kind look.
 */
export async function restoreTurns(db: Db, kind: string, entityIds: readonly number[]): Promise<number> {
  let restored = 0;
  for (let from = 0; from < entityIds.length; from += RESTORE_MAX) {
    const ids = entityIds.slice(from, from + RESTORE_MAX);
    restored += await transaction(db, function* () {
      if (isPostgres(db)) return (yield* all(restoreTurnsOf, { kind, ids: [...ids] })).length;
      let n = 0;
      for (const entityId of ids) n += (yield* all(restoreTurnOf, { kind, entityId })).length;
      return n;
    });
  }
  return restored;
}

/** The kinds that have jobs: a skip scan of jobs_kind_due, one probe per kind. */
const kindsWithJobs = statement((db) => rawQuery<{ kind: string }>(db, sql`
  with recursive k(kind) as (
    select (select min(kind) from jobs)
    union all
    select (select min(j.kind) from jobs j where j.kind > k.kind) from k where k.kind is not null)
  select kind from k where kind is not null`));

/**
 * The next `SWEEP_CHUNK` entities with a job of the kind after `after`, and whether each has a turn: a
 * skip scan of jobs_entity_due (kind, entity_id, due_at), one probe per entity (as `dueHeads` walks an
 * entity's groups), never a walk over the jobs; each entity's turn a probe of job_turns' key (a scalar
 * subquery with LIMIT: as NOT EXISTS, PostgreSQL read every turn of the kind into a hash, per chunk).
 * 1,000 entities in 14–26 ms on PostgreSQL, generic plan, at 100,000 jobs (docs/performance.md, Webhooks).
 */
const entitiesWithJobs = statement((db, p: Params<{ kind: string; after: number }>) => rawQuery<{ entity_id: number; turned: number | null }>(db, sql`
  with recursive e(entity_id, n) as (
    select (select j.entity_id from jobs j where j.kind = ${p.kind} and j.entity_id > ${p.after} order by j.entity_id limit 1), 1
    union all
    select (select j.entity_id from jobs j where j.kind = ${p.kind} and j.entity_id > e.entity_id order by j.entity_id limit 1), e.n + 1
    from e where e.entity_id is not null and e.n < ${sql.lit(SWEEP_CHUNK)})
  select e.entity_id, (select 1 from job_turns t where t.kind = ${p.kind} and t.entity_id = e.entity_id limit 1) as turned
  from e where e.entity_id is not null`));

/**
 * The sweep `sweep_job_turns` (src/http/jobs.ts): every entity with a job and no turn gets its turn.
 * Such a job is left by a write racing the end of its entity's last job when the runner's own check
 * came before the write committed (`restoreTurns`), or by a process that died before checking.
 */
export async function sweepJobTurns(db: Db): Promise<{ entities: number; restored: number }> {
  let entities = 0;
  let restored = 0;
  for (const { kind } of await read(db, () => all(kindsWithJobs, {}))) {
    for (let after = -(2 ** 31); ;) {
      const chunk = await read(db, () => all(entitiesWithJobs, { kind, after }));
      entities += chunk.length;
      const missing = chunk.filter((row) => !row.turned).map((row) => Number(row.entity_id));
      if (missing.length > 0) restored += await restoreTurns(db, kind, missing);
      if (chunk.length < SWEEP_CHUNK) break;
      after = Number(chunk.at(-1)!.entity_id);
    }
  }
  return { entities, restored };
}

/** The take's statements, for EXPLAIN in bench/take-plan.mjs (docs/performance.md, Webhooks). */
export const TAKE_STATEMENTS = { nextEntities, dueHeads, nextHeads, lockFreeSlot, takeById } as const;
