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

describe('a stored signing secret', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', WEBHOOK_CONCURRENCY: '0' });
  });
  afterAll(async () => t.close());

  const rowOf = (id: number) => t.handle.db.selectFrom('webhook_endpoints').select(['secret', 'old_secret']).where('id', '=', id).executeTakeFirstOrThrow();
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
