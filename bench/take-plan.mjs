// A take's cost as the queue grows (docs/performance.md, Webhooks): EXPLAIN ANALYZE of the take's
// statements on PostgreSQL with N due webhook jobs, one endpoint of one entity full (4 in flight) and
// another entity's one job waiting; each statement planned for its values and as a prepared statement's
// generic plan. Usage: node bench/take-plan.mjs [N ...] (default 100 100000).
import pg from 'pg';
import { connect } from '../dist/db/connect.js';
import { migrateToLatest } from '../dist/db/migrate.js';
import { TAKE_STATEMENTS, takeJob } from '../dist/store/jobs.js';

const admin = process.env.PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const sizes = process.argv.slice(2).map(Number);
for (const n of sizes.length ? sizes : [100, 100_000]) {
  const name = `take_plan_${process.pid}_${n}`;
  const root = new pg.Client({ connectionString: admin });
  await root.connect();
  await root.query(`create database ${name}`);
  const url = admin.replace(/\/[^/]*$/, `/${name}`);
  const handle = connect(url);
  try {
    await migrateToLatest(handle);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    const now = new Date().toISOString();
    const later = new Date(Date.now() + 600_000).toISOString();
    await db.query(`insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, claim, created_at)
      select 'webhook', 'held' || i, 1, '1', '{"seq":1}', 0, 1, $1, 'other:' || i || '#' || (i - 1), $2 from generate_series(1, 4) i`, [later, now]);
    await db.query(`insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, created_at)
      select 'webhook', 'msg' || i, 1, '1', '{"seq":1}', 0, 0, $1, $1 from generate_series(1, $2::int) i`, [now, n]);
    await db.query(`insert into jobs (kind, key, entity_id, grp, payload, attempts, claims, due_at, created_at)
      values ('webhook', 'other', 2, '2', '{"seq":1}', 0, 0, $1, $1)`, [now]);
    await db.query(`insert into job_turns (kind, entity_id, turn) values ('webhook', 1, ''), ('webhook', 2, '')`);
    await db.query('analyze');
    const p = { kind: 'webhook', now: new Date().toISOString(), cap: 4 };
    // Each statement twice: planned for its values, and as the generic plan PostgreSQL may keep for a
    // prepared statement from its sixth execution on (the service's statements are prepared, by name).
    const plan = async (label, statement, params) => {
      const { sql, parameters } = statement.bind(handle.db, params);
      const { rows } = await db.query(`explain (analyze, buffers off, timing on) ${sql}`, parameters);
      console.log(`--- ${label}, ${n} due jobs\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
      await db.query('set plan_cache_mode = force_generic_plan');
      await db.query(`prepare generic_plan as ${sql}`);
      const values = parameters.map((value) => (value === null ? 'null' : db.escapeLiteral(String(value)))).join(', ');
      const generic = await db.query(`explain (analyze, buffers off, timing on) execute generic_plan(${values})`);
      await db.query('deallocate generic_plan');
      await db.query('reset plan_cache_mode');
      console.log(`--- ${label}, ${n} due jobs, generic plan\n${generic.rows.map((r) => r['QUERY PLAN']).join('\n')}`);
    };
    await plan('next entities', TAKE_STATEMENTS.nextEntities, p);
    await db.query('begin');
    await plan('jobs of entity 1 able to start (its groups by a skip scan, the full ones left out)', TAKE_STATEMENTS.dueHeads, { ...p, entityId: 1 });
    await plan('jobs of entity 2 able to start', TAKE_STATEMENTS.dueHeads, { ...p, entityId: 2 });
    // A free slot of the endpoint: none, its 4 slots are held by live claims (`<claim>#<slot>`).
    await plan('a free slot of group 1 (lock)', TAKE_STATEMENTS.lockFreeSlot, { kind: 'webhook', entityId: 1, grp: '1', now: p.now, cap: 4 });
    await plan('a free slot of group 2 (lock)', TAKE_STATEMENTS.lockFreeSlot, { kind: 'webhook', entityId: 2, grp: '2', now: p.now, cap: 4 });
    await db.query('rollback');
    const times = [];
    for (let i = 0; i < 20; i++) {
      const started = performance.now();
      const taken = await takeJob(handle.db, { kind: 'webhook', now: new Date().toISOString(), until: later, claim: `bench:${i}`, groupCap: 4 });
      times.push(performance.now() - started);
      // Put it back: the queue keeps its size, the other entity's job stays takeable.
      if (taken) await db.query('update jobs set claim = null, due_at = $1 where id = $2', [now, taken.id]);
    }
    times.sort((a, b) => a - b);
    console.log(`=== ${n} due jobs: takeJob median ${times[10].toFixed(2)} ms, worst ${times.at(-1).toFixed(2)} ms`);
    await db.end();
  } finally {
    await handle.close();
    await root.query(`drop database ${name}`);
    await root.end();
  }
}
