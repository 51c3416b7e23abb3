import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { DIALECT, migratedDatabase, type FreshDatabase } from '../helpers.js';

/**
 * A start on a PostgreSQL server that is slow to accept (starting, or busy creating other databases: a shared CI
 * machine) tries the connection again instead of failing at the pool's short connect deadline, which exists so
 * that requests get a fast 503. A server that refuses still fails at once.
 */

/** A TCP proxy to PostgreSQL that holds the first `silent` connections without a byte, then forwards the rest. */
async function slowProxy(target: URL, silent: number): Promise<{ port: number; held: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let seen = 0;
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (++seen <= silent) return;
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    held: () => Math.min(seen, silent),
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

describe.skipIf(DIALECT !== 'postgres')('a start on a slow PostgreSQL server', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function through(silent: number): Promise<{ url: string; held: () => number }> {
    const database: FreshDatabase = await migratedDatabase();
    cleanups.push(() => database.drop());
    const target = new URL(database.url);
    const proxy = await slowProxy(target, silent);
    cleanups.push(proxy.close);
    const url = new URL(database.url);
    url.host = `127.0.0.1:${proxy.port}`;
    return { url: url.toString(), held: proxy.held };
  }

  test('tries a connection that timed out again and migrates', async () => {
    const { url, held } = await through(2);
    const handle = connect(url, { connectTimeoutMs: 300 });
    cleanups.push(() => handle.close());
    await expect(migrateToLatest(handle)).resolves.toEqual([]);
    expect(held()).toBe(2);
  });

  test('gives up after a few tries with the driver\'s words', async () => {
    const { url } = await through(100);
    const handle = connect(url, { connectTimeoutMs: 200 });
    cleanups.push(() => handle.close());
    await expect(migrateToLatest(handle)).rejects.toThrow(/^cannot open the database: .*timeout/);
  });

  test('fails at once when the server refuses', async () => {
    const closed = await slowProxy(new URL('postgres://127.0.0.1:5432'), 0);
    await closed.close();
    const handle = connect(`postgres://postgres@127.0.0.1:${closed.port}/nothing`, { connectTimeoutMs: 300 });
    cleanups.push(() => handle.close());
    const started = Date.now();
    await expect(migrateToLatest(handle)).rejects.toThrow(/^cannot open the database: .*ECONNREFUSED/);
    // No retry for a refusal: well under the 1.5 s the retries of a timeout wait between them.
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});
