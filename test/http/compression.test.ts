import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';

/** Compression of answers of 1 KiB or more (docs/api.md, Compression), over a real socket. */

let t: TestApp;
let base: string;
let g: Tenant;
beforeAll(async () => {
  t = await startApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  g = await tenant(t, { tier: 'partner' });
  const items = Array.from({ length: 60 }, (_, i) => ({ title: `Composition ${i}`, artist_name: 'Sophie Taeuber-Arp', creation_year: 1920 + (i % 20), medium: 'Gouache on paper' }));
  await client(t, g.key).post('/v1/artworks/batch', { items });
});
afterAll(async () => { await t?.close(); });

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; bytes: Buffer }

function get(path: string, headers: Record<string, string> = {}, body?: unknown): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? 'GET' : 'POST';
    const json = body === undefined ? {} : { 'content-type': 'application/json' };
    request(`${base}${path}`, { method, headers: { authorization: `Bearer ${g.key}`, ...json, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, bytes: Buffer.concat(chunks) }));
    }).on('error', reject).end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const decode = (raw: Raw): Buffer => raw.headers['content-encoding'] === 'br' ? brotliDecompressSync(raw.bytes)
  : raw.headers['content-encoding'] === 'gzip' ? gunzipSync(raw.bytes) : raw.bytes;

describe('an answer of 1 KiB or more', () => {
  test.each([['br', 'br'], ['gzip', 'gzip'], ['gzip;q=1, br;q=0.5', 'gzip'], ['br, gzip', 'br']])(
    'is sent in the coding Accept-Encoding: %s prefers (%s), with Vary, and decodes to the plain answer', async (accept, coding) => {
      const plain = await get('/v1/artworks?limit=60');
      expect(plain.headers['content-encoding']).toBeUndefined();
      expect(plain.bytes.length).toBeGreaterThan(1024);
      // Twice: the first is compressed on its way out, the second comes from the kept compressed copy.
      for (let i = 0; i < 3; i++) {
        const packed = await get('/v1/artworks?limit=60', { 'accept-encoding': accept });
        expect(packed.status).toBe(200);
        expect(packed.headers['content-encoding']).toBe(coding);
        expect(packed.headers.vary).toMatch(/accept-encoding/i);
        expect(packed.headers.etag).toBe(plain.headers.etag);
        expect(packed.bytes.length).toBeLessThan(plain.bytes.length / 3);
        expect(JSON.parse(decode(packed).toString())).toEqual(JSON.parse(plain.bytes.toString()));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    });

  test('a large changelog page, compressed as a stream, decodes whole', async () => {
    const plain = await get('/v1/changelog?limit=1000');
    const packed = await get('/v1/changelog?limit=1000', { 'accept-encoding': 'gzip' });
    expect(plain.bytes.length).toBeGreaterThan(16_384);
    expect(packed.headers['content-encoding']).toBe('gzip');
    expect(decode(packed).equals(plain.bytes)).toBe(true);
  });

  test('a batch of 100 artworks\' answer (over 20 KB) is compressed in one piece: sent with its length, not chunked', async () => {
    const other = await tenant(t, { tier: 'partner' });
    const items = Array.from({ length: 100 }, (_, i) => ({ title: `Study in One Piece ${i}`, artist_name: 'Paula Modersohn-Becker', creation_year: 1900 + (i % 7) }));
    for (const coding of ['gzip', 'br']) {
      const raw = await get('/v1/artworks/batch', { authorization: `Bearer ${other.key}`, 'accept-encoding': coding }, { items });
      expect(raw.status).toBe(200);
      expect(raw.headers['content-encoding']).toBe(coding);
      expect(raw.headers['transfer-encoding']).toBeUndefined();
      expect(Number(raw.headers['content-length'])).toBe(raw.bytes.length);
      const plain = decode(raw);
      expect(plain.length).toBeGreaterThan(20_000);
      expect((JSON.parse(plain.toString()) as { results: unknown[] }).results).toHaveLength(100);
    }
  });

  test('is sent plain to a client without Accept-Encoding or with identity only', async () => {
    const variants: Record<string, string>[] = [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'br;q=0, gzip;q=0' }];
    for (const headers of variants) {
      const raw = await get('/v1/artworks?limit=60', headers);
      expect(raw.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(raw.bytes.toString()).artworks).toHaveLength(60);
    }
  });

  test('public pages and the OpenAPI document are compressed too', async () => {
    for (const path of ['/v1/openapi.json', `/profiles/${g.slug}`]) {
      const raw = await get(path, { 'accept-encoding': 'gzip' });
      expect(raw.status).toBe(200);
      expect(raw.headers['content-encoding']).toBe('gzip');
      expect(gunzipSync(raw.bytes).length).toBeGreaterThan(1024);
    }
  });
});

describe('public answers', () => {
  test('a feed of many events is sent in each coding with its length, from a copy kept per version: the same bytes every time, decoding to the plain feed', async () => {
    const api = client(t, g.key);
    const items = Array.from({ length: 40 }, (_, i) => ({
      title: `Open studio ${i}`, start_date: `2031-0${1 + (i % 9)}-1${i % 10}`, description: `Evening ${i}: ${'drawings and gouaches, '.repeat(40)}`,
    }));
    expect((await api.post('/v1/events/batch', { items })).status).toBe(200);
    const feed = `/profiles/${g.slug}/events.ics`;
    const plain = await get(feed);
    expect(plain.status).toBe(200);
    expect(plain.bytes.length).toBeGreaterThan(30_000);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    for (const coding of ['gzip', 'br']) {
      const sent: Buffer[] = [];
      for (let i = 0; i < 3; i++) {
        const packed = await get(feed, { 'accept-encoding': coding });
        expect(packed.headers['content-encoding']).toBe(coding);
        expect(packed.headers.vary).toMatch(/accept-encoding/i);
        expect(packed.headers.etag).toBe(plain.headers.etag);
        // A kept copy has a known length; a stream compressed on the way out is sent chunked.
        expect(Number(packed.headers['content-length'])).toBe(packed.bytes.length);
        expect(decode(packed).equals(plain.bytes)).toBe(true);
        sent.push(packed.bytes);
      }
      expect(sent[1]!.equals(sent[0]!) && sent[2]!.equals(sent[0]!)).toBe(true);
    }
    // A write makes a new version: a new feed, compressed anew.
    expect((await api.post('/v1/events', { title: 'Late addition', start_date: '2031-12-01' })).status).toBe(201);
    const after = await get(feed, { 'accept-encoding': 'gzip' });
    expect(after.headers.etag).not.toBe(plain.headers.etag);
    expect(decode(after).toString()).toContain('SUMMARY:Late addition');
  });

  test('a small public answer is sent as it is', async () => {
    const raw = await get('/robots.txt', { 'accept-encoding': 'gzip, br' });
    expect(raw.status).toBe(200);
    expect(raw.bytes.length).toBeLessThan(1024);
    expect(raw.headers['content-encoding']).toBeUndefined();
  });
});

describe('what is sent as it is', () => {
  test('an answer under 1 KiB', async () => {
    const raw = await get('/v1/sync/status', { 'accept-encoding': 'gzip, br' });
    expect(raw.bytes.length).toBeLessThan(1024);
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(raw.bytes.toString()).artworks.count).toBe(60);
  });

  test('a 304, with no body', async () => {
    const first = await get('/v1/artworks?limit=60', { 'accept-encoding': 'gzip' });
    const again = await get('/v1/artworks?limit=60', { 'accept-encoding': 'gzip', 'if-none-match': String(first.headers.etag) });
    expect(again.status).toBe(304);
    expect(again.bytes.length).toBe(0);
    expect(again.headers['content-encoding']).toBeUndefined();
  });

  test('an error', async () => {
    const raw = await get('/v1/artworks?limit=1000', { 'accept-encoding': 'gzip' });
    expect(raw.status).toBe(400);
    expect(raw.headers['content-encoding']).toBeUndefined();
  });
});
