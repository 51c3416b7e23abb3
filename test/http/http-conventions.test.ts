import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';

/** HTTP conventions that tools rely on: 405 with Allow, the Bearer challenge, a request id per answer. */

let t: TestApp;
let g: Tenant;
beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
  g = await tenant(t);
});
afterAll(async () => { await t.close(); });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('a known path with a method it does not have', () => {
  test.each([
    ['PATCH', '/v1/artworks', 'GET, HEAD, POST'],
    ['DELETE', '/v1/artworks', 'GET, HEAD, POST'],
    ['POST', '/v1/artworks/7', 'GET, HEAD, PUT, DELETE'],
    ['PUT', '/v1/me', 'GET, HEAD'],
    ['DELETE', '/v1/profile', 'GET, HEAD, PUT'],
    ['POST', '/v1/changelog?after=3', 'GET, HEAD'],
    ['PUT', '/healthz', 'GET, HEAD'],
    ['POST', '/profiles/some-gallery', 'GET, HEAD'],
  ])('%s %s answers 405 method_not_allowed with Allow: %s', async (method, url, allow) => {
    const r = await t.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${g.key}` } });
    expect(r.statusCode).toBe(405);
    expect(r.headers.allow).toBe(allow);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = JSON.parse(r.body);
    expect(body.error).toBe('method_not_allowed');
    expect(body.message).toContain(allow);
  });

  test('the answer is the same without a key, and with a body the API would refuse (415)', async () => {
    const keyless = await t.app.inject({ method: 'PATCH', url: '/v1/artworks/1' });
    expect(keyless.statusCode).toBe(405);
    expect(keyless.headers.allow).toBe('GET, HEAD, PUT, DELETE');
    const withBody = await t.app.inject({ method: 'PATCH', url: '/v1/artworks/1', headers: { 'content-type': 'text/csv' }, payload: 'a,b' });
    expect(withBody.statusCode).toBe(405);
    expect(withBody.headers.allow).toBe('GET, HEAD, PUT, DELETE');
  });

  test('an unknown path stays 404 not_found without Allow, whatever the method', async () => {
    for (const method of ['GET', 'POST', 'PATCH'] as const) {
      const r = await t.app.inject({ method, url: '/v1/nothing-here', headers: { authorization: `Bearer ${g.key}` } });
      expect(r.statusCode, method).toBe(404);
      expect(JSON.parse(r.body).error).toBe('not_found');
      expect(r.headers.allow).toBeUndefined();
    }
    const patch = await t.app.inject({ method: 'PATCH', url: '/v1/artworks/1/extra' });
    expect(patch.statusCode).toBe(404);
  });

  test('an allowed method still reaches its route (405 is only for the methods a path lacks)', async () => {
    const r = await client(t, g.key).get('/v1/artworks');
    expect(r.status).toBe(200);
    expect(r.headers.allow).toBeUndefined();
  });
});

describe('WWW-Authenticate (RFC 6750)', () => {
  test('a request without a key gets the Bearer challenge with the realm and no error code', async () => {
    const r = await client(t).get('/v1/artworks');
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="art-catalog"');
  });

  test('a request with another scheme is treated as sending no bearer key', async () => {
    const r = await client(t).get('/v1/me', { authorization: 'Basic dXNlcjpwYXNz' });
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="art-catalog"');
  });

  test('a malformed, unknown or revoked key gets error="invalid_token"', async () => {
    for (const key of ['ak_live_short', `ak_live_${'Q'.repeat(32)}`]) {
      const r = await client(t, key).get('/v1/artworks');
      expect(r.status, key).toBe(401);
      expect(r.headers['www-authenticate'], key).toBe('Bearer realm="art-catalog", error="invalid_token"');
      expect(r.body.error).toBe('unauthorized');
    }
  });

  test('a key without the scope gets 403 with error="insufficient_scope" naming the scope', async () => {
    const reader = await tenant(t, { tier: 'free' });
    const r = await client(t, reader.key).post('/v1/artworks', { title: 'Not Allowed' });
    expect(r.status).toBe(403);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="art-catalog", error="insufficient_scope", scope="artworks:write"');
  });

  test('a successful request carries no challenge', async () => {
    const r = await client(t, g.key).get('/v1/me');
    expect(r.status).toBe(200);
    expect(r.headers['www-authenticate']).toBeUndefined();
  });
});

describe('X-Request-Id', () => {
  test('every answer carries a generated UUID when the request sent none: success, errors, 404, 405, pages', async () => {
    const answers = [
      await client(t, g.key).get('/v1/artworks'),
      await client(t).get('/v1/artworks'),
      await client(t, g.key).get('/v1/nothing'),
      await client(t, g.key).post('/v1/artworks', '{not json'),
      await client(t).get('/healthz'),
      await client(t).get('/v1/openapi.json'),
      await client(t).get(`/profiles/${g.slug}`),
    ];
    const ids = answers.map((r) => r.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('a sane X-Request-Id sent by the client (or a proxy) is kept', async () => {
    for (const id of ['abc', 'trace-1.2:3_x', 'A'.repeat(128)]) {
      const r = await client(t, g.key).get('/v1/me', { 'x-request-id': id });
      expect(r.headers['x-request-id']).toBe(id);
    }
  });

  test('an X-Request-Id that is too long or has other characters is replaced by a generated one', async () => {
    for (const id of ['A'.repeat(129), 'has space', 'quote"', 'new\\nline', 'ünïcode', '']) {
      const r = await client(t, g.key).get('/v1/me', { 'x-request-id': id });
      expect(r.headers['x-request-id'], JSON.stringify(id)).toMatch(UUID);
    }
  });

  test('the id of an answer is the reqId of the log lines of that request, "request completed" included', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _encoding, done) { lines.push(chunk.toString()); done(); } });
    const logged = await startApp({ LOG_LEVEL: 'info' }, undefined, { logStream: stream });
    try {
      const chosen = await client(logged).get('/v1/artworks', { 'x-request-id': 'gallery-sync-42' });
      const generated = await client(logged).get('/healthz');
      for (const r of [chosen, generated]) {
        const id = String(r.headers['x-request-id']);
        const mine = lines.filter((line) => line.includes(id));
        expect(mine.length, id).toBeGreaterThanOrEqual(1);
        expect(mine.some((line) => line.includes('"msg":"request completed"')), id).toBe(true);
        expect(mine.every((line) => JSON.parse(line).reqId === id), id).toBe(true);
      }
    } finally {
      await logged.close();
    }
  });
});
