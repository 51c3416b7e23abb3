import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECT, client, keyFor, startApp, tenant, type TestApp } from '../helpers.js';

const REDIS_URL = process.env.REDIS_URL;

/**
 * A connection in MONITOR mode, read as plain lines (ioredis's monitor() loses its place when a busy
 * Redis answers before it has switched): `seen(line)` for every command Redis runs.
 */
async function monitorRedis(url: string, seen: (line: string) => void): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port || 6379), hostname);
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let rest = '';
  socket.on('data', (chunk: Buffer) => {
    const lines = (rest + chunk.toString('utf8')).split('\r\n');
    rest = lines.pop()!;
    for (const line of lines) seen(line);
  });
  socket.write('MONITOR\r\n');
  return socket;
}

/**
 * Rate limits with Redis spent in leases (docs/operations.md, Rate limits with several processes): two
 * app instances on one database and one Redis key space stand for two server processes. Each counts a
 * key's requests itself and tells Redis in one INCRBY for several; the overshoot is at most the lease
 * size per process; another process's revocation or pause is refused within a second on both.
 */
describe.skipIf(DIALECT !== 'postgres' || !REDIS_URL)('rate-limit leases: two app instances, one Redis', () => {
  const LIMIT = 400;
  const LEASE = 10;
  const prefix = `lease:${randomUUID()}:`;
  let one: TestApp;
  let two: TestApp;
  let monitor: Socket;
  /** Scripts run on this file's rate-limit counters, as MONITOR saw them: each a visit to Redis. */
  let counterCommands = 0;

  beforeAll(async () => {
    const env = { REDIS_KEY_PREFIX: prefix, RATE_LIMIT_SUBSCRIBER: String(LIMIT), RATE_LIMIT_LEASE: String(LEASE) };
    one = await startApp(env);
    two = await startApp(env, one.config.databaseUrl);
    monitor = await monitorRedis(REDIS_URL!, (line) => {
      // The scripts' own commands (INCRBY, PTTL) are shown too, as from "lua": the EVALs are the visits.
      if (/^\+\S+ \[\d+ [^\]]*\] "eval"/i.test(line) && line.includes(`"${prefix}rl:`)) counterCommands += 1;
    });
  });

  afterAll(async () => {
    monitor?.destroy();
    await two?.close();
    await one?.close();
  });

  /** Request i goes to instance i mod 2. */
  const apps = () => [one, two];

  test('a key\'s requests over both instances: at most LIMIT + lease × 2 admitted, at least LIMIT, few visits to Redis, coherent headers', async () => {
    const g = await tenant(one, { tier: 'subscriber' });
    const before = counterCommands;
    const answers = [];
    // Ten at a time, alternating instances, 600 in all: 200 more than the limit.
    for (let round = 0; round < 60; round++) {
      answers.push(...await Promise.all(Array.from({ length: 10 }, (_, j) => {
        const i = round * 10 + j;
        return client(apps()[i % 2]!, g.key).get('/v1/artworks').then((answer) => ({ i, answer }));
      })));
    }
    const admitted = answers.filter(({ answer }) => answer.status === 200).length;
    expect(answers.filter(({ answer }) => answer.status !== 200).every(({ answer }) => answer.status === 429)).toBe(true);
    expect(admitted).toBeGreaterThanOrEqual(LIMIT);
    expect(admitted).toBeLessThanOrEqual(LIMIT + LEASE * 2);
    // Most requests asked no Redis: one INCRBY per half lease per instance, about 600 / 5.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(counterCommands - before).toBeLessThanOrEqual(600 / 4);

    for (const side of [0, 1]) {
      const mine = answers.filter(({ i }) => i % 2 === side).map(({ answer }) => answer);
      for (const answer of mine) {
        expect(answer.headers['x-ratelimit-limit']).toBe(String(LIMIT));
        const remaining = Number(answer.headers['x-ratelimit-remaining']);
        expect(remaining).toBeGreaterThanOrEqual(0);
        expect(remaining).toBeLessThan(LIMIT);
        if (answer.status === 429) {
          expect(remaining).toBe(0);
          expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        }
      }
      // One instance's answers, in the order sent ten at a time: what is left never grows from one round to the next.
      const byRound = Array.from({ length: 60 }, (_, round) => Math.min(...mine.slice(round * 5, round * 5 + 5).map((a) => Number(a.headers['x-ratelimit-remaining']))));
      for (let round = 1; round < 60; round++) expect(byRound[round]).toBeLessThanOrEqual(byRound[round - 1]!);
    }
    // Both instances name the same window's end (within the second a clock may round to).
    const resets = answers.map(({ answer }) => Number(answer.headers['x-ratelimit-reset']));
    expect(Math.max(...resets) - Math.min(...resets)).toBeLessThanOrEqual(1);
  });

  test('requests coming faster than Redis answers wait for the answer on its way: one visit per lease\'s worth, not one each, and the count stays exact', async () => {
    const g = await tenant(one, { tier: 'subscriber' });
    // The window's first request learns the lease; then 300 at once, far more than a lease.
    expect((await client(one, g.key).get('/v1/artworks')).status).toBe(200);
    const before = counterCommands;
    const answers = await Promise.all(Array.from({ length: 300 }, () => client(one, g.key).get('/v1/artworks')));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // Each answer took its own unit: 300 different counts, none beyond what was sent.
    const remaining = new Set(answers.map((answer) => Number(answer.headers['x-ratelimit-remaining'])));
    expect(remaining.size).toBe(300);
    expect(Math.min(...remaining)).toBe(LIMIT - 301);
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A visit per half lease, about 300 / 5, and a few more where the lease was full: not 300.
    expect(counterCommands - before).toBeLessThanOrEqual(300 / 3);
    // One process alone: the next request's count is exact (the tenant's one, the first, the 300, and it).
    expect((await client(one, g.key).get('/v1/artworks')).headers['x-ratelimit-remaining']).toBe(String(LIMIT - 302));
  });

  test('one instance alone counts exactly: remaining goes 399, 398, … and the 401st is refused', async () => {
    const g = await tenant(one, { tier: 'subscriber' });
    const remaining = [];
    for (let i = 0; i < LIMIT; i++) {
      const answer = await client(one, g.key).get('/v1/artworks');
      expect(answer.status).toBe(200);
      remaining.push(Number(answer.headers['x-ratelimit-remaining']));
    }
    expect(remaining).toEqual(Array.from({ length: LIMIT }, (_, i) => LIMIT - 1 - i));
    const refused = await client(one, g.key).get('/v1/artworks');
    expect(refused.status).toBe(429);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
  });

  /** Polls both instances every 50 ms until each refuses the key with `status`; the ms each took. */
  async function refusedWithin(key: string, status: number): Promise<number[]> {
    const started = performance.now();
    return Promise.all(apps().map(async (t) => {
      for (;;) {
        const answer = await client(t, key).get('/v1/artworks');
        if (answer.status === status) return performance.now() - started;
        expect(answer.status).toBe(200);
        if (performance.now() - started > 6000) return Infinity;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }));
  }

  test('a key revoked by another process (straight in the database) is refused on both instances within a second', async () => {
    const g = await tenant(one, { tier: 'subscriber' });
    for (const t of apps()) expect((await client(t, g.key).get('/v1/artworks')).status).toBe(200);
    // Written as the CLI of another process writes it: no notice reaches these instances.
    await one.handle.db.updateTable('api_keys').set({ revoked_at: new Date().toISOString() }).where('prefix', '=', g.prefix).execute();
    const took = await refusedWithin(g.key, 401);
    for (const ms of took) expect(ms).toBeLessThan(1000);
  });

  test('an entity paused by another process is refused on both instances within a second', async () => {
    const g = await tenant(one, { tier: 'subscriber' });
    const other = await keyFor(one, g.entityId, { tier: 'subscriber' });
    for (const t of apps()) {
      expect((await client(t, g.key).get('/v1/artworks')).status).toBe(200);
      expect((await client(t, other.key).get('/v1/artworks')).status).toBe(200);
    }
    await one.handle.db.updateTable('entities').set({ paused_at: new Date().toISOString() }).where('id', '=', g.entityId).execute();
    const took = await refusedWithin(other.key, 403);
    for (const ms of took) expect(ms).toBeLessThan(1000);
  });
});
