import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { TAKE_STATEMENTS } from '../../src/store/jobs.js';
import { DIALECT, migratedDatabase, type FreshDatabase } from '../support/database.js';

/**
 * A take's statements keep to their entity's index rows however the queue is spread, in the generic
 * plan PostgreSQL keeps for a prepared statement (the service's statements are prepared, by name) as
 * in the plan for their values (docs/performance.md, Webhooks; bench/take-plan.mjs shows the plans).
 * The queue: one entity with 100,000 due webhook jobs of one endpoint, four of them in flight, and
 * another entity with one due job. A plan that walks a kind-wide index (jobs_kind_due, jobs_group) in
 * its order and filters by entity read the first entity's jobs to find the second's one: 50,000 and
 * 100,000 rows filtered out, 10 and 24 ms.
 */

interface PlanNode { 'Node Type': string; 'Index Name'?: string; 'Rows Removed by Filter'?: number; Plans?: PlanNode[] }

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

describe.runIf(DIALECT === 'postgres')('the take statements\' plans on PostgreSQL, 100,000 due jobs of one entity', () => {
  let database: FreshDatabase;
  let handle: DatabaseHandle;
  let db: pg.Client;
  const now = new Date().toISOString();

  beforeAll(async () => {
    database = await migratedDatabase();
    handle = connect(database.url);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    const later = new Date(Date.now() + 600_000).toISOString();
    await db.query(`insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, claim, created_at)
      select 'webhook', 'held' || i, 1, '1', '{}', 0, 1, $1, 'other:' || i || '#' || (i - 1), $2 from generate_series(1, 4) i`, [later, now]);
    await db.query(`insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, created_at)
      select 'webhook', 'msg' || i, 1, '1', '{}', 0, 0, $1, $1 from generate_series(1, 100000) i`, [now]);
    await db.query(`insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, created_at)
      values ('webhook', 'other', 2, '2', '{}', 0, 0, $1, $1)`, [now]);
    await db.query(`insert into job_turns (kind, entity_id, turn) values ('webhook', 1, ''), ('webhook', 2, '')`);
    await db.query('analyze jobs');
    await db.query('analyze job_turns');
  }, 60_000);

  afterAll(async () => {
    await db?.end();
    await handle?.close();
    await database?.drop();
  });

  /** The plan's nodes as run, planned for the values or as the prepared statement's generic plan. */
  async function planOf(statement: keyof typeof TAKE_STATEMENTS, params: object, generic: boolean): Promise<PlanNode[]> {
    const { sql, parameters } = TAKE_STATEMENTS[statement].bind(handle.db, params as never);
    if (!generic) {
      const { rows } = await db.query(`explain (analyze, format json) ${sql}`, parameters);
      return nodesOf(rows[0]['QUERY PLAN'][0].Plan);
    }
    await db.query('set plan_cache_mode = force_generic_plan');
    await db.query(`prepare generic_plan as ${sql}`);
    try {
      const values = parameters.map((value) => (value === null ? 'null' : db.escapeLiteral(String(value as string | number)))).join(', ');
      const { rows } = await db.query(`explain (analyze, format json) execute generic_plan(${values})`);
      return nodesOf(rows[0]['QUERY PLAN'][0].Plan);
    } finally {
      await db.query('deallocate generic_plan');
      await db.query('reset plan_cache_mode');
    }
  }

  const cases = [
    { name: 'next entities', statement: 'nextEntities', params: { kind: 'webhook', now } },
    { name: 'the jobs able to start of the entity with one job', statement: 'dueHeads', params: { kind: 'webhook', entityId: 2, now, cap: 4 } },
    { name: 'the jobs able to start of the entity whose endpoint is full', statement: 'dueHeads', params: { kind: 'webhook', entityId: 1, now, cap: 4 } },
    { name: 'next entities and the first one\'s jobs able to start, in one statement', statement: 'nextHeads', params: { kind: 'webhook', now, cap: 4 } },
  ] as const;

  for (const { name, statement, params } of cases) {
    for (const generic of [false, true]) {
      test(`${name}${generic ? ', generic plan' : ''}: by index, with no more than a few rows read and filtered out`, async () => {
        const nodes = await planOf(statement, params, generic);
        expect(nodes.some((node) => node['Index Name'] !== undefined)).toBe(true);
        expect(Math.max(0, ...nodes.map((node) => node['Rows Removed by Filter'] ?? 0))).toBeLessThan(100);
      });
    }
  }
});
