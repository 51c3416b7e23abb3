import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { client, tenant, type Tenant, type TestApp } from '../helpers.js';
import { signedIn, uploadToImport } from '../support/console.js';
import { csv, fileServer, type FileServer } from '../support/file-server.js';
import { startApp } from '../support/app.js';

/**
 * One write path (docs/architecture.md, The write path): the same write sent through each way in —
 * a POST, a PUT, a batch, the console's import, a feed run, a restore — records the same changelog
 * entries, jobs and webhook messages (ids, times and `source` aside), with and without a webhook
 * endpoint, on both dialects. Each way writes to a catalog of its own.
 */

let t: TestApp;
let base: string;
let files: FileServer;

beforeAll(async () => {
  files = await fileServer();
  // Nothing runs the queued jobs: they stay as the writes left them.
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '0', WEBHOOK_CONCURRENCY: '0' });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await files?.close();
});

const WORK = {
  title: 'Blue Hour', artist_name: 'Ada Berg', creation_year: 2019, external_id: 'A1', price: 4500, currency: 'EUR',
  image_url: 'https://images.example/blue-hour.jpg',
};
const CHANGED = { ...WORK, price: 5200 };
const HEADER = 'title;artist_name;creation_year;external_id;price;currency;image_url';
const row = (work: typeof WORK) => [work.title, work.artist_name, work.creation_year, work.external_id, work.price, work.currency, work.image_url].join(';');

type Way = (gallery: Tenant, work: typeof WORK) => Promise<void>;

const expectOk = (status: number) => expect(status).toBeLessThan(300);

const post: Way = async (gallery, work) => expectOk((await client(t, gallery.key).post('/v1/artworks', work)).status);
const batch: Way = async (gallery, work) => expectOk((await client(t, gallery.key).post('/v1/artworks/batch', { items: [work] })).status);

const consoleImport: Way = async (gallery, work) => {
  const editor = await signedIn(t, base, gallery.entityId, 'editor');
  const uploaded = await uploadToImport(editor, 'works.csv', Buffer.from(csv(HEADER, row(work))));
  const id = /\/console\/import\/([\w-]+)$/.exec(uploaded.location ?? '')![1]!;
  const columns = Object.fromEntries(HEADER.split(';').map((field, i) => [`column_${i}`, field]));
  expect((await editor.post(`/console/import/${id}/columns`, columns)).status).toBe(303);
  expect((await editor.post(`/console/import/${id}/apply`)).status).toBe(303);
  for (let i = 0; i < 200; i++) {
    if (!(await editor.get(`/console/import/${id}/progress`)).text.includes('id="import-bar"')) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the import did not finish');
};

const feeds = new Map<number, number>();
const feedRun: Way = async (gallery, work) => {
  const path = `/works-${gallery.entityId}.csv`;
  files.set(path, csv(HEADER, row(work)));
  let feedId = feeds.get(gallery.entityId);
  if (feedId === undefined) {
    const created = await client(t, gallery.key).post('/v1/feeds', { url: files.url(path), kind: 'artworks' });
    expect(created.status).toBe(201);
    feeds.set(gallery.entityId, (feedId = created.body.id as number));
  }
  await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${feedId}`}`.execute(t.handle.db);
  await runFeed({ db: t.handle.db, fetch: feedFetcher(() => true) }, feedId);
};

const artworkId = async (gallery: Tenant) => ((await client(t, gallery.key).get('/v1/artworks')).body.artworks[0] as { id: number }).id;

const put: Way = async (gallery, work) => {
  const { title, artist_name, creation_year, external_id, image_url, ...changed } = work;
  expectOk((await client(t, gallery.key).put(`/v1/artworks/${await artworkId(gallery)}`, changed)).status);
};

/** Where each compared write starts from: nothing, or the work as first posted (then deleted, for a restore). */
type Setup = (gallery: Tenant, own: (work: typeof WORK) => typeof WORK) => Promise<void>;
const nothing: Setup = async () => {};
const posted: Setup = (gallery, own) => post(gallery, own(WORK));
const trashed = new Map<number, number>();
const postedAndDeleted: Setup = async (gallery, own) => {
  await posted(gallery, own);
  const id = await artworkId(gallery);
  expectOk((await client(t, gallery.key).delete(`/v1/artworks/${id}`)).status);
  trashed.set(gallery.entityId, id);
};
const restore: Way = async (gallery) => expectOk((await client(t, gallery.key).post(`/v1/artworks/${trashed.get(gallery.entityId)}/restore`, {})).status);

interface Recorded {
  changes: Array<{ entity_type: string; action: string; field_changes: unknown; in_run: boolean }>;
  messages: Array<{ type: string; record_kind: string; of_the_work: boolean; to_the_endpoint: boolean; status: string; attempts: number }>;
  jobs: Array<{ kind: string; key: string; grp: string | null; payload: string | null; attempts: number; due_when_written: boolean }>;
}

/**
 * What one way wrote on a new catalog after `setup`: its entries (an artist's aside), the messages of
 * its changes (a feed run's own `feed.run.completed` aside) and their jobs, ids and times as names.
 */
async function recordedBy(setup: Setup, way: Way, work: typeof WORK, hooked: boolean): Promise<Recorded> {
  const gallery = await tenant(t);
  const api = client(t, gallery.key);
  const endpoint = hooked ? (await api.post('/v1/webhooks', { url: 'https://hooks.example/catalog', events: ['*'] })).body.id as number : 0;
  // Each catalog its own image URL: a URL known already has its job already (store/images.ts).
  const image = `https://images.example/${gallery.entityId}.jpg`;
  const own = (w: typeof WORK) => ({ ...w, image_url: image });
  await setup(gallery, own);
  // The write comes at least a millisecond later: `last_synced_at` is in an update's changes only when its
  // time differs, and a fast batch could otherwise land in the setup's own millisecond.
  await new Promise((resolve) => setTimeout(resolve, 3));
  const db = t.handle.db;
  const before = {
    change: Number((await sql<{ n: number | null }>`select max(id) as n from changelog where owner_id = ${gallery.entityId}`.execute(db)).rows[0]?.n ?? 0),
    message: Number((await sql<{ n: number | null }>`select max(seq) as n from webhook_messages where owner_id = ${gallery.entityId}`.execute(db)).rows[0]?.n ?? 0),
  };
  await way(gallery, own(work));
  const id = await artworkId(gallery);
  const changes = (await sql<{ id: number; entity_type: string; action: string; field_changes: string; run_id: number | null; created_at: string }>`
    select * from changelog where owner_id = ${gallery.entityId} and id > ${before.change} and entity_type <> 'artist' order by id`.execute(db)).rows;
  const messages = (await sql<{ seq: number; id: string; type: string; record_kind: string; record_id: number; endpoint_id: number; change_id: number; status: string; attempts: number; created_at: string }>`
    select * from webhook_messages where owner_id = ${gallery.entityId} and seq > ${before.message} and change_id is not null order by seq`.execute(db)).rows;
  const jobs = (await sql<{ kind: string; key: string; grp: string | null; payload: string | null; attempts: number; due_at: string }>`
    select * from jobs where entity_id = ${gallery.entityId} and kind in ('image', 'webhook') order by kind, key`.execute(db)).rows;
  const messageName = new Map(messages.map((message, i) => [message.id, `message ${i}`]));
  const seqName = new Map(messages.map((message, i) => [Number(message.seq), `message ${i}`]));
  const writtenAt = new Set(changes.map((change) => change.created_at));
  return {
    changes: changes.map((change) => ({
      entity_type: change.entity_type, action: change.action, in_run: change.run_id !== null,
      field_changes: JSON.parse(change.field_changes.replaceAll(image, 'the image'), (key, value: unknown) => (key.endsWith('_at') ? 'a time' : value)),
    })),
    messages: messages.map((message) => ({
      type: message.type, record_kind: message.record_kind, of_the_work: Number(message.record_id) === id,
      to_the_endpoint: Number(message.endpoint_id) === endpoint, status: message.status, attempts: Number(message.attempts),
    })),
    // A delivery job of a message this write recorded, and the image's job (a restored work's was queued by its first POST).
    jobs: jobs.filter((job) => job.kind === 'image' || messageName.has(job.key)).map((job) => ({
      kind: job.kind, key: messageName.get(job.key) ?? job.key.replace(image, 'the image'), grp: job.grp === null ? null : job.grp === String(endpoint) ? 'the endpoint' : job.grp,
      payload: job.payload === null ? null : seqName.get((JSON.parse(job.payload) as { seq: number }).seq) ?? job.payload,
      attempts: Number(job.attempts), due_when_written: job.kind === 'image' || writtenAt.has(job.due_at),
    })),
  };
}

const RUNS = new Set<Way>([consoleImport, feedRun]);
const sameBut = (recorded: Recorded, way: Way): Recorded => ({
  ...recorded, changes: recorded.changes.map((change) => ({ ...change, in_run: RUNS.has(way) })),
});

describe.each([false, true])('with a webhook endpoint: %s', (hooked) => {
  test('a new work: POST, batch, console import, feed run and restore record the same entries, jobs and messages', async () => {
    const expected = await recordedBy(nothing, post, WORK, hooked);
    expect(expected.changes).toEqual([expect.objectContaining({ entity_type: 'artwork', action: 'create', in_run: false })]);
    expect(expected.messages).toHaveLength(hooked ? 1 : 0);
    expect(expected.jobs.map((job) => job.kind)).toEqual(hooked ? ['image', 'webhook'] : ['image']);
    for (const [name, setup, way] of [
      ['batch', nothing, batch], ['console import', nothing, consoleImport], ['feed run', nothing, feedRun], ['restore', postedAndDeleted, restore],
    ] as const) {
      expect({ name, ...(await recordedBy(setup, way, WORK, hooked)) }).toEqual({ name, ...sameBut(expected, way) });
    }
  }, 60_000);

  test('a changed price: PUT, a re-post, batch, console import and feed run record the same entries, jobs and messages', async () => {
    const expected = await recordedBy(posted, put, CHANGED, hooked);
    expect(expected.changes).toEqual([{ entity_type: 'artwork', action: 'update', field_changes: { price: { old: 4500, new: 5200 }, last_synced_at: 'a time' }, in_run: false }]);
    expect(expected.messages.map((message) => message.type)).toEqual(hooked ? ['artwork.updated'] : []);
    for (const [name, setup, way] of [
      ['re-post', posted, post], ['batch', posted, batch], ['console import', posted, consoleImport], ['feed run', posted, feedRun],
    ] as const) {
      // A feed's first run posted the work: its second writes the change.
      const first: Setup = way === feedRun ? (gallery, own) => feedRun(gallery, own(WORK)) : setup;
      expect({ name, ...(await recordedBy(first, way, CHANGED, hooked)) }).toEqual({ name, ...sameBut(expected, way) });
    }
  }, 60_000);
});
