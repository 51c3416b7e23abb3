import { execFile } from 'node:child_process';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startApp, tenant, type Tenant, type TestApp } from './helpers.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'art-catalog');

interface Run { code: number; stdout: string; stderr: string }

function push(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(BIN, ['push', ...args], { env: { ...process.env, ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
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
      expect(run.stdout).toContain('1000 rows: created 1000, updated 0, unchanged 0, failed 0');
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

  test('the example CSV imports with its five invalid rows reported as line N: field: problem and exit status 1', async () => {
    const other = await tenant(t);
    const run = await push([join(ROOT, 'examples', 'artworks.csv'), '--kind', 'artworks'], { ART_CATALOG_URL: base, ART_CATALOG_KEY: other.key });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('267 rows: created 259, updated 3, unchanged 0, failed 5');
    expect(run.stdout).toContain('line 25: title: is required');
    expect(run.stdout).toContain('line 64: creation_year: must be integer or null');
    expect(run.stdout).toContain('line 102: price: must be integer or null');
    expect(run.stdout).toContain('line 143: availability: must be one of: available, reserved, sold');
    expect(run.stdout).toContain('line 189: image_url: must be an absolute http or https URL');
    expect(run.stderr).toMatch(/progress 267\/267/);
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
      total: 2, created: 1, updated: 0, unchanged: 0, failed: 1,
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
    writeFileSync(file, artworksCsv(500));
    const run = await push([file, '--kind', 'artworks', '--base-url', base, '--key', g.key]);
    expect(run.stdout).toContain('500 rows: created 500, updated 0, unchanged 0, failed 0');
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/rate limited \(429\): waiting \d+\.\d s as retry_after asks/);
    const count = await t.handle.db.selectFrom('artworks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(500);
  });
});
