import type { LookupAddress } from 'node:dns';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';

/**
 * DNS rebinding against the one outgoing fetcher (src/fetch/fetch.ts): a gallery's name answers a
 * public address once, then a private one. The address checked must be the address connected to, so
 * the private server is never reached, whatever the name answers when.
 *
 * Two loopback addresses stand in for the two sides: 127.0.0.2 is "public" (the only one the test's
 * policy allows), 127.0.0.1 "private"; both listen on the same port, as one name's two answers would.
 */

const NAME = 'gallery.example';
let answers: string[] = [];
const lookups: string[] = [];

// The resolver the fetcher's connections use: `gallery.example` answers the next of `answers`; every other name
// goes to the real one (a later file of this worker may get this module graph).
vi.mock('node:dns', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:dns')>();
  const lookup = ((hostname: string, options: object, callback: (error: Error | null, addresses: LookupAddress[]) => void) => {
    if (hostname !== NAME) return actual.lookup(hostname, options, callback as never);
    const address = answers.shift() ?? '127.0.0.1';
    lookups.push(address);
    process.nextTick(() => callback(null, [{ address, family: 4 }]));
  }) as typeof actual.lookup;
  return { ...actual, lookup, default: { ...actual, lookup } };
});
// A worker that ran other files has the real module cached (vitest.config.ts: isolate false): import afresh.
vi.resetModules();
const { FetchFailed, fetchUrl, KeptConnections } = await import('../../src/fetch/index.js');

const reached = { public: 0, private: 0 };
let servers: Server[] = [];
let port = 0;

function serve(side: 'public' | 'private'): Server {
  return createServer((request, response) => {
    reached[side]++;
    if (request.url === '/moved') return response.writeHead(302, { location: `http://${NAME}:${port}/feed.csv` }).end();
    response.writeHead(200).end(`${side} answer`);
  });
}

async function listen(server: Server, host: string, at: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(at, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  // The same port on both addresses: a port free on 127.0.0.2 may be taken on 127.0.0.1, so try a few.
  for (let attempt = 0; attempt < 20 && servers.length < 2; attempt++) {
    const outside = serve('public');
    const inside = serve('private');
    port = await listen(outside, '127.0.0.2', 0);
    try {
      await listen(inside, '127.0.0.1', port);
      servers = [outside, inside];
    } catch {
      await new Promise((resolve) => outside.close(resolve));
    }
  }
  expect(servers).toHaveLength(2);
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const request = { maxRedirects: 3, maxBytes: 1024 * 1024, timeoutMs: 10_000, allowAddress: (address: string) => address === '127.0.0.2' };

test('a name that answers a public address, then a private one, reaches the public server once and the private one never', async () => {
  answers = ['127.0.0.2', '127.0.0.1'];
  lookups.length = 0;
  Object.assign(reached, { public: 0, private: 0 });
  const first = await fetchUrl({ ...request, url: `http://${NAME}:${port}/feed.csv` });
  expect(first.body.toString()).toBe('public answer');
  await expect(fetchUrl({ ...request, url: `http://${NAME}:${port}/feed.csv` })).rejects.toThrow(new FetchFailed('address not allowed'));
  // One lookup per connection: the answer checked is the answer connected to, never a check's own earlier one.
  expect(lookups).toEqual(['127.0.0.2', '127.0.0.1']);
  expect(reached).toEqual({ public: 1, private: 0 });
});

test('a redirect to the same name, which now answers a private address, is refused at its own connection', async () => {
  answers = ['127.0.0.2', '127.0.0.1'];
  lookups.length = 0;
  Object.assign(reached, { public: 0, private: 0 });
  await expect(fetchUrl({ ...request, url: `http://${NAME}:${port}/moved` })).rejects.toThrow(new FetchFailed('address not allowed'));
  expect(lookups).toEqual(['127.0.0.2', '127.0.0.1']);
  expect(reached).toEqual({ public: 1, private: 0 });
});

test('with kept connections, a name that now answers a private address reaches it through no new connection; the kept one stays on the public server', async () => {
  answers = ['127.0.0.2', '127.0.0.1'];
  lookups.length = 0;
  Object.assign(reached, { public: 0, private: 0 });
  const connections = new KeptConnections(request.allowAddress, { perOrigin: 4, idleMs: 4_000, origins: 8 });
  const kept = { ...request, allowAddress: undefined, connections, url: `http://${NAME}:${port}/feed.csv` };
  try {
    expect((await fetchUrl(kept)).body.toString()).toBe('public answer');
    // Two at once: one reuses the kept connection, the other opens one, whose lookup answers the private address.
    const [reused, opened] = await Promise.allSettled([fetchUrl(kept), fetchUrl(kept)]);
    expect(reused).toMatchObject({ status: 'fulfilled', value: { status: 200 } });
    expect(opened).toMatchObject({ status: 'rejected', reason: new FetchFailed('address not allowed') });
    expect(lookups).toEqual(['127.0.0.2', '127.0.0.1']);
    expect(reached).toEqual({ public: 2, private: 0 });
  } finally {
    connections.close();
  }
});
