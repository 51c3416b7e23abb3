import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ArtCatalogClient } from '../../src/client/index.js';
import { ERROR_CATALOG, type ErrorCode } from '../../src/domain/errors.js';
import { COMPONENTS } from '../../src/schemas/components.js';
import { client, startApp, tenant, type TestApp } from '../helpers.js';

/** The OpenAPI document and the reference page (docs/api.md, Generated clients): complete, valid, secured, with examples. */

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
    const hook = await api.post('/v1/webhooks', { url: 'https://example.org/hooks', events: ['*'] });
    expect(hook.status).toBe(201);
    const feed = await api.post('/v1/feeds', { url: 'https://example.org/target-for-put.csv', kind: 'artworks', paused: true });
    expect(feed.status).toBe(201);
    const withBody = operations().filter((o) => o.op.requestBody);
    for (const { method, path, op } of withBody) {
      const media = op.requestBody.content['application/json'];
      const example = media.example ?? Object.values<any>(media.examples ?? {})[0]?.value ?? media.schema?.example ?? media.schema?.examples?.[0];
      const url = path.replace('{id}', String(path.startsWith('/v1/webhooks/') ? hook.body.id : path.startsWith('/v1/feeds/') ? feed.body.id : artwork.body.id));
      const r = method === 'post' ? await api.post(url, example) : await api.put(url, example);
      // The preview's example is a valid body whose file no server here serves: its answer names the URL, not the body.
      if (path === '/v1/feeds/preview') {
        expect(r.body.details, JSON.stringify(r.body)).toEqual([{ field: 'url', message: expect.stringMatching(/^the file cannot be read: /) }]);
        continue;
      }
      // 202: a feed's run is queued (docs/api.md, Feeds).
      expect([200, 201, 202], `${method.toUpperCase()} ${path}: ${JSON.stringify(r.body)}`).toContain(r.status);
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

/**
 * The typed client's operations: each of its function members called once against a recording fetch,
 * as the method name and the request it sends (`request` itself and the private helpers send none).
 */
async function clientCalls(): Promise<{ name: string; method: string; path: string }[]> {
  const base = 'http://client.example';
  let sent: { method: string; path: string } | undefined;
  const fetch = (async (url: unknown, init?: RequestInit) => {
    if (typeof url === 'string' && url.startsWith(base)) sent = { method: init?.method ?? 'GET', path: new URL(url).pathname };
    return new Response('{}', { status: 200 });
  }) as typeof globalThis.fetch;
  const api = new ArtCatalogClient({ baseUrl: base, key: 'ak_live_unused', fetch }) as unknown as Record<string, unknown>;
  const calls: { name: string; method: string; path: string }[] = [];
  for (const name of Object.keys(api).filter((n) => typeof api[n] === 'function')) {
    sent = undefined;
    await (api[name] as (...args: unknown[]) => Promise<unknown>)(7, {});
    // Assigned by the fetch above, which the compiler cannot see: read it through a widened alias.
    const request = sent as { method: string; path: string } | undefined;
    if (request) calls.push({ name, ...request });
  }
  return calls;
}

describe('what code generators need', () => {
  test('every operation has a unique operationId', () => {
    const ids = operations().map((o) => o.op.operationId);
    expect(ids.filter((id) => typeof id !== 'string')).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('each typed client method is the operation whose operationId is its name, and every /v1 operation has one', async () => {
    const calls = await clientCalls();
    expect(calls.length).toBeGreaterThanOrEqual(17);
    const matched = calls.map(({ name, method, path }) => {
      const op = operations().find((o) => o.method === method.toLowerCase() && new RegExp(`^${o.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path));
      return { name, operationId: op?.op.operationId };
    });
    for (const { name, operationId } of matched) expect(operationId, name).toBe(name);
    const v1 = operations().filter((o) => o.path.startsWith('/v1/')).map((o) => o.op.operationId).sort();
    expect(v1).toEqual(calls.map((c) => c.name).sort());
  });

  test('every 2xx body schema is a $ref to a named component', () => {
    const raw = Object.entries<any>(doc.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ where: `${method.toUpperCase()} ${path}`, op: item[method] })));
    let checked = 0;
    for (const { where, op } of raw) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (!status.startsWith('2')) continue;
        for (const media of Object.values<any>(response.content ?? {})) {
          checked++;
          expect(media.schema?.$ref, `${where} ${status}`).toMatch(/^#\/components\/schemas\/[A-Z][A-Za-z]+$/);
          expect(doc.components.schemas[media.schema.$ref.split('/').pop()], `${where} ${status}`).toBeDefined();
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(19);
  });

  test('the components are the named models, by name, with no generated def-N name', () => {
    const names = Object.keys(doc.components.schemas).sort();
    expect(names).toEqual(COMPONENTS.map((model) => (model as { $id: string }).$id).sort());
    expect(names).toEqual(expect.arrayContaining(['Artwork', 'ArtworkList', 'Event', 'EventList', 'Profile', 'ChangelogEntry',
      'ChangelogPage', 'SyncStatus', 'Me', 'Error', 'BatchResult']));
    expect(JSON.stringify(doc)).not.toMatch(/def-\d/);
  });

  test('the lists refer to their items by name', () => {
    expect(doc.components.schemas.ArtworkList.properties.artworks.items.$ref).toBe('#/components/schemas/ArtworkListItem');
    expect(doc.components.schemas.ChangelogPage.properties.changes.items.$ref).toBe('#/components/schemas/ChangelogEntry');
  });

  test('every response and operation is described (no "Default Response")', () => {
    for (const { method, path, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.description, where).toMatch(/\w/);
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect(response.description, `${where} ${status}`).not.toBe('Default Response');
        expect(response.description, `${where} ${status}`).toMatch(/\w{3}/);
      }
    }
  });

  test('every error response is the Error model, described by the catalog entries of its status', () => {
    for (const { method, path } of operations()) {
      const op = doc.paths[path][method];
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const where = `${method.toUpperCase()} ${path} ${status}`;
        if (path === '/healthz' && status === '503') {
          // docs/operations.md, Health, metrics and logs: `{"status":"unavailable","failing":[…]}`, or the Error model while stopping.
          expect(response.content['application/json'].schema.$ref, where).toBe('#/components/schemas/HealthUnavailable');
          expect(doc.components.schemas.HealthUnavailable.anyOf[1].$ref, where).toBe('#/components/schemas/Error');
          continue;
        }
        expect(response.content['application/json'].schema.$ref, where).toBe('#/components/schemas/Error');
        const codes = [...response.description.matchAll(/`([a-z_]+)`: /g)].map((m) => m[1] as ErrorCode);
        expect(codes.length, where).toBeGreaterThan(0);
        for (const code of codes) {
          expect(ERROR_CATALOG[code]?.status, `${where} ${code}`).toBe(Number(status));
          expect(response.description, where).toContain(ERROR_CATALOG[code].description);
        }
      }
    }
  });

  test('the response headers are documented where the API sends them', () => {
    const list = doc.paths['/v1/artworks'].get.responses;
    expect(Object.keys(list['200'].headers)).toEqual(expect.arrayContaining(['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Link']));
    expect(Object.keys(list['429'].headers)).toEqual(expect.arrayContaining(['Retry-After', 'X-RateLimit-Reset']));
    expect(Object.keys(list['401'].headers)).toEqual(expect.arrayContaining(['WWW-Authenticate', 'X-Request-Id']));
    expect(list['401'].headers['X-RateLimit-Limit']).toBeUndefined();
    const post = doc.paths['/v1/artworks'].post.responses;
    expect(Object.keys(post['201'].headers)).toEqual(expect.arrayContaining(['Idempotent-Replayed', 'X-RateLimit-Remaining']));
    expect(post['503'].headers['Retry-After']).toBeDefined();
    expect(doc.paths['/healthz'].get.responses['200'].headers['X-Request-Id']).toBeDefined();
    expect(Object.keys(list['200'].headers)).toEqual(expect.arrayContaining(['ETag', 'Cache-Control']));
    expect(Object.keys(list['304'].headers)).toEqual(expect.arrayContaining(['ETag', 'X-RateLimit-Remaining']));
    expect(post['304']).toBeUndefined();
    for (const { method, path, op } of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect(response.headers?.['X-Request-Id'], `${method} ${path} ${status}`).toBeDefined();
      }
    }
  });

  test('the documented headers are the ones a real answer carries', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    for (let i = 0; i < 3; i++) expect((await api.post('/v1/artworks', { title: `Header Work ${i}` })).status).toBe(201);
    const r = await api.get('/v1/artworks?limit=2');
    const documented = Object.keys(doc.paths['/v1/artworks'].get.responses['200'].headers).map((h) => h.toLowerCase());
    for (const header of documented) expect(r.headers[header], header).toBeDefined();
  });

  test('the keyless operations declare an empty security list', () => {
    expect(doc.paths['/healthz'].get.security).toEqual([]);
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
