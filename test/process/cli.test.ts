import { readFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { freshDatabase, type FreshDatabase } from '../helpers.js';
import { cliOn } from '../support/cli.js';
import { spawnServe } from '../support/serve.js';

let database: FreshDatabase;
let databaseUrl: string;
beforeAll(async () => {
  database = await freshDatabase();
  databaseUrl = database.url;
});
afterAll(() => database.drop());

const cli = (...args: string[]) => cliWith({}, ...args);

// The program in-process (test/support/cli.ts); `serve` below, with its signals, is a real process.
const cliWith = (env: NodeJS.ProcessEnv, ...args: string[]) => cliOn(databaseUrl, args, env);

const json = async (...args: string[]) => {
  const result = await cli(...args, '--json');
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
};

describe('admin commands', () => {
  test('migrate applies the schema once and then reports nothing to do', async () => {
    expect(await json('migrate')).toEqual({ applied: ['001_initial', '002_idempotency', '003_entity_stats', '004_artwork_positions', '005_external_id_slug_v2', '006_parallel_writes', '007_images', '008_console_users', '009_text_search', '010_entity_images', '011_jobs', '012_art_data', '013_feeds', '014_webhooks', '015_sign_in_limits', '016_sealed_webhook_secrets', '017_no_plain_secrets', '018_gallery_words', '019_trash_and_runs', '020_one_schedule', '021_mass_deletes', '022_changelog_id_constants'] });
    expect(await json('migrate')).toEqual({ applied: [] });
  });

  test('entity create prints exactly id, type, name and slug, and a second same name gets -2', async () => {
    const first = await json('entity', 'create', '--type', 'gallery', '--name', 'Müller & Söhne', '--city', 'Berlin', '--country', 'de');
    expect(first).toEqual({ id: expect.any(Number), type: 'gallery', name: 'Müller & Söhne', slug: 'muller-sohne' });
    const second = await json('entity', 'create', '--type', 'artist', '--name', 'Muller Sohne');
    expect(second.slug).toBe('muller-sohne-2');
    const list = await json('entity', 'list');
    expect(list.map((e: { slug: string }) => e.slug)).toEqual(['muller-sohne', 'muller-sohne-2']);
    expect(list[0]).toMatchObject({ location_city: 'Berlin', location_country: 'DE', paused: false });
  });

  test('key create prints the key once, key list never shows it, and only its hash is stored', async () => {
    const { id } = await json('entity', 'create', '--type', 'gallery', '--name', 'Key Gallery');
    const created = await json('key', 'create', '--entity', String(id), '--tier', 'free', '--scopes', 'artworks:read,events:read');
    expect(created).toEqual({ key: expect.stringMatching(/^ak_live_[A-Za-z0-9]{32}$/), prefix: created.key.slice(0, 16), tier: 'free', scopes: ['artworks:read', 'events:read'], expires_at: null });
    const listed = await cli('key', 'list', '--entity', String(id), '--json');
    expect(listed.stdout).not.toContain(created.key);
    expect(JSON.parse(listed.stdout)).toEqual([{ prefix: created.prefix, tier: 'free', scopes: ['artworks:read', 'events:read'], expires_at: null, revoked_at: null, created_at: expect.any(String), last_used_at: null }]);

    const handle = connect(databaseUrl);
    const rows = await handle.db.selectFrom('api_keys').selectAll().execute();
    await handle.close();
    expect(JSON.stringify(rows)).not.toContain(created.key);
  });

  test('a default key gets every scope of the subscriber tier and an expiry is normalised to UTC', async () => {
    const { id } = await json('entity', 'create', '--type', 'gallery', '--name', 'Default Gallery');
    const created = await json('key', 'create', '--entity', String(id), '--expires-at', '2030-01-01T12:00:00+02:00');
    expect(created.tier).toBe('subscriber');
    expect(created.scopes).toHaveLength(8);
    expect(created.expires_at).toBe('2030-01-01T10:00:00.000Z');
  });

  test('key revoke marks the key revoked; revoking it again fails', async () => {
    const { id } = await json('entity', 'create', '--type', 'gallery', '--name', 'Revoke Gallery');
    const { prefix } = await json('key', 'create', '--entity', String(id));
    expect(await json('key', 'revoke', prefix)).toEqual({ prefix, revoked: true });
    const [listed] = await json('key', 'list', '--entity', String(id));
    expect(listed.revoked_at).toEqual(expect.any(String));
    const again = await cli('key', 'revoke', prefix);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
  });

  test('entity pause and resume flip the paused flag; update changes name and location but not the slug', async () => {
    const { id, slug } = await json('entity', 'create', '--type', 'artist', '--name', 'Pause Artist');
    expect((await json('entity', 'pause', String(id))).paused).toBe(true);
    expect((await json('entity', 'resume', String(id))).paused).toBe(false);
    const updated = await json('entity', 'update', String(id), '--name', 'Renamed Artist', '--country', 'fr');
    expect(updated).toMatchObject({ id, name: 'Renamed Artist', slug, location_country: 'FR' });
  });

  test('demo seeds a gallery and prints a working subscriber key', async () => {
    const demo = await json('demo');
    expect(demo).toMatchObject({ entity: { type: 'gallery', name: 'Demo Gallery' }, key: expect.stringMatching(/^ak_live_/), artworks: 10, events: 4 });
  });

  test('demo run twice refreshes the one demo gallery, with links on PUBLIC_BASE_URL, --base-url or localhost:PORT', async () => {
    const demo = async (env: NodeJS.ProcessEnv, ...args: string[]) => {
      const result = await cliWith({ PUBLIC_BASE_URL: '', ...env }, 'demo', '--json', ...args);
      expect(result.stderr).toBe('');
      return JSON.parse(result.stdout);
    };
    const first = await demo({ PORT: '4567' });
    expect(first.ical_url).toBe('http://localhost:4567/profiles/demo-gallery/events.ics');
    expect(first.public_url).toBe('http://localhost:4567/profiles/demo-gallery');
    const second = await demo({ PUBLIC_BASE_URL: 'https://catalog.example.org/' });
    expect(second).toMatchObject({ entity: first.entity, refreshed: true, public_url: 'https://catalog.example.org/profiles/demo-gallery' });
    expect(second.key).not.toBe(first.key);
    const third = await demo({ PUBLIC_BASE_URL: 'https://ignored.example' }, '--base-url', 'http://art.test:8080');
    expect(third).toMatchObject({ entity: first.entity, ical_url: 'http://art.test:8080/profiles/demo-gallery/events.ics' });

    const galleries = (await json('entity', 'list')).filter((e: { name: string }) => e.name === 'Demo Gallery');
    expect(galleries.map((e: { slug: string }) => e.slug)).toEqual(['demo-gallery']);
    const handle = connect(databaseUrl);
    try {
      const count = async (table: 'artworks' | 'events') => (await handle.db.selectFrom(table).select('id').where('entity_id', '=', first.entity.id).execute()).length;
      expect([await count('artworks'), await count('events')]).toEqual([10, 4]);
      const stored = await handle.db.selectFrom('entities').select('ical_url').where('id', '=', first.entity.id).executeTakeFirstOrThrow();
      expect(stored.ical_url).toBe(third.ical_url);
    } finally {
      await handle.close();
    }
    const wrong = await cli('demo', '--base-url', 'catalog.example.org');
    expect(wrong).toMatchObject({ code: 1, stdout: '' });
    expect(wrong.stderr).toMatch(/--base-url must be an absolute http\(s\) URL/);
  });

  test.each([
    [['entity', 'create', '--type', 'museum', '--name', 'X'], /--type must be gallery or artist/],
    [['entity', 'create', '--type', 'gallery'], /--name/],
    [['entity', 'create', '--type', 'gallery', '--name', '   '], /must not be empty/],
    [['entity', 'create', '--type', 'gallery', '--name', 'X', '--country', 'ZZ'], /ISO 3166-1/],
    [['key', 'create', '--entity', '1', '--tier', 'gold'], /--tier must be one of/],
    [['key', 'create', '--entity', '1', '--tier', 'free', '--scopes', 'artworks:write'], /not available to the free tier/],
    [['key', 'create', '--entity', '1', '--scopes', 'art:read'], /unknown scope/],
    [['key', 'create', '--entity', '1', '--expires-at', 'tomorrow'], /ISO 8601/],
    [['key', 'create', '--entity', '999999'], /no entity with id 999999/],
    [['key', 'create', '--entity', 'abc'], /positive integer/],
    [['entity', 'pause', '999999'], /not found/i],
    [['nonsense'], /unknown command/],
  ])('%j fails with one line on stderr, nothing on stdout and a non-zero exit', async (args, message) => {
    const result = await cli(...args, '--json');
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});

describe('help', () => {
  // The CLI refuses to start when a command has no example (src/cli/help.ts), so a sample of them,
  // one of each shape (top level, nested, with an argument), shows the examples reach the help.
  const COMMANDS = ['serve', 'entity create', 'key revoke', 'backup'];

  test('--version prints the version of package.json and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect(await cli(flag)).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  test('a command\'s help ends with an example of that command', async () => {
    const helps = await Promise.all(COMMANDS.map((command) => cli(...command.split(' '), '--help')));
    helps.forEach((help, i) => {
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`\\nExample:\\n  \\$ (\\S+=\\S+ )*art-catalog ${COMMANDS[i]}( .*)?\\n$`));
    });
  });

  test('help marks required options as required, and only those', async () => {
    const keyCreate = (await cli('key', 'create', '--help')).stdout;
    expect(keyCreate).toMatch(/--entity <id> +\(required\) entity id/);
    expect(keyCreate).not.toMatch(/--tier.*\(required\)/);
    const entityCreate = (await cli('entity', 'create', '--help')).stdout;
    expect(entityCreate.match(/\(required\)/g)).toHaveLength(2);
    expect((await cli('push', '--help')).stdout).toMatch(/--kind <kind> +\(required\)/);
  });

  test.each([
    [['serv'], 'serve'],
    [['entity', 'creat'], 'create'],
    [['key', 'revok', 'x'], 'revoke'],
    [['demo', '--base-ur', 'http://x'], '--base-url'],
  ])('a mistyped %j suggests %s in one line on stderr and exits non-zero', async (args, suggestion) => {
    const result = await cli(...args);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain(`(Did you mean ${suggestion}?)`);
  });
});


const startServe = () => spawnServe({ DATABASE_URL: databaseUrl });

describe('serve', () => {
  test('serve on PORT=0 prints its URL, answers /healthz, and exits 0 on SIGTERM', async () => {
    const { child, url: listening, exited } = startServe();
    const url = await listening;
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  test('on SIGTERM a request whose body is still arriving is finished and answered before serve exits 0', async () => {
    const handle = connect(databaseUrl);
    await migrateToLatest(handle);
    const entity = await createEntity(handle.db, { type: 'gallery', name: 'Shutdown Gallery' });
    const { key } = await createKey(handle.db, { entityId: entity.id, tier: 'subscriber', scopes: TIER_SCOPES.subscriber, expiresAt: null });
    const { child, url: listening, exited } = startServe();
    const { hostname, port } = new URL(await listening);

    const body = JSON.stringify({ title: 'Posted During Shutdown', creation_year: 2020 });
    const socket = tcpConnect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString(); });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write(`POST /v1/artworks HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`);
    socket.write(body.slice(0, 10));
    // The server has the request line and headers, not the whole body, when the signal comes.
    await new Promise((resolve) => setTimeout(resolve, 150));
    child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 150));
    // write, not end: a client that half-closes before reading makes Node drop the answer.
    socket.write(body.slice(10));
    await closed;

    expect(answer).toMatch(/^HTTP\/1\.1 201 /);
    expect(answer).toContain('"created":true');
    expect(await exited).toBe(0);
    const stored = await handle.db.selectFrom('artworks').select('title').where('entity_id', '=', entity.id).execute();
    await handle.close();
    expect(stored).toEqual([{ title: 'Posted During Shutdown' }]);
  });
});
