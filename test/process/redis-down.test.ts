import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { connectRedis } from '../../src/coordination/redis.js';
import { RedisIdempotencyGuard } from '../../src/coordination/idempotency.js';
import { ApiError } from '../../src/domain/errors.js';
import { DIALECT, client, startApp, tenant, type TestApp } from '../helpers.js';

/** A TCP port nothing listens on (taken from the system, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/** A redis-server of the test's own on `port`, without persistence; resolves once it accepts commands. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/Ready to accept connections/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
  });
  return child;
}

const stopRedis = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve();
  child.once('exit', () => resolve());
  child.kill('SIGKILL');
});

/** The answer to `request` and how long it took. */
async function timed<T>(request: () => Promise<T>): Promise<{ answer: T; ms: number }> {
  const started = performance.now();
  const answer = await request();
  return { answer, ms: performance.now() - started };
}

// Redis's failure modes do not depend on the database: the SQLite pass covers them.
describe.skipIf(DIALECT !== 'sqlite')('Redis unreachable', () => {
  let t: TestApp | undefined;
  let redis: ChildProcess | undefined;
  afterEach(async () => {
    await t?.close();
    if (redis) await stopRedis(redis);
    t = undefined;
    redis = undefined;
  });

  test('with REDIS_URL naming a closed port, keyed requests get 503 service_unavailable with Retry-After at once, /healthz names redis, keyless routes still work', async () => {
    t = await startApp({ REDIS_URL: `redis://127.0.0.1:${await closedPort()}` });
    const g = await tenant(t);
    const api = client(t, g.key);
    for (const request of [() => api.get('/v1/artworks'), () => api.post('/v1/artworks', { title: 'Never Written' }, { 'idempotency-key': 'k-1' }), () => api.get('/v1/me')]) {
      const { answer, ms } = await timed(request);
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual({ error: 'service_unavailable', message: expect.any(String), retry_after: 1 });
      expect(answer.headers['retry-after']).toBe('1');
      expect(ms).toBeLessThan(1000);
    }
    const health = await timed(() => client(t!).get('/healthz'));
    expect(health.answer.status).toBe(503);
    expect(health.answer.body).toEqual({ status: 'unavailable', failing: ['redis'] });
    expect(health.answer.headers['retry-after']).toBe('1');
    expect(health.ms).toBeLessThan(1000);
    expect((await client(t).get('/v1/openapi.json')).status).toBe(200);
  });

  test('an idempotency claim while Redis is unreachable fails with service_unavailable, not a generic error', async () => {
    t = await startApp();
    const dead = connectRedis(`redis://127.0.0.1:${await closedPort()}`);
    dead.on('error', () => undefined);
    try {
      const guard = new RedisIdempotencyGuard(t.handle.db, dead, 'test:', 60_000);
      const claim = guard.claim({ apiKeyId: 1, key: 'k', requestHash: 'h' });
      await expect(claim).rejects.toBeInstanceOf(ApiError);
      await expect(claim).rejects.toMatchObject({ code: 'service_unavailable', status: 503, extras: { retry_after: 1 } });
    } finally {
      dead.disconnect();
    }
  });

  test.skipIf(!hasRedisServer)('Redis stopped mid-run: requests get 503 within a second, /healthz reports it; Redis back: service resumes by itself', async () => {
    const port = await closedPort();
    redis = await startRedis(port);
    t = await startApp({ REDIS_URL: `redis://127.0.0.1:${port}` });
    const g = await tenant(t);
    const api = client(t, g.key);
    expect((await api.post('/v1/artworks', { title: 'Before The Outage' }, { 'idempotency-key': 'before' })).status).toBe(201);
    expect((await client(t).get('/healthz')).body).toEqual({ status: 'ok' });

    await stopRedis(redis);
    // A process may still count a request or two in the lease it holds of the key's units until it sees its
    // connection close (docs/operations.md, Rate limits with several processes): within a second at most.
    await expect.poll(async () => (await api.get('/v1/artworks')).status, { timeout: 1000, interval: 10 }).toBe(503);
    const worst = { ms: 0 };
    for (let i = 0; i < 5; i++) {
      const { answer, ms } = await timed(() => api.get('/v1/artworks'));
      expect(answer.status).toBe(503);
      expect(answer.body.error).toBe('service_unavailable');
      expect(answer.headers['retry-after']).toBe('1');
      worst.ms = Math.max(worst.ms, ms);
    }
    const write = await api.post('/v1/artworks', { title: 'During The Outage' }, { 'idempotency-key': 'during' });
    expect(write.status).toBe(503);
    const health = await client(t).get('/healthz');
    expect(health.status).toBe(503);
    expect(health.body).toEqual({ status: 'unavailable', failing: ['redis'] });
    expect(worst.ms).toBeLessThan(1000);

    redis = await startRedis(port);
    await expect.poll(async () => (await api.get('/v1/artworks')).status, { timeout: 5000, interval: 100 }).toBe(200);
    expect((await client(t).get('/healthz')).status).toBe(200);
    // The write refused during the outage runs now, once.
    expect((await api.post('/v1/artworks', { title: 'During The Outage' }, { 'idempotency-key': 'during' })).status).toBe(201);
    expect((await api.get('/v1/artworks')).body.total).toBe(2);
  });
});
