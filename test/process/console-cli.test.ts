import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import { sha256 } from '../../src/domain/passwords.js';
import { findInvite } from '../../src/store/users.js';
import { freshDatabase, type FreshDatabase } from '../helpers.js';
import { cliOn } from '../support/cli.js';

describe('console admin commands', { timeout: 180_000 }, () => {
  let database: FreshDatabase;
  let handle: DatabaseHandle;
  const cli = (...args: string[]) => cliOn(database.url, args, { PUBLIC_BASE_URL: 'https://catalog.example' });
  const json = async (...args: string[]) => {
    const result = await cli(...args, '--json');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return JSON.parse(result.stdout);
  };

  beforeAll(async () => {
    database = await freshDatabase();
    handle = connect(database.url);
  });
  afterAll(async () => {
    await handle.close();
    await database.drop();
  });

  test('user invite prints a one-time link on PUBLIC_BASE_URL valid 72 hours; again, a new link replaces it; list and remove', async () => {
    const gallery = await json('entity', 'create', '--type', 'gallery', '--name', 'Galerie CLI');
    const invited = await json('user', 'invite', '--entity', String(gallery.id), '--email', 'Anna@Gallery.example', '--role', 'owner');
    expect(invited).toEqual({ email: 'anna@gallery.example', role: 'owner', link: expect.stringMatching(/^https:\/\/catalog\.example\/console\/invite\/[\w-]{43}$/), expires_at: expect.any(String) });
    expect(Date.parse(invited.expires_at) - Date.now()).toBeGreaterThan(71.9 * 3_600_000);
    const token = invited.link.split('/').at(-1);
    expect(await findInvite(handle.db, sha256(token))).toMatchObject({ email: 'anna@gallery.example' });
    const again = await json('user', 'invite', '--entity', String(gallery.id), '--email', 'anna@gallery.example');
    expect(again.role).toBe('owner');
    expect(await findInvite(handle.db, sha256(token))).toBeUndefined();
    expect(await findInvite(handle.db, sha256(again.link.split('/').at(-1)))).toBeDefined();
    const users = await json('user', 'list', '--entity', String(gallery.id));
    expect(users).toEqual([{ email: 'anna@gallery.example', role: 'owner', active: false, invite_expires_at: again.expires_at, created_at: expect.any(String) }]);
    const other = await json('entity', 'create', '--type', 'artist', '--name', 'Artist CLI');
    const taken = await cli('user', 'invite', '--entity', String(other.id), '--email', 'anna@gallery.example');
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/already belongs to entity \d+; one email belongs to one entity\n$/);
    expect((await cli('user', 'invite', '--entity', String(gallery.id), '--email', 'x@y.example', '--role', 'admin')).stderr).toContain('--role must be one of owner, editor, viewer');
    expect(await json('user', 'remove', 'ANNA@gallery.example')).toEqual({ email: 'anna@gallery.example', removed: true });
    expect(await json('user', 'list', '--entity', String(gallery.id))).toEqual([]);
    // Without PUBLIC_BASE_URL the link is built from this shell's PORT and HOST, which may not be the server's: it says so.
    const unset = await cliOn(database.url, ['user', 'invite', '--entity', String(gallery.id), '--email', 'ben@gallery.example'], { PORT: '4610' });
    expect(unset.code).toBe(0);
    expect(unset.stdout).toMatch(/^http:\/\/127\.0\.0\.1:4610\/console\/invite\//);
    expect(unset.stderr).toBe('the link points to http://127.0.0.1:4610, built from PORT and HOST because PUBLIC_BASE_URL is unset here; '
      + 'if the server answers elsewhere (another PORT, a domain), set PUBLIC_BASE_URL to its address and invite again\n');
    const missing = await cli('user', 'remove', 'anna@gallery.example');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
  });

  test('key roll issues a key with the same tier and scopes and lets the old one expire after the chosen time', async () => {
    const gallery = await json('entity', 'create', '--type', 'gallery', '--name', 'Galerie Roll');
    const old = await json('key', 'create', '--entity', String(gallery.id), '--tier', 'free', '--scopes', 'artworks:read');
    const rolled = await json('key', 'roll', old.prefix, '--expire-old-in', '1h');
    expect(rolled).toMatchObject({ key: expect.stringMatching(/^ak_live_\w{32}$/), tier: 'free', scopes: ['artworks:read'], expires_at: null, old: { prefix: old.prefix } });
    expect(Math.abs(Date.parse(rolled.old.expires_at) - Date.now() - 3_600_000)).toBeLessThan(60_000);
    const byDefault = await json('key', 'roll', rolled.prefix);
    expect(Math.abs(Date.parse(byDefault.old.expires_at) - Date.now() - 86_400_000)).toBeLessThan(60_000);
    const now = await json('key', 'roll', byDefault.prefix, '--expire-old-in', 'now');
    expect(Date.parse(now.old.expires_at)).toBeLessThanOrEqual(Date.now());
    // An expired key cannot be rolled again.
    const again = await cli('key', 'roll', byDefault.prefix);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`art-catalog: no active key with prefix ${byDefault.prefix}\n`);
    expect((await cli('key', 'roll', now.prefix, '--expire-old-in', '2d')).stderr).toContain('--expire-old-in must be one of 1h, 24h, 7d, now');
    const keys = await json('key', 'list', '--entity', String(gallery.id));
    expect(keys).toHaveLength(4);
  });

  test('entity update --plan sets the highest tier the console may create (default subscriber)', async () => {
    const gallery = await json('entity', 'create', '--type', 'gallery', '--name', 'Galerie Plan');
    expect((await json('entity', 'list')).find((e: any) => e.id === gallery.id).plan).toBe('subscriber');
    expect((await json('entity', 'update', String(gallery.id), '--plan', 'partner')).plan).toBe('partner');
    const bad = await cli('entity', 'update', String(gallery.id), '--plan', 'gold');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--plan must be one of free, subscriber, partner');
  });
});
