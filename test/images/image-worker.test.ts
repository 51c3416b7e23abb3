import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { afterAll, afterEach, beforeAll, expect, test, vi } from 'vitest';
import type { ImageStore } from '../../src/images/store/index.js';
import type { TestApp, Tenant } from '../helpers.js';

/** The worker's lease: a job whose claim is lost is given up, its result never recorded. */

// Renewals through the real statement unless a test makes them fail (a database out of reach).
vi.mock('../../src/store/jobs.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/store/jobs.js')>();
  return { ...actual, renewJob: vi.fn(actual.renewJob) };
});
// A file run in a worker that other files used before (vitest.config.ts: isolate false) finds the real
// module in its cache, imported by the worker and the app; a fresh module graph imports the mock above.
vi.resetModules();
const { imageJob } = await import('../../src/images/worker.js');
const { JobRunner } = await import('../../src/jobs/runner.js');
const jobs = await import('../../src/store/jobs.js');
const { client, startApp, tenant } = await import('../helpers.js');

vi.setConfig({ testTimeout: 60_000 });

/** A gallery's server that holds every answer until the test lets it go. */
let origin: Server;
let base: string;
const held: ServerResponse[] = [];
let photo: Buffer;
let t: TestApp;
let gallery: Tenant;

beforeAll(async () => {
  photo = await sharp({ create: { width: 640, height: 480, channels: 3, background: { r: 200, g: 30, b: 90 } } }).jpeg().toBuffer();
  origin = createServer((_request, response) => { held.push(response); });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  t = await startApp({ RATE_LIMIT_SUBSCRIBER: '1000000' });
  gallery = await tenant(t);
});

afterAll(async () => {
  for (const response of held) response.destroy();
  origin?.closeAllConnections();
  await new Promise((resolve) => origin?.close(resolve));
  await t?.close();
});

// mockReset gives the mock back its own implementation: the real statement of the module graph the
// worker and the app use (an importActual copy is another graph, whose statements know no database).
afterEach(() => {
  vi.mocked(jobs.renewJob).mockReset();
});

/** Lets every held request go, answered with the photo (a request the worker gave up is gone already). */
function answerHeld(): void {
  for (const response of held.splice(0)) {
    if (!response.destroyed) response.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
  }
}

/** A store in memory that remembers every put. */
function memoryStore(): ImageStore & { puts: string[] } {
  const objects = new Map<string, Buffer>();
  const puts: string[] = [];
  return {
    puts,
    has: async (name) => objects.has(name),
    put: async (name, bytes) => { puts.push(name); objects.set(name, bytes); },
    get: async () => null,
    head: async (name) => (objects.has(name) ? { size: objects.get(name)!.length, contentType: 'image/jpeg' } : null),
    delete: async (name) => { objects.delete(name); },
    list: async function* () { yield* objects.keys(); },
    close: async () => undefined,
  };
}

function startWorker(store: ImageStore) {
  const warnings: Array<{ key?: string; message: string }> = [];
  const log = { info: () => undefined, warn: (object: object, message: string) => warnings.push({ ...(object as { key?: string }), message }) };
  // Leases short enough to pass within a test, long enough that a loaded machine's late timers do not let one
  // pass while renewals work (five lost leases give a job up as one that crashes its process).
  const runner = new JobRunner({ db: t.handle.db, log, leaseMs: 1_500, pollMs: 20 });
  runner.register(imageJob({ db: t.handle.db, store, concurrency: 1, fetch: { maxBytes: 1e7, timeoutMs: 30_000, allowAddress: () => true }, log })).start();
  const worker = { get processed() { return runner.ended.get('image') ?? 0; }, close: (graceMs?: number) => runner.close(graceMs) };
  return { worker, warnings };
}

async function until(check: () => boolean | Promise<boolean>, ms = 20_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

const row = (url: string) => t.handle.db.selectFrom('images').selectAll().where('url', '=', url).executeTakeFirstOrThrow();

test('a job whose claim another process took over is given up: nothing stored, no outcome recorded, a warning logged', async () => {
  const url = `${base}/taken-over.jpg`;
  expect((await client(t, gallery.key).post('/v1/artworks', { title: 'Taken Over', image_url: url })).status).toBe(201);
  const store = memoryStore();
  const { worker, warnings } = startWorker(store);
  try {
    expect(await until(() => held.length === 1)).toBe(true);
    // The lease passed (a stalled process) and another process claimed the job, as takeJob does.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    await t.handle.db.updateTable('jobs').set({ claim: 'another-process', due_at: later }).where('kind', '=', 'image').where('key', '=', url).execute();
    const noticed = await until(() => warnings.length > 0, 5_000);
    answerHeld();
    await until(() => worker.processed > 0, 3_000);
    await worker.close(20_000);
    expect(noticed).toBe(true);
    expect(warnings).toEqual([{ kind: 'image', key: url, err: undefined, message: expect.stringMatching(/^job lost \(another process took it over.*its result is dropped$/) }]);
    expect(store.puts).toEqual([]);
    expect(worker.processed).toBe(0);
    expect(await row(url)).toMatchObject({ status: 'pending', hash: null });
    expect(await t.handle.db.selectFrom('jobs').select(['claim', 'due_at']).where('key', '=', url).executeTakeFirst()).toEqual({ claim: 'another-process', due_at: later });
  } finally {
    await worker.close(0);
  }
});

test('a job whose lease ran out while renewals failed (database out of reach) is given up, then taken again and finished once', async () => {
  const url = `${base}/unrenewed.jpg`;
  expect((await client(t, gallery.key).post('/v1/artworks', { title: 'Unrenewed', image_url: url })).status).toBe(201);
  const store = memoryStore();
  const { worker, warnings } = startWorker(store);
  try {
    expect(await until(() => held.length === 1)).toBe(true);
    vi.mocked(jobs.renewJob).mockRejectedValue(new Error('connection terminated unexpectedly'));
    const lost = await until(() => warnings.some((w) => w.message.startsWith('job lost')), 5_000);
    expect(lost).toBe(true);
    // First the failed renewals while the lease held (tried again), then the loss once it had passed.
    expect(warnings[0]).toMatchObject({ key: url, message: 'job lease not renewed; trying again' });
    expect(warnings.at(-1)).toMatchObject({ key: url, message: 'job lost (its lease ran out while renewals failed); its result is dropped' });
    expect(store.puts).toEqual([]);
    // The database is back: the job is claimed again once its lease has passed, its lease renewed while
    // its image is held, and finished.
    const lostAt = warnings.length;
    vi.mocked(jobs.renewJob).mockReset();
    expect(await until(() => held.length === 2)).toBe(true);
    const renewed = () => vi.mocked(jobs.renewJob).mock.settledResults.some((result) => result.type === 'fulfilled' && result.value === true);
    expect(await until(renewed, 10_000)).toBe(true);
    answerHeld();
    expect(await until(() => worker.processed === 1, 40_000)).toBe(true);
    expect(warnings.slice(lostAt)).toEqual([]);
    expect(await row(url)).toMatchObject({ status: 'ready', error: null });
    expect(await t.handle.db.selectFrom('jobs').select('key').where('key', '=', url).execute()).toEqual([]);
    expect(store.puts).toHaveLength(6);
  } finally {
    await worker.close(0);
  }
});
