import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from './helpers.js';

/** The OpenAPI document and the reference page (decisions §9): complete, valid, secured, with examples. */

let t: TestApp;
let doc: any;
let resolved: any;
beforeAll(async () => {
  t = await startApp({ PUBLIC_BASE_URL: 'https://catalog.example', RATE_LIMIT_SUBSCRIBER: '100000' });
  const r = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  doc = JSON.parse(r.body);
  resolved = await SwaggerParser.dereference(structuredClone(doc));
});
afterAll(async () => { await t.close(); });

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'] as const;

/** Every documented operation: method (lower case), OpenAPI path and the operation object (references resolved). */
function operations(): { method: string; path: string; op: any }[] {
  return Object.entries<any>(resolved.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })));
}

/**
 * Every route the app serves, read from Fastify's route tree (`printRoutes`): each line is a path segment
 * whose full path is the concatenation of its ancestors', with the methods in parentheses.
 */
function registeredRoutes(): { method: string; path: string }[] {
  const lines = t.app.printRoutes({ commonPrefix: false }).split('\n').filter((l) => l.trim());
  const stack: string[] = [];
  const routes: { method: string; path: string }[] = [];
  for (const line of lines) {
    const m = /^([\s│]*)(?:[├└]── )?(.*?)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) throw new Error(`unparsed route line: ${line}`);
    const prefix = m[1]!;
    const branch = /[├└]── /.test(line);
    const depth = branch ? Math.round((prefix.length + 4) / 4) : 0;
    stack.length = depth;
    stack[depth] = m[2]!;
    const path = stack.join('');
    for (const method of (m[3] ?? '').split(',').map((s) => s.trim()).filter(Boolean)) routes.push({ method, path });
  }
  return routes;
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('GET /v1/openapi.json', () => {
  test('the document is served without a key as OpenAPI 3.1.0', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(r.statusCode).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^application\/json\b/);
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info?.title).toBe('string');
    expect(typeof doc.info?.version).toBe('string');
  });

  test('the document passes swagger-parser validation', async () => {
    await expect(SwaggerParser.validate(structuredClone(doc))).resolves.toBeTruthy();
  });

  test('bearerAuth is an HTTP bearer security scheme', () => {
    expect(doc.components?.securitySchemes?.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  test('the route-tree parser finds the routes it must (so that the completeness check can fail)', () => {
    const routes = registeredRoutes().map((r) => `${r.method} ${r.path}`);
    for (const expected of ['GET /v1/artworks', 'POST /v1/artworks', 'PUT /v1/artworks/:id', 'DELETE /v1/events/:id',
      'GET /v1/sync/status', 'POST /v1/events/batch', 'GET /v1/me', 'GET /profiles/:slug/events/:event_slug/event.ics']) {
      expect(routes).toContain(expected);
    }
  });

  test('every route the app registers under /v1 is documented with its method', () => {
    const v1 = registeredRoutes()
      .filter((r) => r.path.startsWith('/v1/') && r.path !== '/v1/openapi.json' && r.method !== 'HEAD');
    expect(v1.length).toBeGreaterThanOrEqual(16);
    const missing = v1.filter((r) => !doc.paths?.[toOpenApiPath(r.path)]?.[r.method.toLowerCase()])
      .map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  test('every documented /v1 operation is a route the app serves', () => {
    const documented = operations().filter((o) => o.path.startsWith('/v1/'));
    expect(documented.length).toBeGreaterThan(0);
    const unserved = documented.filter((o) =>
      !t.app.hasRoute({ method: o.method.toUpperCase(), url: o.path.replace(/\{([^}]+)\}/g, ':$1') }))
      .map((o) => `${o.method.toUpperCase()} ${o.path}`);
    expect(unserved).toEqual([]);
  });

  test('every /v1 operation requires bearerAuth and documents 401, 403 and 429 with the error schema', () => {
    const ops = operations().filter((o) => o.path.startsWith('/v1/') && o.path !== '/v1/openapi.json');
    expect(ops.length).toBeGreaterThanOrEqual(16);
    for (const { method, path, op } of ops) {
      const where = `${method.toUpperCase()} ${path}`;
      const security = op.security ?? resolved.security;
      expect(security, where).toEqual(expect.arrayContaining([expect.objectContaining({ bearerAuth: expect.any(Array) })]));
      for (const status of ['401', '403', '429']) {
        const schema = op.responses?.[status]?.content?.['application/json']?.schema;
        expect(schema, `${where} ${status}`).toBeDefined();
        expect(schema.type, `${where} ${status}`).toBe('object');
        expect(schema.required, `${where} ${status}`).toEqual(expect.arrayContaining(['error', 'message']));
        expect(schema.properties?.error?.type, `${where} ${status}`).toBe('string');
        expect(schema.properties?.message?.type, `${where} ${status}`).toBe('string');
      }
    }
  });

  test('the 429 error schema documents retry_after as an integer', () => {
    const schema = resolved.paths['/v1/artworks'].get.responses['429'].content['application/json'].schema;
    const retry = schema.properties?.retry_after;
    expect(retry).toBeDefined();
    expect([retry.type].flat()).toContain('integer');
  });

  test('the keyless endpoints are not documented as needing a key', () => {
    const openapiOp = doc.paths?.['/v1/openapi.json']?.get;
    if (openapiOp) expect(openapiOp.security ?? []).not.toEqual(expect.arrayContaining([expect.objectContaining({ bearerAuth: expect.anything() })]));
    expect(doc.security ?? []).toEqual([]);
  });

  test('every operation with a request body has an example', () => {
    const withBody = operations().filter((o) => o.op.requestBody);
    expect(withBody.map((o) => `${o.method.toUpperCase()} ${o.path}`)).toEqual(expect.arrayContaining([
      'POST /v1/artworks', 'PUT /v1/artworks/{id}', 'POST /v1/events', 'PUT /v1/profile',
    ]));
    for (const { method, path, op } of withBody) {
      const media = op.requestBody.content?.['application/json'];
      expect(media, `${method} ${path}`).toBeDefined();
      const examples = [
        media.example, ...Object.values<any>(media.examples ?? {}).map((e) => e?.value),
        media.schema?.example, ...(media.schema?.examples ?? []),
      ].filter((e) => e !== undefined);
      expect(examples.length, `${method.toUpperCase()} ${path} has no example`).toBeGreaterThan(0);
    }
  });

  test('every request-body example is accepted by the API it documents', async () => {
    const g = await tenant(t, { name: 'Example Gallery' });
    const api = client(t, g.key);
    const artwork = await api.post('/v1/artworks', { title: 'Target For Put' });
    expect(artwork.status).toBe(201);
    const withBody = operations().filter((o) => o.op.requestBody);
    for (const { method, path, op } of withBody) {
      const media = op.requestBody.content['application/json'];
      const example = media.example ?? Object.values<any>(media.examples ?? {})[0]?.value ?? media.schema?.example ?? media.schema?.examples?.[0];
      const url = path.replace('{id}', String(artwork.body.id));
      const r = method === 'post' ? await api.post(url, example) : await api.put(url, example);
      expect([200, 201], `${method.toUpperCase()} ${path}: ${JSON.stringify(r.body)}`).toContain(r.status);
      if (path.endsWith('/batch')) {
        for (const item of r.body.results) expect(item.status, `${path}: ${JSON.stringify(item)}`).toBe(201);
      }
    }
  });

  test('the documented error schema matches a real 401 answer', async () => {
    const r = await client(t).get('/v1/artworks');
    expect(r.status).toBe(401);
    const schema = resolved.paths['/v1/artworks'].get.responses['401'].content['application/json'].schema;
    for (const field of schema.required) expect(r.body, field).toHaveProperty(field);
    expect(r.body.error).toBe('unauthorized');
  });
});

describe('GET /docs', () => {
  test('the browsable reference answers 200 HTML without a key', async () => {
    let r = await t.app.inject({ method: 'GET', url: '/docs' });
    for (let hops = 0; r.statusCode >= 300 && r.statusCode < 400 && hops < 3; hops++) {
      const location = String(r.headers.location);
      r = await t.app.inject({ method: 'GET', url: new URL(location, 'http://localhost/docs/').pathname });
    }
    expect(r.statusCode).toBe(200);
    expect(String(r.headers['content-type'])).toMatch(/^text\/html\b/);
    expect(r.body).toMatch(/<html/i);
  });
});
