import { execFile } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { progressLine } from '../../src/cli/progress.js';
import { cli, type CliRun } from '../support/cli.js';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { hostileXlsx, workbook, zipBomb } from '../support/spreadsheets.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'art-catalog');

type Run = CliRun;

/** `art-catalog push ARGS`, the program run in-process (test/support/cli.ts), with the test's answer cache. */
function push(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return cli(['push', ...args], { ART_CATALOG_CACHE_DIR: join(dir, 'answers'), ...env });
}

/**
 * The same as a real `bin/art-catalog push`, killed after `timeout` ms: for a file that could block a read
 * (a FIFO, /dev/zero), which must not hang the test's own process.
 */
function pushProcess(args: string[], timeout: number): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(BIN, ['push', ...args], { env: { ...process.env, ART_CATALOG_CACHE_DIR: join(dir, 'answers') }, timeout }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** A run that stopped as a whole: exit 2, nothing on stdout, one line on stderr. */
function expectStopped(run: Run, message: RegExp): void {
  expect(run.stdout).toBe('');
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(message);
  expect(run.code).toBe(2);
}

async function listen(t: TestApp): Promise<string> {
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

/** 1,000 distinct artworks as CSV, with a quoted comma and non-Latin names on the way. */
function artworksCsv(count: number): string {
  const lines = ['title,artist_name,creation_year,price,currency,availability'];
  for (let i = 1; i <= count; i++) {
    const artist = ['Gerhard Richter', '草間彌生', 'Käthe Kollwitz', '김환기'][i % 4];
    lines.push(`"Study No. ${i}, variation",${artist},${1950 + (i % 70)},${1000 + i},eur,available`);
  }
  return `${lines.join('\n')}\n`;
}

/** Forwards to the service; every fifth request is answered 500 after the service has answered. */
function faultyProxy(target: string): Promise<{ url: string; server: Server; injected: () => number }> {
  const upstream = new URL(target);
  let count = 0;
  let injected = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const fail = ++count % 5 === 0;
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
        const body: Buffer[] = [];
        up.on('data', (c: Buffer) => body.push(c));
        up.on('end', () => {
          if (fail) {
            injected++;
            res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal_error","message":"injected after commit"}');
          } else {
            res.writeHead(up.statusCode ?? 502, up.headers).end(Buffer.concat(body));
          }
        });
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, injected: () => injected });
  }));
}

let dir: string;
beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'art-catalog-push-')); });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('push', () => {
  let t: TestApp;
  let g: Tenant;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
    g = await tenant(t);
    base = await listen(t);
  });
  afterAll(async () => { await t.close(); });

  test('1,000 artworks through a proxy that fails one request in five after the commit end as exactly 1,000 records with one create entry each', async () => {
    const file = join(dir, 'thousand.csv');
    writeFileSync(file, artworksCsv(1000));
    const proxy = await faultyProxy(base);
    try {
      const run = await push([file, '--kind', 'artworks', '--base-url', proxy.url, '--key', g.key]);
      expect(run.stdout).toContain('1000 rows: created 1000, updated 0, unchanged 0, duplicate 0, failed 0');
      expect(run.code).toBe(0);
      expect(proxy.injected()).toBeGreaterThanOrEqual(2);
      expect(run.stderr).toContain('server error (500): retrying');
    } finally {
      proxy.server.close();
    }
    const db = t.handle.db;
    const artworks = await db.selectFrom('artworks').select(['id', 'source_fingerprint']).where('entity_id', '=', g.entityId).execute();
    expect(artworks).toHaveLength(1000);
    expect(new Set(artworks.map((a) => a.source_fingerprint)).size).toBe(1000);
    const creates = await db.selectFrom('changelog').select('record_id')
      .where('owner_id', '=', g.entityId).where('entity_type', '=', 'artwork').where('action', '=', 'create').execute();
    expect(creates).toHaveLength(1000);
    expect(new Set(creates.map((c) => c.record_id))).toEqual(new Set(artworks.map((a) => a.id)));
    const updates = await db.selectFrom('changelog').select('id')
      .where('owner_id', '=', g.entityId).where('entity_type', '=', 'artwork').where('action', '=', 'update').execute();
    expect(updates).toHaveLength(0);
  });

  test('the example CSV imports with its five invalid rows and three duplicates reported as line N: problem, and a second run changes nothing', async () => {
    const other = await tenant(t);
    const env = { ART_CATALOG_URL: base, ART_CATALOG_KEY: other.key };
    const run = await push([join(ROOT, 'examples', 'artworks.csv'), '--kind', 'artworks'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('267 rows: created 259, updated 0, unchanged 0, duplicate 3, failed 5');
    expect(run.stdout).toContain('line 25: title: is required');
    expect(run.stdout).toContain('line 64: creation_year: "fifties" is not a year (such as 1990, c. 1990 or 1990–92)');
    expect(run.stdout).toContain('line 102: price: "12.5" is not a whole price: prices are whole numbers, never rounded here; write 12 or 13 (column "price")');
    expect(run.stdout).toContain('line 121: same artwork as line 33 (same artist, title and year): not sent');
    expect(run.stdout).toContain('line 143: availability: "missing" is not an availability (available, reserved, sold or not for sale)');
    expect(run.stdout).toContain('line 166: same artwork as line 77 (same artist, title and year): not sent');
    expect(run.stdout).toContain('line 189: image_url: must be an absolute http or https URL');
    expect(run.stdout).toContain('line 201: same artwork as line 74 (same artist, title and year): not sent');
    expect(run.stderr).toMatch(/progress 259\/259/);
    const api = client(t, other.key);
    const before = (await api.get('/v1/changelog?limit=1')).body.total;
    const lastBefore = (await api.get(`/v1/changelog?limit=1&page=${before}`)).body.changes[0].id;
    // The duplicates did not overwrite the first rows: line 33's title is kept.
    const titles = (await api.get('/v1/artworks?limit=100&after=0')).body.artworks.map((a: any) => a.title);
    expect(titles).toContain('Abstract Painting');
    expect(titles).not.toContain('abstract painting!');

    const again = await push([join(ROOT, 'examples', 'artworks.csv'), '--kind', 'artworks'], env);
    expect(again.stdout).toContain('267 rows: created 0, updated 0, unchanged 259, duplicate 3, failed 5\nnothing changed on the server\n');
    // Every accepted write is logged (docs/api.md, Changelog and sync status): 259 entries that change nothing but the sync time.
    expect((await api.get('/v1/changelog?limit=1')).body.total).toBe(before + 259);
    const after = await api.get(`/v1/changelog?limit=1000&after=${lastBefore}`);
    expect(after.body.changes).toHaveLength(259);
    for (const change of after.body.changes) {
      expect(change).toMatchObject({ entity_type: 'artwork', action: 'update' });
      expect(Object.keys(change.field_changes).filter((f) => f !== 'last_synced_at')).toEqual([]);
    }

    const events = await push([join(ROOT, 'examples', 'events.csv'), '--kind', 'events'], env);
    expect(events.stdout).toContain('25 rows: created 23, updated 0, unchanged 0, duplicate 0, failed 2');
    const eventsAgain = await push([join(ROOT, 'examples', 'events.csv'), '--kind', 'events'], env);
    expect(eventsAgain.stdout).toContain('25 rows: created 0, updated 0, unchanged 23, duplicate 0, failed 2\nnothing changed on the server\n');
  });

  test('events from JSON are pushed, and a re-push reports them unchanged', async () => {
    const file = join(dir, 'events.json');
    writeFileSync(file, JSON.stringify([
      { title: 'Spring Show', event_type: 'exhibition', start_date: '2030-04-01', end_date: '2030-05-01' },
      { title: 'Bad Dates', start_date: '2030-04-01', end_date: '2030-03-01' },
    ]));
    const first = await push([file, '--kind', 'events', '--base-url', base, '--key', g.key, '--json']);
    expect(first.code).toBe(1);
    expect(JSON.parse(first.stdout)).toEqual({
      total: 2, created: 1, updated: 0, unchanged: 0, duplicate: 0, failed: 1, deleted: 0,
      failures: [{ label: 'item 2', message: 'end_date: must not be before start_date' }],
    });
    const again = await push([file, '--kind', 'events', '--base-url', base, '--key', g.key, '--json']);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, unchanged: 1, failed: 1 });
  });

  test.each([
    [['--kind', 'paintings'], /--kind must be artworks or events/],
    [['--kind', 'artworks'], /no service URL/],
  ])('push %j fails with one line on stderr', async (args, message) => {
    const run = await push([join(ROOT, 'examples', 'artworks.csv'), ...args], { ART_CATALOG_URL: '', ART_CATALOG_KEY: 'ak_live_x' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });
});

describe('push against a low rate limit', () => {
  let t: TestApp;
  // 2 requests per 4 s: the third batch meets a 429 unless three batches take over 4 s, however slow the machine.
  beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '2', RATE_LIMIT_WINDOW_S: '4' }); });
  afterAll(async () => { await t.close(); });

  test('with 2 requests per 4-second window, push completes every row by waiting retry_after and says so', async () => {
    const g = await tenant(t);
    const base = await listen(t);
    const file = join(dir, 'limited.csv');
    // Three batches of 100: the third waits for the next window (one wait, not the two of five batches).
    writeFileSync(file, artworksCsv(300));
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]);
    expect(run.stdout).toContain('300 rows: created 300, updated 0, unchanged 0, duplicate 0, failed 0');
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/rate limited \(429\): waiting \d+\.\d s as retry_after asks/);
    const count = await t.handle.db.selectFrom('artworks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(300);
  });
});

describe('push refuses at once, in one line, what cannot work', () => {
  let t: TestApp;
  let g: Tenant;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000', RATE_LIMIT_FREE: '100000' });
    g = await tenant(t);
    base = await listen(t);
  });
  afterAll(async () => { await t.close(); });
  const example = join(ROOT, 'examples', 'artworks.csv');

  test('a wrong key stops push with one 401 line naming the URL (exit 2), not one line per row', async () => {
    const run = await push([example, '--kind', 'artworks', '--base-url', base, '--key', `ak_live_${'x'.repeat(32)}`]);
    expectStopped(run, new RegExp(`^art-catalog: ${base} refused the API key \\(401 unauthorized: `));
  });

  test('a key without the write scope stops push with one 403 line naming the missing scope (exit 2)', async () => {
    const reader = await tenant(t, { tier: 'free' });
    const run = await push([example, '--kind', 'artworks', '--base-url', base, '--key', reader.key]);
    expectStopped(run, new RegExp(`^art-catalog: ${base} refused the request \\(403 forbidden: the key ${reader.prefix} lacks the scope artworks:write`));
    expect((await client(t, reader.key).get('/v1/artworks')).body.total).toBe(0);
  });

  test('a stopped server: push exits within 5 seconds with one line naming the URL', async () => {
    const closed = createTcpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const run = await push([example, '--kind', 'artworks', '--base-url', url, '--key', g.key]);
    expectStopped(run, new RegExp(`^art-catalog: cannot connect to ${url}: connection refused \\(is the server running\\?\\)\\n$`));
    expect(run.ms).toBeLessThan(5000);
  });

  test.each([
    ['127.0.0.1:3000', /the service URL "127\.0\.0\.1:3000" must start with http:\/\/ or https:\/\//],
    ['localhost:3000', /the service URL "localhost:3000" must start with http:\/\/ or https:\/\//],
    ['http://no-such-host.invalid', /cannot connect to http:\/\/no-such-host\.invalid: unknown host no-such-host\.invalid/],
  ])('the service URL %s stops push with one line (exit 2)', async (url, message) => {
    expectStopped(await push([example, '--kind', 'artworks', '--base-url', url, '--key', g.key]), message);
  });

  test('a server that fails every batch: one batch is retried with its budget, then push stops in one line instead of retrying every batch', async () => {
    let batchRequests = 0;
    const upstream = new URL(base);
    const proxy = createServer((req, res) => {
      if (req.url?.endsWith('/batch')) {
        batchRequests++;
        req.resume();
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal_error","message":"Internal server error"}');
        return;
      }
      req.pipe(httpRequest({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      }));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    try {
      const run = await push([example, '--kind', 'artworks', '--base-url', url, '--key', g.key]);
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      const lines = run.stderr.trim().split('\n');
      expect(lines.filter((line) => line.startsWith('server error (500): retrying'))).toHaveLength(4);
      expect(lines.at(-1)).toBe(`art-catalog: ${url} answered 500 internal_error: Internal server error`);
      expect(batchRequests).toBe(5);
    } finally {
      proxy.close();
    }
  });

  test.each([
    ['empty.csv', '', /the file is empty/],
    ['blank.csv', '\n \n', /the file is empty/],
    ['header.csv', 'title,artist_name\n', /the file has a header row but no data rows/],
    ['empty.json', '[]', /the file holds no items/],
    ['object.json', '{"title": "x"}', /a JSON file must hold an array of objects/],
  ])('%s is refused (exit 2)', async (name, content, message) => {
    const file = join(dir, name);
    writeFileSync(file, content);
    expectStopped(await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]), message);
  });

  test('the gallery\'s own column names are read and printed before sending; a column no word matches is left out and named; --strict and --no-suggest restore the refusal', async () => {
    const file = join(dir, 'misspelled.csv');
    writeFileSync(file, 'Titel;Artist_Name;Year;prise\nA;B;1990;5\nC;D;1991;6\n');
    const gallery = await tenant(t);
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expect(run.stdout).toBe('2 rows: created 2, updated 0, unchanged 0, duplicate 0, failed 0\n');
    expect(run.stderr).toContain('column "Titel" is read as title\ncolumn "Year" is read as creation_year\n'
      + 'left out: "prise" (map one with --map "COLUMN=FIELD"; --strict refuses the file instead)\n');
    expect(((await client(t, gallery.key).get('/v1/artworks')).body.artworks as any[]).map((a) => [a.title, a.creation_year, a.price])).toEqual([['A', 1990, null], ['C', 1991, null]]);
    expectStopped(await push([file, '--kind', 'artworks', '--strict', '--base-url', base, '--key', g.key]),
      /unknown column "prise" \(did you mean "price"\?\); the artworks fields are title, /);
    const strict = await push([file, '--kind', 'artworks', '--strict', '--no-suggest', '--base-url', base, '--key', g.key]);
    expectStopped(strict, /unknown columns "Titel" \(did you mean "title"\?\), "Year" \(did you mean "creation_year"\?\), "prise" \(did you mean "price"\?\); the artworks fields are title, /);
    expect(strict.stderr).not.toMatch(/line 2/);
  });

  test('tab- and semicolon-separated files with headers in any case import like comma-separated ones', async () => {
    const gallery = await tenant(t);
    const tabs = join(dir, 'tabs.tsv');
    writeFileSync(tabs, 'Title\tArtist Name\tCREATION_YEAR\tPrice\nTab Work, One\tTab Painter\t1990\t100\nTab Work Two\tTab Painter\t1991\t\n');
    const semicolons = join(dir, 'semicolons.csv');
    writeFileSync(semicolons, 'title;artist_name;creation_year;description\nSemi Work;Semi Painter;2001;"Oil; on canvas, signed"\n');
    expect((await push([tabs, '--kind', 'artworks', '--base-url', base, '--key', gallery.key])).stdout).toContain('2 rows: created 2,');
    expect((await push([semicolons, '--kind', 'artworks', '--base-url', base, '--key', gallery.key])).stdout).toContain('1 rows: created 1,');
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.title, a.artist_name, a.creation_year, a.price])).toEqual([
      ['Tab Work, One', 'Tab Painter', 1990, 100], ['Tab Work Two', 'Tab Painter', 1991, null], ['Semi Work', 'Semi Painter', 2001, null],
    ]);
    expect((await client(t, gallery.key).get(`/v1/artworks/${artworks[2].id}`)).body.description).toBe('Oil; on canvas, signed');
  });

  test('invalid UTF-8 is refused naming its line; with --encoding latin1 a Latin-1 semicolon export with editions and several "Untitled" works imports exactly', async () => {
    const gallery = await tenant(t);
    const file = join(dir, 'latin1.csv');
    const text = [
      'title;artist_name;creation_year;external_id;price;currency',
      'Selbstbildnis;Käthe Kollwitz;1934;KK-1934;;',
      'Mutter mit Kind;Käthe Kollwitz;1931;KK-1931-3/50;1200;eur',
      'Mutter mit Kind;Käthe Kollwitz;1931;KK-1931-7/50;1250;eur',
      'Untitled;Günther Förg;1989;GF-89-01;;',
      'Untitled;Günther Förg;1989;GF-89-02;;',
      'Untitled;Günther Förg;1989;GF-89-03;;',
      'Café in Montréal;Françoise Gilot;1950;;;',
    ].join('\r\n');
    writeFileSync(file, Buffer.from(text, 'latin1'));
    const refused = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expectStopped(refused, /cannot push .*latin1\.csv: line 2 is not valid UTF-8 \(byte 0xE4\); .*pass --encoding latin1/);

    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--encoding', 'latin1']);
    expect(run.stdout).toBe('7 rows: created 7, updated 0, unchanged 0, duplicate 0, failed 0\n');
    expect(run.code).toBe(0);
    const api = client(t, gallery.key);
    const { artworks } = (await api.get('/v1/artworks')).body;
    // Ids need not follow the file: on PostgreSQL a batch inserts new records in one statement and
    // editions of an earlier row after it. So the comparison ignores order.
    const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
    expect(sorted(artworks.map((a: any) => [a.title, a.artist_name, a.external_id, a.price, a.currency]))).toEqual(sorted([
      ['Selbstbildnis', 'Käthe Kollwitz', 'KK-1934', null, null],
      ['Mutter mit Kind', 'Käthe Kollwitz', 'KK-1931-3/50', 1200, 'EUR'],
      ['Mutter mit Kind', 'Käthe Kollwitz', 'KK-1931-7/50', 1250, 'EUR'],
      ['Untitled', 'Günther Förg', 'GF-89-01', null, null],
      ['Untitled', 'Günther Förg', 'GF-89-02', null, null],
      ['Untitled', 'Günther Förg', 'GF-89-03', null, null],
      ['Café in Montréal', 'Françoise Gilot', null, null, null],
    ]));
    expect((await api.get('/v1/sync/status')).body.artists.count).toBe(3);
    const again = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--encoding', 'latin1']);
    expect(again.stdout).toBe('7 rows: created 0, updated 0, unchanged 7, duplicate 0, failed 0\nnothing changed on the server\n');
  });

  test('rows of one file that denote the same record are reported and only the first is sent', async () => {
    const gallery = await tenant(t);
    const file = join(dir, 'same-record.json');
    writeFileSync(file, JSON.stringify([
      { title: 'Edition', artist_name: 'Printer', creation_year: 2000, external_id: 'E-1', price: 10 },
      { title: 'Edition', artist_name: 'Printer', creation_year: 2000, external_id: 'E-1', price: 99 },
      { title: 'Edition', artist_name: 'Printer', creation_year: 2000 },
      { title: 'Still Life', creation_year: 1950, price: 1 },
      { title: 'STILL LIFE!', creation_year: 1950, price: 2 },
    ]));
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe([
      '5 rows: created 2, updated 0, unchanged 0, duplicate 3, failed 0',
      '  item 2: same artwork as item 1 (external_id "E-1"): not sent',
      '  item 3: same artist, title and year as item 1, which has an external_id: give this row one too; not sent',
      '  item 5: same artwork as item 4 (same artist, title and year): not sent',
      '',
    ].join('\n'));
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.title, a.price])).toEqual([['Edition', 10], ['Still Life', 1]]);
  });

  test('--dry-run prints what would be created and updated, and writes nothing: the changelog total is unchanged', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const file = join(dir, 'dry.csv');
    const rows = ['title,artist_name,creation_year,price,description', 'Dry One,Dry Painter,2001,100,First', 'Dry Two,Dry Painter,2002,200,Second', 'Dry Three,Dry Painter,2003,300,Third'];
    writeFileSync(file, `${rows.join('\n')}\n`);
    expect((await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key])).code).toBe(0);
    writeFileSync(file, `${[...rows.slice(0, 3), 'Dry Three,Dry Painter,2003,300,Third (revised)', 'Dry Four,Dry Painter,2004,,'].join('\n')}\n`);
    const before = (await api.get('/v1/changelog')).body.total;
    const ids = (await api.get('/v1/artworks')).body.artworks.map((a: any) => a.id);

    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--dry-run']);
    expect(run.stdout).toBe([
      'dry run, nothing written: 4 rows: would create 1, update 1, leave unchanged 2, duplicate 0, failed 0',
      `  line 4: update #${ids[2]} "Dry Three" (description)`,
      '  line 5: create "Dry Four"',
      '',
    ].join('\n'));
    expect(run.code).toBe(0);
    expect((await api.get('/v1/changelog')).body.total).toBe(before);
    expect((await api.get('/v1/artworks')).body.total).toBe(3);
    expect((await api.get(`/v1/artworks/${ids[2]}`)).body.description).toBe('Third');

    const json = JSON.parse((await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--dry-run', '--prune', '--json'])).stdout);
    expect(json).toMatchObject({ dry_run: true, created: 1, updated: 1, unchanged: 2, deleted: 0 });

    expect((await api.get('/v1/changelog')).body.total).toBe(before);
  });

  test('a dry run of an unchanged catalog reads the pages it read last time as 304s, which take no unit; after a write it reads them again', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const file = join(dir, 'dry-again.csv');
    writeFileSync(file, 'title,artist_name,creation_year,price,description\nAgain One,Dry Painter,2001,100,First\nAgain Two,Dry Painter,2002,200,Second\n');
    expect((await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key])).code).toBe(0);
    const ids = (await api.get('/v1/artworks')).body.artworks.map((a: any) => a.id);
    const dry = () => push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--dry-run']);
    const remaining = async () => Number((await api.get('/v1/me')).headers['x-ratelimit-remaining']);
    const first = await dry();
    expect(first.stdout).toContain('leave unchanged 2');
    // Each measurement's own /v1/me takes one unit, the key check of push one, the page and the two
    // records compared (their descriptions are not in the list) one each unless they come as 304s.
    const start = await remaining();
    expect((await dry()).stdout).toBe(first.stdout);
    expect(start - await remaining()).toBe(2);
    await api.put(`/v1/artworks/${ids[0]}`, { price: 99 });
    const changed = await remaining();
    expect((await dry()).stdout).toContain('update 1');
    expect(changed - await remaining()).toBe(5);
  });

  test('--prune on a file with one row fewer deletes exactly that record; more than half is refused without --force', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const file = join(dir, 'prune.csv');
    const rows = ['title,artist_name,creation_year,external_id', 'Kept A,Pruner,2001,', 'Gone B,Pruner,2002,', 'Kept C,Pruner,2003,', 'Untitled,Pruner,2004,P-1', 'Untitled,Pruner,2004,P-2'];
    writeFileSync(file, `${rows.join('\n')}\n`);
    expect((await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key])).code).toBe(0);
    const all = (await api.get('/v1/artworks')).body.artworks;
    const gone = all.find((a: any) => a.title === 'Gone B');

    writeFileSync(file, `${rows.filter((row) => !row.startsWith('Gone B')).join('\n')}\n`);
    const dry = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--prune', '--dry-run']);
    expect(dry.stdout).toContain(`  delete #${gone.id} "Gone B"`);
    expect((await api.get('/v1/artworks')).body.total).toBe(5);
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--prune']);
    expect(run.stdout).toBe('4 rows: created 0, updated 0, unchanged 4, duplicate 0, failed 0, deleted 1\n');
    expect(run.code).toBe(0);
    const left = (await api.get('/v1/artworks')).body.artworks;
    expect(left.map((a: any) => a.id)).toEqual(all.filter((a: any) => a.id !== gone.id).map((a: any) => a.id));
    const deletes = (await api.get('/v1/changelog?limit=1000')).body.changes.filter((c: any) => c.action === 'delete');
    expect(deletes.map((c: any) => [c.entity_type, c.entity_id])).toEqual([['artwork', gone.id]]);

    // One row of four: three deletions, more than half.
    writeFileSync(file, `${rows.slice(0, 2).join('\n')}\n`);
    const before = (await api.get('/v1/changelog')).body.total;
    const refused = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--prune']);
    expectStopped(refused, /--prune would delete 3 of the 4 artworks on the server, more than half; nothing was written/);
    expect((await api.get('/v1/changelog')).body.total).toBe(before);
    const forced = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key, '--prune', '--force']);
    expect(forced.stdout).toContain('deleted 3');
    expect((await api.get('/v1/artworks')).body.artworks.map((a: any) => a.title)).toEqual(['Kept A']);
  });
});

describe('push reads Excel workbooks and mapped columns, and refuses prices written for people', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
    base = await listen(t);
  });
  afterAll(async () => { await t.close(); });

  test('an .xlsx of typed cells imports like its CSV: numbers as integers, date cells as YYYY-MM-DD, formulas as their result', async () => {
    const gallery = await tenant(t);
    const file = join(dir, 'events.xlsx');
    writeFileSync(file, await workbook({
      Events: [
        ['Title', 'Event Type', 'Start Date', 'End Date', 'Location City'],
        ['Summer Show', 'exhibition', new Date(Date.UTC(2099, 5, 1)), new Date(Date.UTC(2099, 7, 31)), 'Berlin'],
        ['Artist Talk', 'talk', new Date(Date.UTC(2099, 6, 4)), null, { richText: [{ text: 'Ham' }, { text: 'burg' }] }],
      ],
    }, { 3: 'dd.mm.yyyy', 4: 'dd.mm.yyyy' }));
    const run = await push([file, '--kind', 'events', '--base-url', base, '--key', gallery.key]);
    expect(run.stdout).toBe('2 rows: created 2, updated 0, unchanged 0, duplicate 0, failed 0\n');
    const { events } = (await client(t, gallery.key).get('/v1/events')).body;
    expect(events.map((e: any) => [e.title, e.event_type, e.start_date, e.end_date, e.location_city])).toEqual([
      ['Summer Show', 'exhibition', '2099-06-01', '2099-08-31', 'Berlin'], ['Artist Talk', 'talk', '2099-07-04', null, 'Hamburg'],
    ]);
  });

  test('an .xlsx saved by LibreOffice Calc imports with its date cells as dates and its columns mapped', async () => {
    const gallery = await tenant(t);
    const file = join(ROOT, 'test', 'fixtures', 'gallery-events.xlsx');
    const run = await push([file, '--kind', 'events', '--map', 'Type=event_type,Opens=start_date,Closes=end_date,City=location_city', '--base-url', base, '--key', gallery.key]);
    expect(run.stdout).toBe('2 rows: created 2, updated 0, unchanged 0, duplicate 0, failed 0\n');
    const { events } = (await client(t, gallery.key).get('/v1/events')).body;
    expect(events.map((e: any) => [e.title, e.event_type, e.start_date, e.end_date, e.location_city])).toEqual([
      ['Nordic Light', 'exhibition', '2099-06-01', '2099-08-31', 'Stockholm'], ['Artist Talk: Mira Lindqvist', 'talk', '2099-06-14', null, 'Stockholm'],
    ]);
  });

  test('--sheet picks a sheet by name, --map names the columns a spreadsheet calls otherwise, and a missing sheet names the sheets there are', async () => {
    const gallery = await tenant(t);
    const file = join(dir, 'inventory.xlsx');
    writeFileSync(file, await workbook({
      Notes: [['nothing to import here']],
      Inventory: [
        ['Inventory No.', 'Titel', 'Artist', 'Year', 'Price', 'Notes'],
        ['INV-7', 'Blue Hour', 'Ana Mendes', 2019, 4500, 'framed'],
        [8, 'Red Hour', 'Ana Mendes', { formula: '2019+1', result: 2020 }, 5200, ''],
      ],
    }));
    const map = 'Inventory No.=external_id,Titel=title,artist=artist_name,Year=creation_year,Notes=';
    const run = await push([file, '--kind', 'artworks', '--sheet', 'Inventory', '--map', map, '--base-url', base, '--key', gallery.key]);
    expect(run.stdout).toBe('2 rows: created 2, updated 0, unchanged 0, duplicate 0, failed 0\n');
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.external_id, a.title, a.artist_name, a.creation_year, a.price])).toEqual([
      ['INV-7', 'Blue Hour', 'Ana Mendes', 2019, 4500], ['8', 'Red Hour', 'Ana Mendes', 2020, 5200],
    ]);

    expectStopped(await push([file, '--kind', 'artworks', '--sheet', 'Stock', '--base-url', base, '--key', gallery.key]),
      /no sheet named "Stock"; its sheets are "Notes", "Inventory"/);
    expectStopped(await push([file, '--kind', 'artworks', '--sheet', 'Inventory', '--strict', '--no-suggest', '--base-url', base, '--key', gallery.key]),
      /unknown columns "Inventory No\." \(did you mean "external_id"\?\), "Titel" \(did you mean "title"\?\), "Artist" \(did you mean "artist_name"\?\), "Year" \(did you mean "creation_year"\?\), "Notes"; .*--map/);
    expectStopped(await push([file, '--kind', 'artworks', '--sheet', 'Inventory', '--map', 'Inventory No.=inventory', '--base-url', base, '--key', gallery.key]),
      /--map names "inventory", which is not a field of artworks/);
    expectStopped(await push([file, '--kind', 'artworks', '--sheet', 'Inventory', '--map', 'Stock No=external_id', '--base-url', base, '--key', gallery.key]),
      /--map names the column "stock no", which the file does not have; its columns are "Inventory No\.", "Titel"/);
  });

  test('prices are read as galleries write them, the currency from the sign or code; a price with cents is refused with the whole forms', async () => {
    const gallery = await tenant(t);
    const file = join(dir, 'prices.csv');
    writeFileSync(file, ['Title;Price', 'Plain;12500', 'Euro;12.500,00 €', 'Dollar;$12,500', 'Swiss;CHF 12\'500.-', 'Cents;"1.250,50 EUR"', 'Decimal;12.5'].join('\n'));
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')).toEqual([
      '6 rows: created 4, updated 0, unchanged 0, duplicate 0, failed 2',
      '  line 6: price: "1.250,50 EUR" is not a whole price: prices are whole numbers, never rounded here; write 1250 or 1251 (column "Price")',
      '  line 7: price: "12.5" is not a whole price: prices are whole numbers, never rounded here; write 12 or 13 (column "Price")',
      '',
    ]);
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.title, a.price, a.currency])).toEqual([['Plain', 12500, null], ['Euro', 12500, 'EUR'], ['Dollar', 12500, 'USD'], ['Swiss', 12500, 'CHF']]);
  });

  test('a price naming no currency takes the profile\'s default currency; without one the row is sent and push says how many lack it', async () => {
    const file = join(dir, 'no-currency.csv');
    writeFileSync(file, ['Titel;Preis', 'A;12.500', 'B;€ 900'].join('\n'));
    const bare = await tenant(t);
    const without = await push([file, '--kind', 'artworks', '--base-url', base, '--key', bare.key]);
    expect(without.stdout).toBe('2 rows: created 2, updated 0, unchanged 0, duplicate 0, failed 0\n');
    expect(without.stderr).toContain('1 row has a price without a currency (sent without one: name it in a currency column, in the price, or as the profile\'s default_currency)');
    const gallery = await tenant(t);
    await client(t, gallery.key).put('/v1/profile', { default_currency: 'GBP' });
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expect(run.stderr).not.toContain('without a currency');
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.title, a.price, a.currency])).toEqual([['A', 12500, 'GBP'], ['B', 900, 'EUR']]);
  });

  test('the profile\'s default currency is read before the cells: with CAD, "$" is the Canadian dollar', async () => {
    const file = join(dir, 'dollars.csv');
    writeFileSync(file, ['Title;Price', 'Lake;$4,800', 'Shore;4800', 'Pine;€ 700'].join('\n'));
    const gallery = await tenant(t);
    await client(t, gallery.key).put('/v1/profile', { default_currency: 'CAD' });
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expect(run.stdout).toBe('3 rows: created 3, updated 0, unchanged 0, duplicate 0, failed 0\n');
    const { artworks } = (await client(t, gallery.key).get('/v1/artworks')).body;
    expect(artworks.map((a: any) => [a.title, a.price, a.currency])).toEqual([['Lake', 4800, 'CAD'], ['Shore', 4800, 'CAD'], ['Pine', 700, 'EUR']]);
  });

  test('a currency or unit in a column\'s name is printed with its suggestion, and applies to its cells', async () => {
    const file = join(dir, 'named-units.csv');
    writeFileSync(file, ['Title;Preis (EUR);Height (in);Width (in)', 'Lake;4.800;20;30'].join('\n'));
    const gallery = await tenant(t);
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', gallery.key]);
    expect(run.stderr).toContain('column "Preis (EUR)" is read as price, currency EUR\ncolumn "Height (in)" is read as height, unit in\n'
      + 'column "Width (in)" is read as width, unit in\n');
    const [listed] = (await client(t, gallery.key).get('/v1/artworks')).body.artworks;
    const artwork = (await client(t, gallery.key).get(`/v1/artworks/${listed.id}`)).body;
    expect([artwork.price, artwork.currency, artwork.height, artwork.width, artwork.dimension_unit]).toEqual([4800, 'EUR', 20, 30, 'in']);
  });
});

describe('push reads only what is bounded', () => {
  let t: TestApp;
  let g: Tenant;
  let base: string;
  beforeAll(async () => {
    t = await startApp();
    g = await tenant(t);
    base = await listen(t);
  });
  afterAll(async () => { await t.close(); });

  // Before, the first read for ever (6 GB after 20 s) and the second hung for ever: a watchdog of 20 s
  // (the machine is shared; the command itself takes well under a second) tells an answer from a hang.
  test('a symlink to /dev/zero is refused in one line, not read (exit 2)', async () => {
    const link = join(dir, 'zero.csv');
    symlinkSync('/dev/zero', link);
    const run = await pushProcess([link, '--kind', 'artworks', '--base-url', base, '--key', g.key], 20_000);
    expectStopped(run, /cannot push .*zero\.csv: not a regular file \(a character device\)/);
  });

  test('a FIFO nobody writes to is refused in one line instead of waiting for a writer (exit 2)', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const run = await pushProcess([fifo, '--kind', 'artworks', '--base-url', base, '--key', g.key], 20_000);
    expectStopped(run, /cannot push .*pipe\.csv: not a regular file \(a FIFO\)/);
  });

  test('a directory and a file over the size limit are refused, naming the limit', async () => {
    expectStopped(await push([dir, '--kind', 'artworks', '--base-url', base, '--key', g.key]), /not a regular file \(a directory\)/);
    const big = join(dir, 'big.csv');
    writeFileSync(big, 'title\n');
    execFileSync('truncate', ['-s', '70M', big]);
    expectStopped(await push([big, '--kind', 'artworks', '--base-url', base, '--key', g.key]), /the file holds 70 MiB, more than the 64 MiB push reads; split it into several files/);
  });

  test('a CSV of one 20 MB line is refused as no CSV of one row per line, not held as a header', async () => {
    const file = join(dir, 'one-line.csv');
    writeFileSync(file, 'a'.repeat(20_000_000));
    expectStopped(await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]),
      /line 1 starts a record of more than 1,048,576 characters: not a CSV file with one row per line/);
  });

  test.each([
    ['declares 51 MiB when inflated', () => zipBomb(51 * 1024 * 1024), /its parts declare more than 50 MiB when inflated/],
    ['inflates a thousand times', () => zipBomb(8 * 1024 * 1024), /the part "xl\/worksheets\/sheet1\.xml" inflates \d+ times/],
    ['inflates past the size it declares', () => zipBomb(8 * 1024 * 1024, 1000), /the part "xl\/worksheets\/sheet1\.xml" inflates to more than the 1000 bytes it declares/],
  ])('a zip bomb .xlsx that %s is refused before it is inflated in memory', async (_, bomb, message) => {
    const file = join(dir, `bomb-${Math.random().toString(36).slice(2)}.xlsx`);
    writeFileSync(file, bomb());
    expectStopped(await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]), message);
  });

  test.each([
    ['whose end record counts one entry fewer than it holds (1 GiB hidden in 1 MB)', 'understated', /^art-catalog: cannot push .*\.xlsx: not a valid xlsx file: its zip directory holds \d+ entries but its end record counts \d+\n$/],
    ['whose sheet is named otherwise in its local header', 'renamed', /^art-catalog: cannot push .*\.xlsx: not a valid xlsx file: the part "xl\/media\/image9\.png" is named "xl\/worksheets\/sheet1\.xml" where its data is\n$/],
    ['with bytes before its first entry', 'prefixed', /^art-catalog: cannot push .*\.xlsx: not a valid xlsx file: bytes come before its first zip entry\n$/],
    ['of 1,000,001 cells written <c\\tr=', 'whitespace', /^art-catalog: cannot push .*\.xlsx: the workbook holds more than 1,000,000 cells, more than one import may read; split it into several files\n$/],
  ] as const)('an .xlsx %s is refused in one line, nothing sent', async (_, shape, message) => {
    const file = join(dir, `${shape}.xlsx`);
    writeFileSync(file, await hostileXlsx(shape, [['title', 'external_id'], ['Hidden Work', 'H-1']]));
    expectStopped(await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]), message);
    expect((await client(t, g.key).get('/v1/artworks?limit=100')).body.artworks.map((a: { title: string }) => a.title)).not.toContain('Hidden Work');
  }, 60_000);

  test('an old binary .xls is refused with what to save it as', async () => {
    const file = join(dir, 'old.xls');
    writeFileSync(file, Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0]));
    expectStopped(await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]), /the old Excel format \(\.xls\): save it as \.xlsx/);
  });
});

describe('the progress line', () => {
  const counts = { created: 12345, updated: 678, unchanged: 90, failed: 1, deleted: 0 };
  test.each([20, 40, 60, 80, 120, 200])('fits a terminal %i columns wide', (width) => {
    const line = progressLine(500, 1000, counts, width);
    expect([...line].length).toBeLessThan(width);
    expect(line.startsWith('push')).toBe(true);
  });
  test('shows the bar and every count when there is room', () => {
    expect(progressLine(500, 1000, counts, 200)).toMatch(/^push \[█{20}░{20}\] 500\/1000 \| created 12345 updated 678 unchanged 90 failed 1$/);
  });
});
