import { sql } from 'kysely';
import { expect, test } from 'vitest';
import { PING_APPLICATION_NAME } from '../../src/db/connect.js';
import { DIALECT, client, freshDatabase, migratedDatabase, startApp, tenant } from '../helpers.js';
import { startTcpProxy } from '../support/tcp-proxy.js';

test('/healthz answers 200 ok while the database answers, and 503 naming the database once it does not', async () => {
  // The test's own database: it closes the app's handle itself, so the app is closed, and the database dropped, here.
  const database = await migratedDatabase();
  const t = await startApp({}, database.url);
  try {
    const anonymous = client(t);
    const ok = await anonymous.get('/healthz');
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: 'ok' });

    await t.handle.close();
    const down = await anonymous.get('/healthz');
    expect(down.status).toBe(503);
    expect(down.body).toEqual({ status: 'unavailable', failing: ['database'] });
    expect(down.headers['retry-after']).toBe('1');
  } finally {
    await t.app.close();
    await database.drop();
  }
});

test.skipIf(DIALECT !== 'postgres')('PostgreSQL refusing connections, then swallowing them: requests and /healthz get 503 within a second; back, service resumes', async () => {
  const fresh = await freshDatabase();
  const target = new URL(fresh.url);
  const proxy = await startTcpProxy(Number(target.port || 5432), target.hostname);
  const through = new URL(fresh.url);
  through.port = String(proxy.port);
  const t = await startApp({}, through.toString());
  try {
    const g = await tenant(t);
    const api = client(t, g.key);
    expect((await api.post('/v1/artworks', { title: 'Before The Outage' })).status).toBe(201);

    for (const outage of [() => proxy.refuse(), () => proxy.blackhole()]) {
      await outage();
      for (const request of [() => api.get('/v1/artworks'), () => api.post('/v1/artworks', { title: 'During The Outage' })]) {
        const started = performance.now();
        const answer = await request();
        expect(performance.now() - started).toBeLessThan(1000);
        expect(answer.status).toBe(503);
        expect(answer.body).toEqual({ error: 'service_unavailable', message: expect.any(String), retry_after: 1 });
        expect(answer.headers['retry-after']).toBe('1');
      }
      const health = await client(t).get('/healthz');
      expect(health.status).toBe(503);
      expect(health.body).toEqual({ status: 'unavailable', failing: ['database'] });
    }

    await proxy.forward();
    await expect.poll(async () => (await api.get('/v1/artworks')).status, { timeout: 5000, interval: 100 }).toBe(200);
    expect((await client(t).get('/healthz')).status).toBe(200);
    expect((await api.get('/v1/artworks')).body.total).toBe(1);
  } finally {
    await proxy.forward();
    await t.close();
    await proxy.close();
    await fresh.drop();
  }
});

test.skipIf(DIALECT !== 'postgres')('a pool busy with long statements is load, not an outage: /healthz answers 200 at once on its own connection', async () => {
  const t = await startApp();
  try {
    // Every connection of the pool (10, the default) busy for 1.5 s, and one more statement queued behind them.
    const busy = Array.from({ length: 11 }, () => sql`select pg_sleep(1.5)`.execute(t.handle.db));
    await new Promise((resolve) => { setTimeout(resolve, 100); });
    const started = performance.now();
    const health = await client(t).get('/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    // Behind the pool's queue it would have waited for the sleeps, past /healthz's 800 ms deadline.
    expect(performance.now() - started).toBeLessThan(700);
    await Promise.all(busy);
  } finally {
    await t.close();
  }
});

test.skipIf(DIALECT !== 'postgres')('a server that has started listening already holds its health check\'s connection: the first /healthz opens none', async () => {
  const t = await startApp();
  try {
    const pingConnections = async () => Number((await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and application_name = ${PING_APPLICATION_NAME}`.execute(t.handle.db)).rows[0]!.n);
    expect(await pingConnections()).toBe(0);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    // Opened as the server starts listening, without holding the start up: there within a moment, no /healthz asked.
    await expect.poll(pingConnections, { timeout: 5000, interval: 20 }).toBe(1);
    const backend = sql<{ pid: number }>`select pid from pg_stat_activity where datname = current_database() and application_name = ${PING_APPLICATION_NAME}`;
    const before = (await backend.execute(t.handle.db)).rows.map((row) => row.pid);
    expect((await client(t).get('/healthz')).status).toBe(200);
    // The same connection answered it.
    expect((await backend.execute(t.handle.db)).rows.map((row) => row.pid)).toEqual(before);
  } finally {
    await t.close();
  }
});
