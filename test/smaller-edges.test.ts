import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../src/config.js';
import { MemoryRateLimiter } from '../src/coordination/rate-limiter.js';
import { createEntity, listEntities, setPaused } from '../src/store/entities.js';
import { listKeys } from '../src/store/keys.js';
import { listUsers } from '../src/store/users.js';
import { isEmailAddress } from '../src/domain/text.js';
import { DIALECT, client, startApp, tenant, type Tenant, type TestApp } from './helpers.js';
import { connect } from '../src/db/connect.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { BIN, databaseWithKey, runCli, spawnServe } from './support/serve.js';

/** The smaller edges an attacker's pass found (issue #24), each pinned by the behaviour a client sees. */

let t: TestApp;
let g: Tenant;
let eventSlug: string;
let artworkId: number;
beforeAll(async () => {
  t = await startApp({ PUBLIC_RATE_LIMIT: '100000' });
  g = await tenant(t);
  const api = client(t, g.key);
  const artwork = await api.post('/v1/artworks', { title: 'Known Work' });
  const event = await api.post('/v1/events', { title: 'Known Show', start_date: '2027-05-01' });
  expect([artwork.status, event.status]).toEqual([201, 201]);
  artworkId = artwork.body.id;
  eventSlug = event.body.slug;
});
afterAll(async () => { await t?.close(); });

const visit = async (url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') => {
  const r = await t.app.inject({ method, url, headers });
  return { status: r.statusCode, body: r.body, headers: r.headers };
};

describe('If-None-Match: * on public routes', () => {
  test('`*` on a page, event, feed or sitemap part that does not exist answers 404 with no ETag, never 304', async () => {
    const paused = await tenant(t);
    await setPaused(t.handle.db, paused.entityId, true);
    for (const url of [
      `/profiles/${g.slug}/events/no-such-show`,
      `/profiles/${g.slug}/events/no-such-show/event.ics`,
      `/profiles/${g.slug}/artworks/999999`,
      `/profiles/${g.slug}/artworks/not-an-id`,
      `/profiles/${g.slug}/sitemap.xml?part=9`,
      `/profiles/${g.slug}?page=9`,
      `/profiles/${paused.slug}`,
      `/profiles/${paused.slug}/events.ics`,
      '/profiles/nobody-by-this-name',
      '/profiles/nobody-by-this-name/events.ics',
    ]) {
      for (const method of ['GET', 'HEAD'] as const) {
        const r = await visit(url, { 'if-none-match': '*' }, method);
        expect(r.status, `${method} ${url}`).toBe(404);
        expect(r.headers.etag, `${method} ${url}`).toBeUndefined();
      }
    }
  });

  test('`*` on a page that exists answers 304 with its ETag', async () => {
    for (const url of [
      `/profiles/${g.slug}`,
      `/profiles/${g.slug}/events.ics`,
      `/profiles/${g.slug}/events/${eventSlug}`,
      `/profiles/${g.slug}/events/${eventSlug}/event.ics`,
      `/profiles/${g.slug}/artworks/${artworkId}`,
      `/profiles/${g.slug}/sitemap.xml`,
      '/sitemap.xml',
      '/robots.txt',
    ]) {
      const r = await visit(url, { 'if-none-match': '"other", *' });
      expect(r.status, url).toBe(304);
      expect(r.headers.etag, url).toBe((await visit(url)).headers.etag);
    }
  });
});

/** `bin/art-catalog ARGS` on the test app's database: exit code and both streams. */
const cli = (...args: string[]) => runCli(t.config.databaseUrl, args);

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

/** A request over real HTTP to the test app (listening on a free port), headers as a raw list so names may repeat. */
async function overHttp(method: string, path: string, headers: string[], body?: string, to: TestApp = t): Promise<{ status: number; body: any }> {
  if (!to.app.server.listening) await to.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = to.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    // A raw list replaces every header Node would add, Host and Content-Length included.
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: ['Host', `127.0.0.1:${port}`, ...headers, ...(body === undefined ? [] : ['Content-Length', String(Buffer.byteLength(body))])] }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk; }).on('end', () => {
        let parsed: unknown = text;
        try { parsed = JSON.parse(text); } catch { /* not JSON */ }
        resolve({ status: res.statusCode!, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('headers that may be sent once', () => {
  test('two Authorization headers get 400 naming the header, whichever of them is valid', async () => {
    for (const pair of [[g.key, 'ak_live_' + 'x'.repeat(32)], ['ak_live_' + 'x'.repeat(32), g.key], [g.key, g.key]]) {
      const r = await overHttp('GET', '/v1/me', ['Authorization', `Bearer ${pair[0]}`, 'authorization', `Bearer ${pair[1]}`]);
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ error: 'bad_request', details: [{ field: 'Authorization' }] });
    }
    expect((await overHttp('GET', '/v1/me', ['Authorization', `Bearer ${g.key}`])).status).toBe(200);
  });

  test('two Idempotency-Key headers get 400 and nothing is written; one is kept as sent', async () => {
    const json = ['Authorization', `Bearer ${g.key}`, 'Content-Type', 'application/json'];
    const body = JSON.stringify({ title: 'Twice Keyed' });
    const r = await overHttp('POST', '/v1/artworks', [...json, 'Idempotency-Key', 'a', 'Idempotency-Key', 'b'], body);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', details: [{ field: 'Idempotency-Key' }] });
    const list = await client(t, g.key).get('/v1/artworks?limit=100');
    expect(list.body.artworks.map((a: { title: string }) => a.title)).not.toContain('Twice Keyed');
    const once = await overHttp('POST', '/v1/artworks', [...json, 'Idempotency-Key', 'a, b'], body);
    expect(once.status).toBe(201);
    const replay = await overHttp('POST', '/v1/artworks', [...json, 'Idempotency-Key', 'a, b'], body);
    expect(replay.body.id).toBe(once.body.id);
  });
});

describe('headers no request may repeat', () => {
  test('two Host or two Content-Type headers get 400 naming the header, on the API and on public pages', async () => {
    const json = ['Content-Type', 'application/json'];
    const cases: [string, string, string[], string?][] = [
      ['GET', '/robots.txt', ['Host', 'evil.example']],
      ['GET', '/v1/me', ['Authorization', `Bearer ${g.key}`, 'Host', 'evil.example']],
      ['POST', '/v1/artworks', ['Authorization', `Bearer ${g.key}`, ...json, 'Content-Type', 'text/plain'], '{"title":"Two Types"}'],
    ];
    for (const [method, path, headers, body] of cases) {
      const r = await overHttp(method, path, headers, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body, `${method} ${path}`).toMatchObject({ error: 'bad_request', details: [{ field: headers.includes('Host') ? 'Host' : 'Content-Type' }] });
    }
    const list = await client(t, g.key).get('/v1/artworks?limit=100');
    expect(list.body.artworks.map((a: { title: string }) => a.title)).not.toContain('Two Types');
  });

  test('two Authorization headers on /metrics behind METRICS_TOKEN get 400, even when the first is right', async () => {
    const guarded = await startApp({ METRICS_TOKEN: 'right-token' });
    try {
      const r = await overHttp('GET', '/metrics', ['Authorization', 'Bearer right-token', 'Authorization', 'Bearer wrong'], undefined, guarded);
      expect(r.status).toBe(400);
      expect((await overHttp('GET', '/metrics', ['Authorization', 'Bearer right-token'], undefined, guarded)).status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});

describe('requests that take no body', () => {
  const auth = () => ['Authorization', `Bearer ${g.key}`];
  const newArtwork = async (title: string) => (await client(t, g.key).post('/v1/artworks', { title })).body.id as number;
  const exists = async (id: number) => (await client(t, g.key).get(`/v1/artworks/${id}`)).status === 200;

  test('DELETE with Content-Type: application/json (or any other) and an empty body deletes', async () => {
    for (const headers of [
      ['Content-Type', 'application/json'],
      ['Content-Type', 'application/json; charset=utf-8', 'Content-Length', '0'],
      ['Content-Type', 'text/plain'],
    ]) {
      const id = await newArtwork('Deleted Quietly');
      const r = await overHttp('DELETE', `/v1/artworks/${id}`, [...auth(), ...headers]);
      expect(r.status, headers.join(' ')).toBe(200);
      expect(await exists(id)).toBe(false);
    }
  });

  test('DELETE with an empty JSON object deletes; a field in it is named in a 400 and nothing is deleted', async () => {
    const json = [...auth(), 'Content-Type', 'application/json'];
    const first = await newArtwork('Deleted With Braces');
    expect((await overHttp('DELETE', `/v1/artworks/${first}`, json, '{}')).status).toBe(200);
    const second = await newArtwork('Kept By A Field');
    const r = await overHttp('DELETE', `/v1/artworks/${second}`, json, '{"force": true}');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'bad_request', details: [{ field: 'force' }] });
    for (const body of ['[]', 'null', '{"a":']) expect((await overHttp('DELETE', `/v1/artworks/${second}`, json, body)).status, body).toBe(400);
    expect((await overHttp('DELETE', `/v1/artworks/${second}`, [...auth(), 'Content-Type', 'text/plain'], 'x')).status).toBe(415);
    expect(await exists(second)).toBe(true);
  });

  test('a DELETE replayed by its Idempotency-Key is the same request with or without Content-Type', async () => {
    const id = await newArtwork('Deleted Once');
    const key = ['Idempotency-Key', `delete-${id}`];
    const first = await overHttp('DELETE', `/v1/artworks/${id}`, [...auth(), ...key, 'Content-Type', 'application/json']);
    const again = await overHttp('DELETE', `/v1/artworks/${id}`, [...auth(), ...key]);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(again.body).toEqual(first.body);
  });

  test('a write that takes a body still refuses an empty one', async () => {
    const r = await overHttp('POST', '/v1/artworks', [...auth(), 'Content-Type', 'application/json']);
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/body is empty/);
  });
});

describe('the client address behind TRUST_PROXY=true, and the limiter\'s memory', () => {
  test('a forwarded value that is not an IP address is not a client: 25 rotating ones share the peer\'s limit of 20', async () => {
    const proxied = await startApp({ TRUST_PROXY: 'true', PUBLIC_RATE_LIMIT: '20' });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        const forwarded = i % 2 ? `garbage-${i}` : `${'a'.repeat(8000)}${i}`;
        statuses.push((await overHttp('GET', '/robots.txt', ['X-Forwarded-For', forwarded], undefined, proxied)).status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(20);
      expect(statuses.slice(20)).toEqual([429, 429, 429, 429, 429]);
      // A real address forwarded is its own client; spelled another way it is the same one.
      expect((await overHttp('GET', '/robots.txt', ['X-Forwarded-For', '2001:DB8::7'], undefined, proxied)).status).toBe(200);
      for (let i = 0; i < 19; i++) await overHttp('GET', '/robots.txt', ['X-Forwarded-For', '2001:db8:0:0:0:0:0:7'], undefined, proxied);
      expect((await overHttp('GET', '/robots.txt', ['X-Forwarded-For', '2001:db8::7%eth0'], undefined, proxied)).status).toBe(429);
    } finally {
      await proxied.close();
    }
  });

  test('an IPv6 client counts as its /64: addresses rotated inside it share one limit, another /64 is another client', async () => {
    const proxied = await startApp({ TRUST_PROXY: 'true', PUBLIC_RATE_LIMIT: '20' });
    try {
      const from = async (address: string) => (await overHttp('GET', '/robots.txt', ['X-Forwarded-For', address], undefined, proxied)).status;
      const statuses: number[] = [];
      for (let i = 1; i <= 22; i++) statuses.push(await from(`2001:db8:7:42:${i.toString(16)}:${(i * 977).toString(16)}::${i}`));
      expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
      expect(statuses.slice(20)).toEqual([429, 429]);
      expect(await from('2001:db8:7:43::1')).toBe(200);
      // An IPv4 client, and the same one as a dual-stack socket spells it, share one limit.
      for (let i = 0; i < 10; i++) await from('198.51.100.7');
      for (let i = 0; i < 10; i++) await from('::ffff:198.51.100.7');
      expect(await from('198.51.100.7')).toBe(429);
      expect(await from('198.51.100.8')).toBe(200);
    } finally {
      await proxied.close();
    }
  });

  test('the in-memory limiter holds at most its size, and a client that keeps sending keeps its counter', () => {
    const limiter = new MemoryRateLimiter(100);
    for (let i = 0; i < 5; i++) limiter.hit('ip:198.51.100.1', 3, 60_000);
    for (let i = 0; i < 1000; i++) {
      limiter.hit(`ip:10.0.${i >> 8}.${i & 255}`, 3, 60_000);
      // The refused client keeps trying while the table churns: it stays refused.
      if (i % 50 === 0) expect(limiter.hit('ip:198.51.100.1', 3, 60_000).allowed).toBe(false);
    }
    expect(limiter.size).toBe(100);
    // One that went quiet while 100 others came is forgotten: the price of a bounded table.
    expect(limiter.hit('ip:10.0.0.0', 3, 60_000).remaining).toBe(2);
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
