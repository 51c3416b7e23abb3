import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createEntity, listEntities } from '../../src/store/entities.js';
import { listKeys } from '../../src/store/keys.js';
import { listUsers } from '../../src/store/users.js';
import { isEmailAddress } from '../../src/domain/text.js';
import { DIALECT, client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { cliOn } from '../support/cli.js';
import { BIN, databaseWithKey, spawnServe } from '../support/serve.js';

/** The smaller edges an attacker's pass found (issue #24) in the CLI and start-up settings, each pinned by the behaviour an operator sees. */

let t: TestApp;
let g: Tenant;
beforeAll(async () => {
  t = await startApp({ PUBLIC_RATE_LIMIT: '100000' });
  g = await tenant(t);
});
afterAll(async () => { await t?.close(); });

/** `bin/art-catalog ARGS` on the test app's database: exit code and both streams. */
// The program in-process (test/support/cli.ts); `serve`, with its own process concerns, starts for real.
const cli = (...args: string[]) => cliOn(t.config.databaseUrl, args);

describe('a whole key given to the CLI', () => {
  test('key revoke accepts the whole key, revokes it by its prefix and prints only the prefix', async () => {
    const victim = await tenant(t);
    expect((await client(t, victim.key).get('/v1/me')).status).toBe(200);
    const result = await cli('key', 'revoke', `${victim.key}\n`);
    expect(result).toEqual({ code: 0, stdout: `revoked ${victim.prefix}\n`, stderr: '' });
    const [row] = await listKeys(t.handle.db, victim.entityId);
    expect(row!.revoked_at).not.toBeNull();
  });

  test('no error path of the CLI echoes a key beyond its prefix', async () => {
    const victim = await tenant(t);
    const secret = victim.key.slice(16);
    const cut = victim.key.slice(0, -1);
    const runs = [
      ['key', 'revoke', cut],
      ['key', 'list', '--entity', victim.key],
      [victim.key],
      ['push', 'file.csv', '--kind', 'artworks', '--key', victim.key, '--base-url', victim.key],
    ];
    const results = await Promise.all(runs.map((args) => cli(...args)));
    runs.forEach((args, i) => {
      const result = results[i]!;
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).not.toBe('');
      expect(`${result.stdout}${result.stderr}`, args.join(' ')).not.toContain(secret.slice(0, 9));
    });
    expect((await client(t, victim.key).get('/v1/me')).status).toBe(200);
    // Revoked already: the second revoke says so, naming the prefix only.
    expect((await cli('key', 'revoke', victim.key)).code).toBe(0);
    const again = await cli('key', 'revoke', victim.key);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`art-catalog: no active key with prefix ${victim.prefix}\n`);
  });
});

describe('PORT=0 and the default PUBLIC_BASE_URL', () => {
  test('serve on PORT=0 names the port it bound in public links, the sitemap, robots.txt and OpenAPI servers', async () => {
    const { database } = await databaseWithKey();
    const env: NodeJS.ProcessEnv = { DATABASE_URL: database.url, PORT: '0', PUBLIC_BASE_URL: '' };
    const server = spawnServe(env);
    try {
      const url = await server.url;
      expect(url).not.toMatch(/:0$/);
      const text = async (path: string) => {
        const r = await fetch(`${url}${path}`);
        expect(r.status, path).toBe(200);
        return r.text();
      };
      expect(await text('/robots.txt')).toContain(`Sitemap: ${url}/sitemap.xml`);
      expect(await text('/sitemap.xml')).toContain(`<loc>${url}/profiles/process-test-gallery/sitemap.xml</loc>`);
      expect(await text('/profiles/process-test-gallery')).toContain(`<link rel="canonical" href="${url}/profiles/process-test-gallery">`);
      expect(JSON.parse(await text('/v1/openapi.json')).servers).toEqual([{ url }]);
    } finally {
      await server.stop();
      await database.drop();
    }
  });

  test('the default base URL puts an IPv6 host in brackets', () => {
    expect(loadConfig({ HOST: '::1', PORT: '8080' }).publicBaseUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ HOST: '127.0.0.1', PORT: '8080' }).publicBaseUrl).toBe('http://127.0.0.1:8080');
  });
});

describe.skipIf(DIALECT !== 'sqlite')('the SQLite database file', () => {
  test('a new database is created 0600 in a folder made 0700, and its WAL gets the same mode', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'art-catalog-edges-'));
    try {
      const path = join(dir, 'data', 'catalog.db');
      const handle = connect(`sqlite:${path}`);
      try {
        await migrateToLatest(handle);
        expect(statSync(join(dir, 'data')).mode & 0o777).toBe(0o700);
        expect(statSync(path).mode & 0o777).toBe(0o600);
        expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
      } finally {
        await handle.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('backup FILE', () => {
  test('refuses a dangling symlink at FILE (nothing lands at its target) and creates FILE 0600', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'art-catalog-edges-'));
    try {
      const target = join(dir, 'where-the-link-points.db');
      const link = join(dir, 'backup-link.db');
      symlinkSync(target, link);
      const refused = await cli('backup', link);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(`art-catalog: ${link} already exists; backup never overwrites a file\n`);
      expect(existsSync(target)).toBe(false);
      expect(lstatSync(link).isSymbolicLink()).toBe(true);

      const file = join(dir, 'backup.db');
      const made = await cli('backup', file, '--json');
      expect(made.stderr).toBe('');
      expect(made.code).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(made.stdout).bytes).toBe(statSync(file).size);
      expect(statSync(file).size).toBeGreaterThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('invisible and direction-changing characters in what the operator types', () => {
  test('entity create and update refuse Unicode format characters (U+202E, U+200B, U+FEFF) with exit 2, storing nothing', async () => {
    const names = async () => (await listEntities(t.handle.db)).map((e) => [e.name, e.location_city]);
    const before = await names();
    const runs = [
      ['entity', 'create', '--type', 'gallery', '--name', 'Gallery \u202Eyrellag'],
      ['entity', 'create', '--type', 'artist', '--name', 'Fine Artist', '--city', 'Ber\u200Blin'],
      ['entity', 'update', String(g.entityId), '--name', '\uFEFFKnown Gallery'],
    ];
    const results = await Promise.all(runs.map((args) => cli(...args)));
    for (const result of results) {
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^art-catalog: --(name|city) must not contain control characters .*format characters.*\\u(202e|200b|feff)/);
      expect(result.stderr).not.toMatch(/[\u202E\u200B\uFEFF]/);
    }
    expect(await names()).toEqual(before);
  });

  test('a console user\'s email with a format or control character is refused by user invite, storing nothing', async () => {
    const results = await Promise.all(['anna\u202E@gallery.example', 'an\u200Bna@gallery.example', 'anna@gal\u001b[2Jlery.example']
      .map((email) => cli('user', 'invite', '--entity', String(g.entityId), '--email', email)));
    for (const result of results) {
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^art-catalog: not an email address: ".*\\u(202e|200b|001b)/);
    }
    expect(await listUsers(t.handle.db, g.entityId)).toEqual([]);
    expect(isEmailAddress('anna@gallery.example')).toBe(true);
    expect(isEmailAddress('anna\uFEFF@gallery.example')).toBe(false);
  });

  test('a name with format characters stored before the rule is listed with them escaped', async () => {
    const old = await createEntity(t.handle.db, { type: 'artist', name: 'Old \u202Eeman\u200B' });
    const result = await cli('entity', 'list');
    expect(result.stdout.split('\n')).toContain(`${old.id}\tartist\t${old.slug}\tOld \\u202eeman\\u200b`);
  });
});

describe('start-up settings that would silently weaken the service', () => {
  test('serve refuses METRICS_TOKEN set but empty (or blank) with one line, exit 1, the token never shown', async () => {
    const results = await Promise.all(['', '  ', 'two words'].map(async (token) => {
      try {
        await promisify(execFile)(BIN, ['serve'], { timeout: 20_000, env: { ...process.env, DATABASE_URL: t.config.databaseUrl, PORT: '0', LOG_LEVEL: 'silent', METRICS_TOKEN: token } });
        return { code: 0, stdout: '', stderr: '' };
      } catch (error) {
        return error as { code: number | null; stdout: string; stderr: string };
      }
    }));
    for (const result of results) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^art-catalog: METRICS_TOKEN is set but empty/);
      expect(result.stderr).not.toContain('two words');
    }
  });

  test('HSTS is sent only when PUBLIC_BASE_URL is https', async () => {
    const secure = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example' });
    try {
      const hsts = async (app: TestApp) => (await app.app.inject({ method: 'GET', url: '/robots.txt' })).headers['strict-transport-security'];
      expect(await hsts(secure)).toMatch(/^max-age=\d+/);
      expect(t.config.publicBaseUrl).toMatch(/^http:/);
      expect(await hsts(t)).toBeUndefined();
    } finally {
      await secure.close();
    }
  });
});
