import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { transaction } from '../../src/db/run.js';
import { statement, type Params } from '../../src/db/statement.js';
import { all } from '../../src/db/work.js';
import { recordWrite } from '../../src/store/changelog.js';
import { client, DIALECT, startApp, tenant, type TestApp, type Tenant } from '../helpers.js';
import { imageProcessed } from '../support/images.js';

/**
 * An image URL let go by one record while another record takes it up at the same moment: the URL's
 * job (and the state of its image) must survive, on both dialects (docs/api.md, Images: one job per URL in use).
 */

let t: TestApp;
let gallery: Tenant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_SUBSCRIBER: '1000000' });
  gallery = await tenant(t);
  api = client(t, gallery.key);
});
afterAll(async () => { await t?.close(); });

/** Two artworks: the first uses `url`, whose image is ready; the second has no image yet. */
async function twoArtworks(url: string): Promise<[number, number]> {
  const first = await api.post('/v1/artworks', { title: `Holder of ${url}`, image_url: url });
  const second = await api.post('/v1/artworks', { title: `Taker of ${url}` });
  expect([first.status, second.status]).toEqual([201, 201]);
  await imageProcessed(t.handle.db, url);
  return [first.body.id, second.body.id];
}

/** The gallery as the writer of a record (store/changelog.ts, recordWrite: the write path that queues and releases images). */
const actor = () => ({ entityId: gallery.entityId, entitySlug: gallery.slug, source: 'test' });

const jobOf = (url: string) => t.handle.db.selectFrom('images')
  .leftJoin('jobs', (join) => join.onRef('jobs.key', '=', 'images.url').on('jobs.kind', '=', 'image'))
  .select(['images.status', 'jobs.due_at']).where('images.url', '=', url).executeTakeFirst();

async function imageOf(id: number) {
  return (await api.get(`/v1/artworks/${id}`)).body.image;
}

test('swapped at the same moment through the API many times, the URL keeps its job and its ready image', async () => {
  const outcomes = new Set<string>();
  for (let round = 0; round < 20; round++) {
    const url = `https://gallery.example/swap-${round}.jpg`;
    const [holder, taker] = await twoArtworks(url);
    const release = () => api.put(`/v1/artworks/${holder}`, { image_url: null });
    const take = () => api.put(`/v1/artworks/${taker}`, { image_url: url });
    // Sent in both orders, at once.
    let released, taken;
    if (round % 2 === 0) [released, taken] = await Promise.all([release(), take()]);
    else [taken, released] = await Promise.all([take(), release()]);
    expect([released.status, taken.status]).toEqual([200, 200]);
    // Taken up first: the release keeps the ready job. Released first: the taker queued a new one.
    // Never no job at all (a record's URL no worker would ever fetch, shown pending for good).
    const job = await jobOf(url);
    expect(job, `round ${round}`).toBeDefined();
    if (job!.status === 'pending') expect(job!.due_at, `round ${round}`).not.toBeNull();
    else expect(await imageOf(taker), `round ${round}`).toMatchObject({ status: 'ready', width: 2400 });
    outcomes.add(job!.status);
  }
  // Both orders happened.
  expect([...outcomes].sort()).toEqual(['pending', 'ready']);
});

test('a URL let go by its only record is released: a record taking it up later starts a new job', async () => {
  const url = 'https://gallery.example/let-go.jpg';
  const [holder, taker] = await twoArtworks(url);
  expect((await api.put(`/v1/artworks/${holder}`, { image_url: null })).status).toBe(200);
  expect(await jobOf(url)).toBeUndefined();
  expect((await api.put(`/v1/artworks/${taker}`, { image_url: url })).body.image).toMatchObject({ status: 'pending' });
});

// PostgreSQL runs the two transactions at once; here they interleave at the worst moment, held there.
describe.runIf(DIALECT === 'postgres')('interleaved transactions on PostgreSQL', () => {
  const GATE = 742_025;
  const setImageUrl = statement((db, p: Params<{ id: number; url: string | null }>) => db.updateTable('artworks')
    .set({ image_url: p.url }).where('id', '=', p.id).returning('id'));
  const waitAtGate = statement((db) => db.selectNoFrom((eb) => eb.fn<unknown>('pg_advisory_xact_lock', [eb.val(GATE)]).as('gate')));

  let gate: pg.Client;
  beforeAll(async () => {
    gate = new pg.Client({ connectionString: t.config.databaseUrl });
    await gate.connect();
  });
  afterAll(async () => { await gate?.end(); });

  test('a release meeting a record that took the URL up but has not committed yet waits for it, and keeps the job', async () => {
    const url = 'https://gallery.example/interleaved.jpg';
    const [holder, taker] = await twoArtworks(url);
    const at = new Date().toISOString();
    await gate.query('select pg_advisory_lock($1)', [GATE]);
    // The taker sets the URL and queues it, then stays open (at the gate) before its commit.
    const taking = transaction(t.handle.db, function* () {
      yield* all(setImageUrl, { id: taker, url });
      yield* recordWrite(t.handle.db, actor(), [{ entityType: 'artwork', recordId: taker, action: 'update', fieldChanges: { image_url: { old: null, new: url } } }], {}, at);
      yield* all(waitAtGate, {});
    });
    const waiting = async () => (await gate.query<{ n: number }>(`select count(*)::int as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0]!.n;
    while (await waiting() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // The holder lets the URL go meanwhile: the URL's job must still be there once both have committed.
    let releaseDone = false;
    const releasing = transaction(t.handle.db, function* () {
      yield* all(setImageUrl, { id: holder, url: null });
      yield* recordWrite(t.handle.db, actor(), [{ entityType: 'artwork', recordId: holder, action: 'update', fieldChanges: { image_url: { old: url, new: null } } }], {}, at);
    }).then(() => { releaseDone = true; });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const releasedBeforeTakerCommitted = releaseDone;
    await gate.query('select pg_advisory_unlock($1)', [GATE]);
    await Promise.all([taking, releasing]);
    expect(releasedBeforeTakerCommitted).toBe(false);
    expect(await jobOf(url)).toMatchObject({ status: 'ready' });
    expect(await imageOf(taker)).toMatchObject({ status: 'ready', width: 2400 });
    expect(await imageOf(holder)).toBeNull();
  });
});
