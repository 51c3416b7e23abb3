import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { connect, type DatabaseHandle } from '../../src/db/connect.js';
import type { Scope, Tier } from '../../src/domain/keys.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { buildApp, type AppOptions } from '../../src/http/app.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { migratedDatabase } from './database.js';

export { DIALECT, freshDatabase, migratedDatabase, type FreshDatabase } from './database.js';

export interface TestApp {
  app: FastifyInstance;
  handle: DatabaseHandle;
  config: Config;
  close(): Promise<void>;
}

/** The real app on a fresh database of its own (SQLite or PostgreSQL, per the run; a copy of the run's migrated template), torn down by `close`. */
export async function startApp(env: Record<string, string> = {}, database?: string, options: Pick<AppOptions, 'timeouts' | 'logStream' | 'imageWorker' | 'undoTimeoutMs'> = {}): Promise<TestApp> {
  const fresh = database ? undefined : await migratedDatabase();
  // Each app gets its own Redis key space (when the run uses Redis), as it gets its own database.
  const config = loadConfig({
    DATABASE_URL: database ?? fresh!.url, LOG_LEVEL: 'silent',
    REDIS_URL: process.env.REDIS_URL ?? '', REDIS_KEY_PREFIX: `test:${randomUUID()}:`, ...env,
  });
  const handle = connect(config.databaseUrl);
  // The image queue is worked on only by tests that ask for it (test/images/images.test.ts).
  const app = await buildApp({
    config, database: handle, imageWorker: options.imageWorker ?? false, ...(options.undoTimeoutMs ? { undoTimeoutMs: options.undoTimeoutMs } : {}),
    ...(options.logStream ? { logStream: options.logStream } : { logger: false }), ...(options.timeouts ? { timeouts: options.timeouts } : {}),
  });
  await app.ready();
  return {
    app, handle, config,
    async close() {
      await app.close();
      await handle.close();
      await fresh?.drop();
    },
  };
}

export interface Tenant {
  entityId: number;
  slug: string;
  key: string;
  prefix: string;
}

let counter = 0;

/** A gallery (or artist) with one key of the given tier and scopes. */
export async function tenant(t: TestApp, options: { name?: string; type?: 'gallery' | 'artist'; tier?: Tier; scopes?: Scope[]; expiresAt?: string | null } = {}): Promise<Tenant> {
  const entity = await createEntity(t.handle.db, { type: options.type ?? 'gallery', name: options.name ?? `Test Gallery ${++counter}`, city: 'Berlin', country: 'DE' });
  return { entityId: entity.id, slug: entity.slug, ...(await keyFor(t, entity.id, options)) };
}

export async function keyFor(t: TestApp, entityId: number, options: { tier?: Tier; scopes?: Scope[]; expiresAt?: string | null } = {}) {
  const tier = options.tier ?? 'subscriber';
  const { key, row } = await createKey(t.handle.db, { entityId, tier, scopes: options.scopes ?? TIER_SCOPES[tier], expiresAt: options.expiresAt ?? null });
  return { key, prefix: row.prefix };
}

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, string | string[] | number | undefined>;
}

/** Requests as a caller with `key` would send them. */
export function client(t: TestApp, key?: string) {
  const send = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> => {
    const response = await t.app.inject({
      method, url,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    let parsed: unknown = response.body;
    try { parsed = JSON.parse(response.body); } catch { /* not JSON: keep the text */ }
    return { status: response.statusCode, body: parsed, headers: response.headers };
  };
  return {
    get: (url: string, headers?: Record<string, string>) => send('GET', url, undefined, headers),
    post: (url: string, body: unknown, headers?: Record<string, string>) => send('POST', url, body, headers),
    put: (url: string, body: unknown, headers?: Record<string, string>) => send('PUT', url, body, headers),
    delete: (url: string, headers?: Record<string, string>) => send('DELETE', url, undefined, headers),
  };
}
