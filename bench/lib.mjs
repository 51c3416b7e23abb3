// What the bench scripts share: the service as a child process, the CLI, and filling a database fast.
import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'bin', 'art-catalog');

/** Starts a process and resolves `url` with the address of its listening line (text or JSON log). */
export function startProcess(command, args, env) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+)|"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match) resolve(match[1] ?? match[2]);
    });
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}`)));
  });
  return { child, url };
}

/** The service as `npm start` runs it: the CLI's launcher passes the V8 flags (docs/deploy.md). */
// Tracing the server alone (not the CLI calls whose JSON a bench reads): SERVE_NODE_OPTIONS becomes
// its NODE_OPTIONS (e.g. "--import /abs/trace.mjs", a module that turns on --trace-gc), and
// BENCH_SERVER_LOG=FILE keeps what it prints.
export function startService(env) {
  const started = startProcess(BIN, ['serve'], process.env.SERVE_NODE_OPTIONS ? { ...env, NODE_OPTIONS: process.env.SERVE_NODE_OPTIONS } : env);
  if (process.env.BENCH_SERVER_LOG) started.child.stdout.on('data', (chunk) => appendFileSync(process.env.BENCH_SERVER_LOG, chunk));
  return started;
}

export function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', resolve);
    child.kill('SIGTERM');
  });
}

export const currentRssMb = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

/** CPU seconds (user + system, all threads) a process has used so far, from /proc/<pid>/stat (100 ticks a second). */
export function cpuSeconds(pid) {
  const { user, system } = cpuSplit(pid);
  return user + system;
}

/**
 * CPU seconds of the PostgreSQL backends connected to a database now (a service's pool), asked through
 * `adminUrl`; 0 without a database name. Read from /proc: PostgreSQL on this machine.
 */
export async function backendCpuSeconds(adminUrl, databaseName) {
  if (!databaseName) return 0;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [databaseName]);
    return rows.reduce((sum, { pid }) => {
      try {
        return sum + cpuSeconds(pid);
      } catch {
        return sum; // a backend that ended meanwhile
      }
    }, 0);
  } finally {
    await client.end();
  }
}

/** The same, as user and system (kernel) seconds: a read's system time is mostly its socket's writes. */
export function cpuSplit(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

/** Peak resident set size of a process so far (Linux VmHWM), in MB. */
export function peakRssMb(pid) {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

export function cli(env, ...args) {
  return JSON.parse(execFileSync(BIN, [...args, '--json'], { env: { ...process.env, ...env } }).toString());
}

/** An entity with a partner key whose rate limit is lifted, on a database named by env.DATABASE_URL. */
export function benchTenant(env, name) {
  const entity = cli(env, 'entity', 'create', '--type', 'gallery', '--name', `${name} ${Date.now()}`);
  const { key } = cli(env, 'key', 'create', '--entity', String(entity.id), '--tier', 'partner');
  return { entity, key };
}

export const artworkItem = (i, tag) => ({
  title: `Bench Study ${tag} ${i}`, artist_name: `Bench Artist ${i % 500}`, creation_year: 1900 + (i % 120),
  medium: 'Oil on canvas', dimensions: '60 x 80 cm', price: 1000 + i, currency: 'EUR', availability: 'available',
});

/** Posts `count` artworks through the batch endpoint, 100 per request, `parallel` requests at a time. */
export async function seedArtworks(url, auth, count, tag, parallel = 4) {
  const batches = Math.ceil(count / 100);
  let next = 0;
  await Promise.all(Array.from({ length: parallel }, async () => {
    while (next < batches) {
      const b = next++;
      const items = Array.from({ length: Math.min(100, count - b * 100) }, (_, j) => artworkItem(b * 100 + j, tag));
      const response = await fetch(`${url}/v1/artworks/batch`, { method: 'POST', headers: auth, body: JSON.stringify({ items }) });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`seeding failed: ${response.status} ${text}`);
    }
  }));
}

function runModule(script) {
  execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: 'inherit' });
}

/** Adds filler changelog entries straight into the database (a long-lived catalog's history). */
export function padChangelog(databaseUrl, entityId, count) {
  process.stderr.write(`  padding the changelog with ${count} entries…\n`);
  runModule(`
    import { connect } from './dist/db/connect.js';
    const { db, close } = connect(${JSON.stringify(databaseUrl)});
    const base = Date.parse('2020-01-01T00:00:00Z');
    for (let done = 0; done < ${count}; done += 10000) {
      const rows = Array.from({ length: Math.min(10000, ${count} - done) }, (_, i) => ({
        owner_id: ${entityId}, entity_type: 'artwork', record_id: 1, action: 'update', source: 'api:ak_live_padding0',
        field_changes: '{}', created_at: new Date(base + (done + i) * 1000).toISOString(),
      }));
      for (let i = 0; i < rows.length; i += 1000) await db.insertInto('changelog').values(rows.slice(i, i + 1000)).execute();
    }
    // The counts live in one row per entity or in several slots: the padding goes to one of them.
    const [row] = await db.selectFrom('entity_stats').selectAll().where('entity_id', '=', ${entityId}).limit(1).execute();
    const slot = 'slot' in row ? { slot: row.slot } : {};
    let update = db.updateTable('entity_stats').set((eb) => ({ changelog: eb('changelog', '+', ${count}) })).where('entity_id', '=', ${entityId});
    if ('slot' in slot) update = update.where('slot', '=', slot.slot);
    await update.execute();
    await close();
  `);
}

/** Gathers PostgreSQL's planner statistics, as autovacuum does on a live database. */
export function analyze(databaseUrl) {
  runModule(`
    import { connect } from './dist/db/connect.js';
    import { sql } from 'kysely';
    const { db, close } = connect(${JSON.stringify(databaseUrl)});
    await sql\`analyze\`.execute(db);
    await close();
  `);
}

/**
 * The event-loop turns of one phase, in this process: each turn's wall-clock and main-thread CPU ms, from one
 * setImmediate to the next (process.threadCpuUsage: what a turn cost, without the time the shared
 * machine's other processes took from it). Call the answer to stop; it gives the turns.
 */
export function meterTurns() {
  const turns = [];
  let running = true;
  let wall = performance.now();
  let cpu = process.threadCpuUsage();
  const tick = () => {
    const nowWall = performance.now();
    const nowCpu = process.threadCpuUsage();
    turns.push({ wall: nowWall - wall, cpu: (nowCpu.user + nowCpu.system - cpu.user - cpu.system) / 1000 });
    wall = nowWall;
    cpu = nowCpu;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  return () => { running = false; return turns; };
}
