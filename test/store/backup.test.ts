import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DIALECT, client, freshDatabase, keyFor, startApp, tenant, type FreshDatabase, type Tenant, type TestApp } from '../helpers.js';
import { BIN } from '../support/serve.js';

const run = promisify(execFile);

/** `bin/art-catalog backup FILE --json` on the database of DATABASE_URL. */
async function backupCli(databaseUrl: string, file: string): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(BIN, ['backup', file, '--json'], { env: { ...process.env, DATABASE_URL: databaseUrl } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    return error as { code: number; stdout: string; stderr: string };
  }
}

/**
 * Restores a backup the way docs/deploy.md says: SQLite, the file put in place of the database;
 * PostgreSQL, `pg_restore --no-owner` into a new, empty database.
 */
async function restore(file: string): Promise<FreshDatabase> {
  const target = await freshDatabase();
  if (DIALECT === 'sqlite') copyFileSync(file, target.url.slice('sqlite:'.length));
  else await run('pg_restore', ['--no-owner', `--dbname=${target.url}`, file]);
  return target;
}

/** Everything a tenant can read: every artwork, event and changelog entry, and who the key is. */
async function everything(t: TestApp, key: string) {
  const api = client(t, key);
  const [artworks, events, changes, me] = await Promise.all([
    api.get('/v1/artworks?limit=100'), api.get('/v1/events?limit=100'), api.get('/v1/changelog?limit=1000'), api.get('/v1/me'),
  ]);
  for (const r of [artworks, events, changes, me]) expect(r.status).toBe(200);
  return { artworks: artworks.body.artworks, events: events.body.events, changes: changes.body.changes, entity: me.body.entity, prefix: me.body.key.prefix };
}

let live: TestApp;
let g: Tenant;
let readOnlyKey: string;
let dir: string;
beforeAll(async () => {
  live = await startApp();
  dir = mkdtempSync(join(tmpdir(), 'art-catalog-backup-'));
  g = await tenant(live, { name: 'Backed Up Gallery' });
  ({ key: readOnlyKey } = await keyFor(live, g.entityId, { tier: 'free' }));
  const api = client(live, g.key);
  const items = Array.from({ length: 60 }, (_, i) => ({ title: `Backed Up Work ${i}`, artist_name: 'Backup Artist', creation_year: 1950 + i, external_id: `bk-${i}` }));
  expect((await api.post('/v1/artworks/batch', { items })).status).toBe(200);
  expect((await api.put('/v1/artworks/1', { title: 'Renamed Before Backup', artist_name: 'Backup Artist', creation_year: 1950, external_id: 'bk-0' })).status).toBe(200);
  expect((await api.delete('/v1/artworks/2')).status).toBe(200);
  for (const title of ['Backup Opening', 'Backup Talk']) {
    expect((await api.post('/v1/events', { title, event_type: 'exhibition', start_date: '2030-05-01' })).status).toBe(201);
  }
  expect((await api.put('/v1/profile', { description: 'Restored from a backup.' })).status).toBe(200);
});
afterAll(async () => {
  await live.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a backup of the live database, restored, has every artwork, event and changelog entry, and its keys still authenticate', async () => {
  const before = await everything(live, g.key);
  expect(before.artworks).toHaveLength(59);
  expect(before.changes.length).toBeGreaterThan(60);

  // The server is running while the backup is taken; on SQLite its writes are still in the WAL,
  // which a copy of the .db file alone would miss.
  if (DIALECT === 'sqlite') expect(statSync(`${live.config.databaseUrl.slice('sqlite:'.length)}-wal`).size).toBeGreaterThan(100_000);
  const file = join(dir, DIALECT === 'sqlite' ? 'backup.db' : 'backup.pgdump');
  const result = await backupCli(live.config.databaseUrl, file);
  expect(result.stderr).toBe('');
  expect(JSON.parse(result.stdout)).toEqual({
    dialect: DIALECT, file, bytes: expect.any(Number),
    method: DIALECT === 'sqlite' ? 'sqlite online backup' : 'pg_dump --format=custom',
  });
  // A write after the backup is not in it.
  expect((await client(live, g.key).post('/v1/artworks', { title: 'After The Backup' })).status).toBe(201);

  const restoredDatabase = await restore(file);
  const restored = await startApp({}, restoredDatabase.url);
  try {
    expect(await everything(restored, g.key)).toEqual(before);
    const profile = await client(restored, readOnlyKey).get('/v1/profile');
    expect(profile.body).toMatchObject({ description: 'Restored from a backup.' });
    // The restored database takes writes: its sequences continue after the restored ids.
    const posted = await client(restored, g.key).post('/v1/artworks', { title: 'After The Restore' });
    expect(posted.status).toBe(201);
    expect(posted.body.id).toBeGreaterThan(60);
  } finally {
    await restored.close();
    await restoredDatabase.drop();
  }
});

test('backup never overwrites a file, and says so in one line', async () => {
  const file = join(dir, 'taken');
  copyFileSync(BIN, file);
  const result = await backupCli(live.config.databaseUrl, file);
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toBe(`art-catalog: ${file} already exists; backup never overwrites a file\n`);
});

test.skipIf(DIALECT !== 'sqlite')('backup of a SQLite path with no database fails without creating one', async () => {
  const missing = join(dir, 'nothing-here.db');
  const result = await backupCli(`sqlite:${missing}`, join(dir, 'out.db'));
  expect(result.code).toBe(1);
  expect(result.stderr).toBe(`art-catalog: no SQLite database at ${missing}\n`);
  expect(existsSync(missing)).toBe(false);
});

test.skipIf(DIALECT !== 'postgres')('a failed pg_dump says why in one line and leaves no partial file behind', async () => {
  const missing = new URL(live.config.databaseUrl);
  missing.pathname = '/art_catalog_never_created';
  const file = join(dir, 'failed.pgdump');
  const result = await backupCli(missing.toString(), file);
  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/^art-catalog: pg_dump failed \(exit 1\): .*database "art_catalog_never_created" does not exist\n$/);
  expect(existsSync(file)).toBe(false);
});
