#!/usr/bin/env node
// The reads, writes, feeds and webhook benches of an earlier build and of this checkout, side by side
// in one run (issue #47: "the same numbers as before", since the write path moved). The earlier tree
// is exported from git into a temporary folder (`git archive`), given this checkout's node_modules (a
// link: refused unless package-lock.json is the same in both) and built with `tsc -p tsconfig.build.json`;
// this checkout is built too. Each bench then runs from each tree in turn — base, current, base,
// current… — so that the load of a shared machine falls on both alike, and the table shows the median
// over the rounds of each headline number and the ratio current / base. Each tree runs ITS OWN copy of
// a bench (they import ../dist relative to themselves), as a child process whose output is read: a
// bench the base tree does not have is skipped with a note, and one that fails or times out in one
// tree is reported as failed in the table, not a crash. A run's numbers: (docs/performance.md, Side
// by side with an earlier build).
//
//   node bench/side-by-side.mjs [--base 814a3d3] [--rounds 2] [--only reads,writes,feeds,webhooks]
//                               [--duration 2] [--seconds 15] [--rows 10000] [--postgres-url postgres://…]
//                               [--current-copy feeds]
// --duration: seconds per reads row and per writes scenario; --seconds: webhook write load;
// --rows: the feed's size; --postgres-url: the writes bench also on PostgreSQL (a fresh database each
// run, dropped after); --current-copy NAMES: the base tree runs this checkout's copy of those benches
// (still against its own dist), for a base whose own copy no longer ran against its own code (at
// 814a3d3, bench/feeds.mjs still set a column that build had dropped). A whole default run takes
// about 10 minutes on 2 cores.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ROOT } from './lib.mjs';

const { values: options } = parseArgs({
  options: {
    base: { type: 'string', default: '814a3d3' },
    rounds: { type: 'string', default: '2' },
    only: { type: 'string', default: 'reads,writes,feeds,webhooks' },
    duration: { type: 'string', default: '2' },
    seconds: { type: 'string', default: '15' },
    rows: { type: 'string', default: '10000' },
    'postgres-url': { type: 'string' },
    'keep-base': { type: 'boolean', default: false },
    'current-copy': { type: 'string', default: '' },
  },
});
const ROUNDS = Number(options.rounds);
const COPIED = new Set(options['current-copy'].split(',').map((s) => s.trim()).filter(Boolean));
const ONLY = new Set(options.only.split(',').map((s) => s.trim()));
// A bench that takes longer than this in one tree is stopped and reported as failed.
const TIMEOUT_MS = 8 * 60_000;

const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const round1 = (n) => Math.round(n * 10) / 10;

// ---------- the two trees ----------

function prepareBase(ref) {
  const commit = git('rev-parse', '--verify', `${ref}^{commit}`);
  // The base borrows this checkout's node_modules: only sound when both trees lock the same packages.
  if (git('diff', commit, '--', 'package-lock.json') !== '') {
    console.error(`side-by-side: package-lock.json differs between ${ref} and this checkout; the base tree cannot borrow`
      + ' this node_modules. Pick a base with the same lockfile (git diff <ref> -- package-lock.json is empty).');
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'side-by-side-base-'));
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C '${dir}'`], { cwd: ROOT, stdio: 'inherit' });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { label: 'base', ref: `${ref} (${commit.slice(0, 7)})`, dir };
}

function build(tree) {
  process.stderr.write(`building ${tree.label} (${tree.dir})\n`);
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: tree.dir, stdio: 'inherit' });
}

// ---------- running one bench in one tree ----------

function runChild(tree, args, extraEnv = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: tree.dir, env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.on('close', (code, signal) => { clearTimeout(timer); resolve({ code, signal, stdout, stderr }); });
  });
}

const jsonLines = (text) => text.split('\n').filter((l) => l.startsWith('{')).map((l) => { try { return JSON.parse(l); } catch { return undefined; } }).filter(Boolean);

async function freshPostgres(url) {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const name = `bench_side_${process.pid}_${Date.now()}`;
  await admin.query(`create database ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: async () => { await admin.query(`drop database if exists ${name} with (force)`); await admin.end(); },
  };
}

/** Headline numbers of bench/run.mjs's write scenarios, from the report it writes into its own tree. */
async function writes(tree, databaseUrl) {
  const report = join(tree.dir, 'bench', 'results', 'latest.json');
  rmSync(report, { force: true });
  const args = ['bench/run.mjs', '--skip-reads', '--duration', options.duration, '--artworks', '1000', ...(databaseUrl ? ['--database-url', databaseUrl] : [])];
  const out = await runChild(tree, args);
  if (out.code !== 0 || !existsSync(report)) throw new Error(failure(out));
  const run = JSON.parse(readFileSync(report, 'utf8')).runs[0];
  const by = (name) => run.scenarios.find((s) => s.scenario === name);
  const numbers = {};
  for (const name of ['POST /v1/artworks (new)', 'POST /v1/artworks (re-post)', 'POST /v1/artworks/batch (100)']) {
    const s = by(name);
    if (s.non2xx > 0 || s.errors > 0) throw new Error(`${name}: ${s.non2xx} non-2xx, ${s.errors} errors`);
    numbers[`${name} req/s`] = s.rps;
    numbers[`${name} p99 ms`] = s.p99_ms;
  }
  numbers['POST (new) / bare node:http'] = by('POST /v1/artworks (new)').ratio;
  numbers['10,000 artworks via batch, s'] = run.batch_10000_seconds;
  return numbers;
}

const BENCHES = {
  reads: {
    file: 'bench/reads.mjs',
    what: 'GET by id, list of 50, changelog of 100 on SQLite; ratio = service / bare node:http with the same bytes',
    async run(tree) {
      const out = await runChild(tree, ['bench/reads.mjs', '--duration', options.duration]);
      const report = jsonLines(out.stdout).find((j) => Array.isArray(j.rows));
      if (out.code !== 0 || !report) throw new Error(failure(out));
      const numbers = {};
      for (const [label, row] of [['GET by id', 0], ['list of 50', 1], ['changelog 100', 2]]) {
        numbers[`${label} req/s`] = report.rows[row].service_rps;
        numbers[`${label} / bare`] = report.rows[row].ratio;
        if (report.rows[row].cold_ratio !== undefined) numbers[`${label} cold / bare`] = report.rows[row].cold_ratio;
      }
      return numbers;
    },
  },
  writes: {
    file: 'bench/run.mjs',
    what: 'bench/run.mjs write scenarios, 1,000 artworks, SQLite',
    run: (tree) => writes(tree),
  },
  'writes-postgres': {
    file: 'bench/run.mjs',
    what: 'bench/run.mjs write scenarios, 1,000 artworks, PostgreSQL (a fresh database each run)',
    async run(tree) {
      const database = await freshPostgres(options['postgres-url']);
      try { return await writes(tree, database.url); } finally { await database.drop(); }
    },
  },
  feeds: {
    file: 'bench/feeds.mjs',
    what: `a feed of ${options.rows} rows on SQLite: the first run, then one with 10 changed rows`,
    async run(tree) {
      const out = await runChild(tree, ['bench/feeds.mjs', '--rows', options.rows, '--changed', '10']);
      const first = /first run: .*?, (\d+) ms/.exec(out.stdout);
      const second = /run with \d+ changed rows: applied, .*?, (\d+) ms, (\d+) changelog entries/.exec(out.stdout);
      if (out.code !== 0 || !first || !second) throw new Error(failure(out));
      return { 'first run ms': Number(first[1]), '10-changed run ms': Number(second[1]), '10-changed changelog entries': Number(second[2]) };
    },
  },
  webhooks: {
    file: 'bench/webhooks.mjs',
    what: `webhook deliveries, SQLite, ${options.seconds} s of 100 writes/s`,
    async run(tree) {
      const out = await runChild(tree, ['bench/webhooks.mjs', '--seconds', options.seconds, '--only', 'sqlite']);
      const lines = jsonLines(out.stdout);
      const result = lines.find((j) => j.scenario === 'sqlite');
      if (out.code !== 0 || !result) throw new Error(failure(out));
      if (result.missing_after_30s > 0) throw new Error(`${result.missing_after_30s} messages missing after 30 s`);
      return {
        'write→arrival p50 ms': result.arrival_ms.p50,
        'write→arrival p95 ms': result.arrival_ms.p95,
        '/healthz p99 ms': result.healthz_ms[0].p99,
        'bare /healthz p99 ms (load)': lines[0]?.baseline_healthz_ms?.p99,
      };
    },
  },
};

function failure(out) {
  // The thrown error's own line says why; Node prints it above the stack, far from the output's end.
  const thrown = out.stderr.split('\n').find((l) => /^\w*Error\b|^error:/i.test(l.trim()));
  const tail = thrown ?? `${out.stderr}\n${out.stdout}`.trim().split('\n').slice(-3).join(' | ');
  return `exit ${out.code ?? out.signal}${out.signal === 'SIGKILL' ? ' (timed out)' : ''}: ${tail.trim().slice(0, 300)}`;
}

// ---------- main ----------

const chosen = Object.keys(BENCHES).filter((name) => (name === 'writes-postgres' ? options['postgres-url'] && ONLY.has('writes') : ONLY.has(name)));
const current = { label: 'current', ref: `${git('rev-parse', '--abbrev-ref', 'HEAD')} (${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain', '--', 'src') ? ', uncommitted changes in src' : ''})`, dir: ROOT };
const base = prepareBase(options.base);
const results = {};
const load = [round1(loadavg()[0])];
try {
  build(base);
  build(current);
  for (const name of chosen) {
    const bench = BENCHES[name];
    results[name] = { base: [], current: [], errors: { base: [], current: [] }, notes: [] };
    for (const tree of [base, current]) {
      if (!existsSync(join(tree.dir, bench.file))) results[name].skipped = `${bench.file} does not exist in ${tree.label}: skipped`;
    }
    if (results[name].skipped) { results[name].notes.push(results[name].skipped); continue; }
    if (COPIED.has(name)) {
      copyFileSync(join(ROOT, bench.file), join(base.dir, bench.file));
      results[name].notes.push(`base ran this checkout's copy of ${bench.file} (--current-copy), against the base's dist`);
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const tree of [base, current]) {
        process.stderr.write(`${name}, round ${r + 1}/${ROUNDS}, ${tree.label}…`);
        const started = performance.now();
        try {
          results[name][tree.label].push(await bench.run(tree));
          process.stderr.write(` ${Math.round((performance.now() - started) / 1000)} s\n`);
        } catch (error) {
          results[name].errors[tree.label].push(error.message);
          process.stderr.write(` FAILED: ${error.message}\n`);
        }
        load.push(round1(loadavg()[0]));
      }
    }
  }
} finally {
  if (!options['keep-base']) rmSync(base.dir, { recursive: true, force: true });
}

const median = (values) => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const show = (n) => (n === undefined ? 'failed' : String(Number.isInteger(n) ? n : Number(n.toFixed(n < 10 ? 3 : 1))));
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

console.log(`\nbase ${base.ref} vs current ${current.ref}; median of ${ROUNDS} round(s), alternating base/current;`
  + ` 1-min load average ${load.join(' → ')}`);
const header = `${pad('bench / number', 46)}${lpad('base', 11)}${lpad('current', 11)}${lpad('cur/base', 10)}`;
console.log(header);
console.log('-'.repeat(header.length));
for (const name of chosen) {
  const result = results[name];
  console.log(`${name}: ${BENCHES[name].what}`);
  for (const note of result.notes) console.log(`  ${note}`);
  const keys = [...new Set([...result.base, ...result.current].flatMap((numbers) => Object.keys(numbers)))];
  for (const key of keys) {
    const b = median(result.base.map((numbers) => numbers[key]));
    const c = median(result.current.map((numbers) => numbers[key]));
    const ratio = b !== undefined && c !== undefined && b !== 0 ? (c / b).toFixed(2) : '';
    console.log(`${pad(`  ${key}`, 46)}${lpad(show(b), 11)}${lpad(show(c), 11)}${lpad(ratio, 10)}`);
  }
  for (const label of ['base', 'current']) {
    for (const message of result.errors[label]) console.log(`  FAILED in ${label}: ${message}`);
  }
}
