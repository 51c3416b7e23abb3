// PostgreSQL's own limit on this machine, measured in the bench's run (bench/run.mjs calls it when
// --database-url is a postgres:// URL): pgbench runs transactions of the service's shape on a scratch
// database of the service's schema, and the service's rates are printed as fractions of pgbench's.
//
// - write: an artwork insert-or-update, one changelog entry, the entity's counts (the slot of the
//   connection, as the service writes them), one transaction each — what POST /v1/artworks does;
// - re-post: the artwork a POST matches, locked and read, its update, one changelog entry, the counts,
//   one transaction each — what POST /v1/artworks of an existing work does (unchanged but for its
//   sync time, as the bench's re-post sends it);
// - read: one artwork by entity and id — what GET /v1/artworks/:id does.
// Both with 10 clients and prepared statements (-M prepared): PostgreSQL at its best.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(ROOT, 'bin', 'art-catalog');
export const PGBENCH_CLIENTS = 10;
const ARTWORKS = 1000;

// pgbench reads ":name" as a variable: the constants hold no colon.
const WRITE = `
\\set n random(1, 2000000000)
BEGIN;
INSERT INTO artworks (entity_id, title, artist_name, creation_year, medium, price, currency, availability,
  source_fingerprint, fingerprint_version, last_synced_at, created_at, updated_at)
  VALUES (1, 'Bench Study ' || :n, 'Bench Artist', 1990, 'Oil on canvas', :n, 'EUR', 'available',
  'bench-study-' || :n, 2, '2026-01-01T000000.000Z', '2026-01-01T000000.000Z', '2026-01-01T000000.000Z')
  ON CONFLICT (entity_id, source_fingerprint) WHERE external_id IS NULL
  DO UPDATE SET price = excluded.price, updated_at = excluded.updated_at;
INSERT INTO changelog (owner_id, entity_type, record_id, action, source, field_changes, created_at)
  VALUES (1, 'artwork', :n, 'create', 'api-pgbench', '{}', '2026-01-01T000000.000Z');
INSERT INTO entity_stats AS s (entity_id, slot, artworks, available, changelog, artworks_synced_at, version)
  VALUES (1, pg_backend_pid() % 64, 1, 1, 1, '2026-01-01T000000.000Z', 1)
  ON CONFLICT (entity_id, slot) DO UPDATE SET artworks = s.artworks + 1, available = s.available + 1,
  changelog = s.changelog + 1, artworks_synced_at = excluded.artworks_synced_at, version = s.version + 1;
COMMIT;
`;

const REPOST = `
\\set i random(1, ${ARTWORKS})
BEGIN;
SELECT * FROM artworks WHERE entity_id = 1 AND source_fingerprint = 'seed-' || :i AND external_id IS NULL FOR UPDATE;
UPDATE artworks SET last_synced_at = '2026-01-02T000000.000Z', updated_at = '2026-01-02T000000.000Z'
  WHERE entity_id = 1 AND source_fingerprint = 'seed-' || :i AND external_id IS NULL;
INSERT INTO changelog (owner_id, entity_type, record_id, action, source, field_changes, created_at)
  VALUES (1, 'artwork', :i, 'update', 'api-pgbench', '{}', '2026-01-02T000000.000Z');
INSERT INTO entity_stats AS s (entity_id, slot, changelog, artworks_synced_at, version)
  VALUES (1, pg_backend_pid() % 64, 1, '2026-01-02T000000.000Z', 1)
  ON CONFLICT (entity_id, slot) DO UPDATE SET changelog = s.changelog + 1, artworks_synced_at = excluded.artworks_synced_at,
  version = s.version + 1;
COMMIT;
`;

const READ = `
\\set id random(1, ${ARTWORKS})
SELECT * FROM artworks WHERE entity_id = 1 AND id = :id;
`;

function pgbenchPath() {
  try {
    return execFileSync('which', ['pgbench']).toString().trim();
  } catch {
    const root = '/usr/lib/postgresql';
    const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
    const path = version && join(root, version, 'bin', 'pgbench');
    if (path && existsSync(path)) return path;
    throw new Error('pgbench not found: install PostgreSQL\'s client tools');
  }
}

async function admin(url, statement) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(statement);
  } finally {
    await client.end();
  }
}

/** Transactions per second of one pgbench script. */
function pgbench(url, script, duration) {
  const dir = mkdtempSync(join(tmpdir(), 'pgbench-'));
  try {
    const file = join(dir, 'script.sql');
    writeFileSync(file, script);
    const args = ['-n', '-M', 'prepared', '-c', String(PGBENCH_CLIENTS), '-j', '2', '-T', String(duration), '-f', file, url];
    const out = execFileSync(pgbenchPath(), args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
    const tps = /tps = ([\d.]+)/.exec(out);
    if (!tps) throw new Error(`pgbench printed no rate:\n${out}`);
    return Number(tps[1]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** pgbench's write, re-post and read rates on a scratch database next to `databaseUrl`, dropped afterwards. */
export async function pgbenchRates(databaseUrl, { duration }) {
  const scratch = `art_catalog_pgbench_${process.pid}`;
  const url = new URL(databaseUrl);
  url.pathname = `/${scratch}`;
  await admin(databaseUrl, `DROP DATABASE IF EXISTS ${scratch}`);
  await admin(databaseUrl, `CREATE DATABASE ${scratch}`);
  try {
    const env = { ...process.env, DATABASE_URL: url.toString() };
    execFileSync(BIN, ['migrate', '--json'], { env });
    execFileSync(BIN, ['entity', 'create', '--type', 'gallery', '--name', 'pgbench', '--json'], { env });
    await admin(url.toString(), `INSERT INTO artworks (entity_id, title, artist_name, creation_year, source_fingerprint,
        fingerprint_version, last_synced_at, created_at, updated_at)
      SELECT 1, 'Seed ' || i, 'Bench Artist', 1990, 'seed-' || i, 2, '2026-01-01', '2026-01-01', '2026-01-01'
      FROM generate_series(1, ${ARTWORKS}) AS i; ANALYZE`);
    const read = pgbench(url.toString(), READ, duration);
    const write = pgbench(url.toString(), WRITE, duration);
    const repost = pgbench(url.toString(), REPOST, duration);
    return { write_tps: Math.round(write), repost_tps: Math.round(repost), read_tps: Math.round(read), clients: PGBENCH_CLIENTS };
  } finally {
    await admin(databaseUrl, `DROP DATABASE IF EXISTS ${scratch} WITH (FORCE)`);
  }
}

/**
 * The PostgreSQL ratios (docs/performance.md): POST /v1/artworks (new) ÷ pgbench's write rate, its
 * re-post ÷ pgbench's re-post, GET /v1/artworks/:id ÷ pgbench's read rate and ÷ the same service's
 * rate on SQLite in the same run.
 */
/** `reads`: bench/reads.mjs's report, whose GET by id row holds PostgreSQL's rate over SQLite's, measured side by side. */
export function postgresRatios(rates, postgresRun, reads) {
  const rps = (run, scenario) => run?.scenarios.find((s) => s.scenario === scenario)?.rps;
  const post = rps(postgresRun, 'POST /v1/artworks (new)');
  const repost = rps(postgresRun, 'POST /v1/artworks (re-post)');
  const get = rps(postgresRun, 'GET /v1/artworks/:id');
  const ratio = (a, b) => (a && b ? Number((a / b).toFixed(3)) : null);
  return {
    pgbench: rates,
    post_vs_pgbench_write: ratio(post, rates.write_tps),
    repost_vs_pgbench_repost: ratio(repost, rates.repost_tps),
    get_vs_pgbench_read: ratio(get, rates.read_tps),
    get_postgres_vs_sqlite: reads?.rows.find((row) => row.read === 'GET /v1/artworks/:id')?.postgres_to_sqlite ?? null,
    batch_10000_seconds: postgresRun?.batch_10000_seconds,
  };
}

export function printRatios(ratios) {
  console.log(`\npgbench (${ratios.pgbench.clients} clients, prepared): write ${ratios.pgbench.write_tps} tx/s, re-post ${ratios.pgbench.repost_tps} tx/s, read ${ratios.pgbench.read_tps} tx/s`);
  console.log(`  POST /v1/artworks ÷ pgbench write:        ${ratios.post_vs_pgbench_write}   (goal ≥ 0.5)`);
  console.log(`  POST re-post ÷ pgbench re-post:           ${ratios.repost_vs_pgbench_repost}   (goal ≥ 0.5)`);
  console.log(`  GET /v1/artworks/:id ÷ pgbench read:      ${ratios.get_vs_pgbench_read}`);
  console.log(`  GET /v1/artworks/:id PostgreSQL ÷ SQLite: ${ratios.get_postgres_vs_sqlite ?? 'not measured (--skip-reads)'}   (goal ≥ 0.7; the reads table's, bench/reads.mjs)`);
  console.log(`  10,000 artworks via batch on PostgreSQL:  ${ratios.batch_10000_seconds} s   (goal ≤ 2)`);
}
