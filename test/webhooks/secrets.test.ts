import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest, migrator } from '../../src/db/migrate.js';
import { SEALED_PREFIX, seal, unseal } from '../../src/secrets/seal.js';
import { loadServerKey } from '../../src/secrets/server-key.js';
import { client, freshDatabase, startApp, tenant, type TestApp } from '../helpers.js';

/** Webhook signing secrets are stored sealed with the server key (docs/operations.md, Secrets at rest). */

const rowOfIn = (t: TestApp, id: number) => t.handle.db.selectFrom('webhook_endpoints').select(['secret', 'old_secret']).where('id', '=', id).executeTakeFirstOrThrow();

describe('a stored signing secret', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
  });
  afterAll(async () => t.close());

  const rowOf = (id: number) => rowOfIn(t, id);
  // The secret's random part: what a reader of the row must not find, whole or encoded.
  const forms = (secret: string) => [secret, secret.slice('whsec_'.length), Buffer.from(secret.slice('whsec_'.length), 'base64').toString('hex')];

  test('is not in the database row, before or after a roll; the answers show it once and it signs', async () => {
    const g = await tenant(t);
    const api = client(t, g.key);
    const created = await api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'] });
    expect(created.status).toBe(201);
    const first = created.body.secret as string;
    expect(first).toMatch(/^whsec_/);
    let row = await rowOf(created.body.id);
    expect(row.secret.startsWith(SEALED_PREFIX)).toBe(true);
    for (const form of forms(first)) expect(JSON.stringify(row)).not.toContain(form);

    const rolled = await api.post(`/v1/webhooks/${created.body.id}/roll-secret`, { expire_old_in: '24h' });
    expect(rolled.status).toBe(200);
    const second = rolled.body.secret as string;
    row = await rowOf(created.body.id);
    for (const form of [...forms(first), ...forms(second)]) expect(JSON.stringify(row)).not.toContain(form);
    // Sealed, they open to the secrets the answers showed (what signing uses).
    expect([unseal(row.secret), unseal(row.old_secret!)]).toEqual([second, first]);
    // The list never shows a secret, sealed or not.
    const listed = JSON.stringify((await api.get('/v1/webhooks')).body);
    expect(listed).not.toContain(SEALED_PREFIX);
    expect(listed).not.toContain(second);
  });

  test('sealed twice, the same secret is stored differently; another key cannot open it', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(seal(secret)).not.toBe(seal(secret));
    const other = seal(secret, 'another server key of at least 32 characters');
    expect(unseal(other, 'another server key of at least 32 characters')).toBe(secret);
    expect(() => unseal(other)).toThrow('does not open with this server key');
  });
});

describe('an idempotent replay of an answer that showed a secret', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
  });
  afterAll(async () => t.close());

  const storedBodies = async () => JSON.stringify(await t.handle.db.selectFrom('idempotency_keys').select('body').execute());

  test('answers the same status and endpoint with the secret null and secret_shown false; the kept answer holds no secret', async () => {
    const api = client(t, (await tenant(t)).key);
    const create = () => api.post('/v1/webhooks', { url: 'http://127.0.0.1:9/replayed', events: ['*'] }, { 'idempotency-key': 'create-once' });
    const first = await create();
    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^whsec_/);
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual({ ...first.body, secret: null, secret_shown: false });

    const roll = () => api.post(`/v1/webhooks/${first.body.id}/roll-secret`, { expire_old_in: 'now' }, { 'idempotency-key': 'roll-once' });
    const rolled = await roll();
    expect(rolled.status).toBe(200);
    const replayed = await roll();
    expect(replayed.status).toBe(200);
    expect(replayed.body).toEqual({ ...rolled.body, secret: null, secret_shown: false });
    // The replay did not roll again: the secret the roll showed still signs.
    const row = await rowOfIn(t, first.body.id);
    expect(unseal(row.secret)).toBe(rolled.body.secret);

    const kept = await storedBodies();
    expect(kept).not.toContain(first.body.secret);
    expect(kept).not.toContain(rolled.body.secret);
    expect(kept).not.toContain('whsec_');
  });
});

test('migration 017 takes the secrets out of the answers kept for replay before it; other answers stay as they were', async () => {
  const fresh = await freshDatabase();
  const handle = connect(fresh.url);
  const db = handle.db as any;
  try {
    expect((await migrator(handle).migrateTo('016_sealed_webhook_secrets')).error).toBeUndefined();
    const at = new Date().toISOString();
    const secret = 'whsec_Y3VycmVudCBzZWNyZXQgb2YgdGhpcnR5LXR3byBieXRlcyE=';
    const shown = JSON.stringify({ id: 7, url: 'https://a.example/h', events: ['*'], description: '', enabled: true, disabled_reason: null, created_at: at, secret });
    const other = JSON.stringify({ id: 1, title: 'A secret garden', description: 'whsec_ is how the "secret" of a webhook starts' });
    // Rows as the schema of 016 holds them: today's store writes columns a later migration adds.
    const entity = await db.insertInto('entities').values({ type: 'gallery', name: 'Before 017', slug: 'before-017', created_at: at, updated_at: at }).returning('id').executeTakeFirstOrThrow();
    const key = await db.insertInto('api_keys').values({
      entity_id: entity.id, prefix: 'ak_live_before17', key_hash: 'f'.repeat(64), tier: 'subscriber', scopes: '["webhooks:write"]', created_at: at,
    }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('idempotency_keys').values([
      { api_key_id: key.id, key: 'a', request_hash: 'h', state: 'done', status: 201, body: shown, created_at: at, locked_until: at },
      { api_key_id: key.id, key: 'b', request_hash: 'h', state: 'done', status: 201, body: other, created_at: at, locked_until: at },
      { api_key_id: key.id, key: 'c', request_hash: 'h', state: 'in_flight', status: null, body: null, created_at: at, locked_until: at },
    ]).execute();
    await migrateToLatest(handle);
    const rows = await db.selectFrom('idempotency_keys').select(['key', 'status', 'body']).orderBy('key').execute();
    expect(JSON.stringify(rows)).not.toContain(secret);
    expect(rows.map((r: { key: string; status: number | null; body: string | null }) => [r.key, r.status, r.body && JSON.parse(r.body)])).toEqual([
      ['a', 201, { ...JSON.parse(shown), secret: null, secret_shown: false }],
      ['b', 201, JSON.parse(other)],
      ['c', null, null],
    ]);
  } finally {
    await handle.close();
    await fresh.drop();
  }
});

test('migration 016 seals the secrets of endpoints made before it, and down opens them', async () => {
  const fresh = await freshDatabase();
  const handle = connect(fresh.url);
  const db = handle.db as any;
  try {
    expect((await migrator(handle).migrateTo('015_sign_in_limits')).error).toBeUndefined();
    const at = '2026-01-01T00:00:00.000Z';
    const current = 'whsec_Y3VycmVudCBzZWNyZXQgb2YgdGhpcnR5LXR3byBieXRlcyE=';
    const old = 'whsec_b2xkIHNlY3JldCBvZiB0aGlydHktdHdvIGJ5dGVzIGhlcmUh';
    await db.insertInto('webhook_endpoints').values([
      { owner_id: 1, url: 'https://a.example/h', events: '*', description: '', enabled: 1, secret: current, old_secret: old, old_secret_expires_at: '2099-01-01T00:00:00.000Z', created_at: at, updated_at: at },
      { owner_id: 1, url: 'https://b.example/h', events: '*', description: '', enabled: 1, secret: old, old_secret: null, created_at: at, updated_at: at },
    ]).execute();
    await migrateToLatest(handle);
    const rows = await db.selectFrom('webhook_endpoints').select(['secret', 'old_secret']).orderBy('id').execute();
    expect(JSON.stringify(rows)).not.toContain('whsec_');
    expect(rows.map((r: { secret: string; old_secret: string | null }) => [unseal(r.secret), r.old_secret && unseal(r.old_secret)])).toEqual([[current, old], [old, null]]);
    expect((await migrator(handle).migrateTo('015_sign_in_limits')).error).toBeUndefined();
    expect(await db.selectFrom('webhook_endpoints').select(['secret', 'old_secret']).orderBy('id').execute()).toEqual([{ secret: current, old_secret: old }, { secret: old, old_secret: null }]);
    // Up again: the database ends sealed, as every test database must (test/support/secrets-scan.ts).
    await migrateToLatest(handle);
  } finally {
    await handle.close();
    await fresh.drop();
  }
});

describe('the server key', () => {
  test('is generated once beside a SQLite database (mode 0600) and read back; a short SECRET_KEY is refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'server-key-'));
    try {
      const env = { DATABASE_URL: `sqlite:${join(dir, 'db', 'catalog.db')}` };
      const first = loadServerKey(env);
      expect(first.length).toBeGreaterThanOrEqual(32);
      expect(statSync(join(dir, 'db', 'secret.key')).mode & 0o777).toBe(0o600);
      expect(loadServerKey(env)).toBe(first);
      expect(loadServerKey({ ...env, SECRET_KEY: 'k'.repeat(40) })).toBe('k'.repeat(40));
      expect(() => loadServerKey({ ...env, SECRET_KEY: 'too short' })).toThrow('SECRET_KEY must be at least 32 characters');
      // The message never shows the value.
      expect(() => loadServerKey({ ...env, SECRET_KEY: 'too short' })).not.toThrow('too short');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
