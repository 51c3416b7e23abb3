import { sql } from 'kysely';
import pg from 'pg';
import { expect, test } from 'vitest';
import { DIALECT, POSTGRES_ADMIN_URL } from '../support/database.js';
import { client, startApp, tenant } from '../helpers.js';

test.skipIf(DIALECT !== 'postgres')('when PostgreSQL terminates the pool\'s idle connections the process survives and the next request reconnects', async () => {
  const t = await startApp();
  try {
    const g = await tenant(t);
    const api = client(t, g.key);
    expect((await api.post('/v1/artworks', { title: 'Before Termination' })).status).toBe(201);
    const { rows } = await sql<{ db: string }>`select current_database() as db`.execute(t.handle.db);
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    const killed = await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [rows[0]!.db]);
    await admin.end();
    expect(killed.rowCount).toBeGreaterThan(0);
    // Let the pool notice; an unhandled 'error' would fail this test file.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const after = await api.get('/v1/artworks');
    expect(after.status).toBe(200);
    expect(after.body.total).toBe(1);
  } finally {
    await t.close();
  }
});

test.skipIf(DIALECT !== 'postgres')('when PostgreSQL terminates a connection checked out for a transaction the process survives, the transaction fails, and the next request reconnects', async () => {
  const t = await startApp();
  try {
    const g = await tenant(t);
    const api = client(t, g.key);
    const { rows } = await sql<{ db: string }>`select current_database() as db`.execute(t.handle.db);
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    const inTransaction = t.handle.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      // Between two statements the connection is checked out with no query running: the server ends it now.
      await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [rows[0]!.db]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      await sql`select 1`.execute(trx);
    });
    await expect(inTransaction).rejects.toThrow();
    await admin.end();
    const after = await api.post('/v1/artworks', { title: 'After Termination' });
    expect(after.status).toBe(201);
  } finally {
    await t.close();
  }
});
