import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, DIALECT, startApp, tenant, type TestApp } from '../helpers.js';

/**
 * POST /v1/artworks on PostgreSQL as the driver sees it (docs/performance.md, Writes): a new work is
 * one statement, a re-post two (the match found, then updated), a further re-post of the same work by
 * this process one, and a new work's answer is a few columns, not the artwork's. Every statement the pg client sends while a POST runs is counted,
 * BEGIN and COMMIT included, but the API key's own checks.
 */

interface Sent { text: string; columns: number }
type Spied = {
  text: string;
  sent?: Sent;
  handleRowDescription: (this: Spied, message: { fields: unknown[] }) => void;
  submit: (this: Spied, connection: unknown) => unknown;
};

let t: TestApp;
/**
 * The POST's own statements: the test client calls the app in this process (app.inject), so every
 * statement its handler sends runs in the async context `counted` opens. The job queue's idle slots
 * (undo, sweeps) poll every second on the same pool, and a job's statements, a take's transaction or
 * the key cache's recheck run in contexts of their own; they are never counted, whatever their shape.
 */
const posting = new AsyncLocalStorage<Sent[]>();
const proto = pg.Query.prototype as unknown as Spied;
const { submit, handleRowDescription } = proto;

beforeAll(async () => {
  // Nothing runs the queued jobs: the only statements are the POSTs'.
  t = await startApp({ FEED_CONCURRENCY: '0', WEBHOOK_CONCURRENCY: '0', IMAGE_CONCURRENCY: '0' });
  proto.submit = function (connection) {
    posting.getStore()?.push((this.sent = { text: this.text, columns: 0 }));
    return submit.call(this, connection);
  };
  proto.handleRowDescription = function (message) {
    if (this.sent) this.sent.columns = message.fields.length;
    return handleRowDescription.call(this, message);
  };
});
afterAll(async () => {
  proto.submit = submit;
  proto.handleRowDescription = handleRowDescription;
  await t?.close();
});

/** The statements one POST sends, and its answer. */
async function counted(api: ReturnType<typeof client>, body: object) {
  const sent: Sent[] = [];
  const answer = await posting.run(sent, () => api.post('/v1/artworks', body));
  // The key's own checks (src/http/plugins/auth.ts, its cache's revalidation) come when they are due, not per POST.
  return { answer, statements: sent.filter((statement) => !statement.text.includes('"api_keys"')) };
}

/**
 * The common case: an artist this process has seen committed (store/artists.ts, `knownArtist`). The
 * first post creates the artist; the second (the general way) finds it and remembers it. The last is a
 * new work, so that the entity's next POST is taken for a new one (store/stored-artworks.ts, `repostLikely`).
 */
async function warmUp(api: ReturnType<typeof client>) {
  for (const created of [true, false]) expect((await api.post('/v1/artworks', { title: 'Warm-up', artist_name: 'Ada Berg' })).body.created).toBe(created);
  expect((await api.post('/v1/artworks', { title: 'Warm-up, new', artist_name: 'Ada Berg' })).body.created).toBe(true);
}

/** An enabled webhook endpoint written straight into the database, as another process would: this one has not seen it. */
async function endpointBehindTheBack(entityId: number): Promise<number> {
  return (await sql<{ id: number }>`insert into webhook_endpoints (owner_id, url, events, description, enabled, secret, created_at, updated_at)
    values (${entityId}, 'https://hooks.example/in', '*', '', 1, 'whsec_test', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')
    returning id`.execute(t.handle.db)).rows[0]!.id;
}

/** The entity's webhook messages, in the order they were written. */
const messagesOf = async (entityId: number) => (await sql<{ type: string; record_id: number }>`select type, record_id from webhook_messages
  where owner_id = ${entityId} order by seq`.execute(t.handle.db)).rows;

describe.runIf(DIALECT === 'postgres')('POST /v1/artworks on PostgreSQL, at the driver', () => {
  const work = {
    title: 'Driver Study', artist_name: 'Ada Berg', creation_year: 2019, price: 9_007_199_254_740, currency: 'EUR',
    height: 33.3, width: 0.1, depth: 0.07, dimension_unit: 'cm', edition_size: 12, edition_number: 3, description: 'Ünïcode — “quoted” \\ text',
  };

  test('a new work: one statement, whose answer has a few columns; a re-post: two, the next one, and the values come back as stored', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    await warmUp(api);

    const created = await counted(api, work);
    expect(created.answer.status).toBe(201);
    expect(created.statements.map((s) => s.text.slice(0, 60))).toHaveLength(1);
    expect(created.statements[0]!.columns).toBeLessThanOrEqual(5);

    const reposted = await counted(api, work);
    expect(reposted.answer.body).toMatchObject({ id: created.answer.body.id, created: false });
    expect(reposted.statements.map((s) => s.text.slice(0, 60))).toHaveLength(2);
    const again = await counted(api, work);
    expect(again.answer.body).toMatchObject({ id: created.answer.body.id, created: false });
    expect(again.statements.map((s) => s.text.slice(0, 60))).toHaveLength(1);
    expect((await api.get(`/v1/artworks/${created.answer.body.id}`)).body).toMatchObject(work);

    // Unchanged but for its sync time: the re-post's changelog entry records that alone.
    const changes = await api.get('/v1/changelog?limit=100');
    const entries = changes.body.changes.filter((entry: { entity_type: string; entity_id: number }) =>
      entry.entity_type === 'artwork' && entry.entity_id === created.answer.body.id);
    expect(entries.map((entry: { action: string }) => entry.action)).toEqual(['create', 'update', 'update']);
    expect(Object.keys(entries[1].field_changes)).toEqual(['last_synced_at']);
    expect(Object.keys(entries[2].field_changes)).toEqual(['last_synced_at']);
  });

  test('a work this process does not hold, once the entity\'s last POST was a re-post: an unchanged re-post is one statement, recording the stored sync time; a changed one two; a new work two, then one', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    await warmUp(api);
    // Written by a batch: this process holds neither work (store/stored-artworks.ts keeps re-posted ones).
    const other = { ...work, title: 'Driver Study II', price: 10 };
    const batch = await api.post('/v1/artworks/batch', { items: [work, other] });
    const [stored, storedOther] = batch.body.results;
    const synced = (await api.get(`/v1/artworks/${stored.id}`)).body.last_synced_at;
    expect((await api.post('/v1/artworks', { title: 'Warm-up', artist_name: 'Ada Berg' })).body.created).toBe(false);

    const unchanged = await counted(api, work);
    expect(unchanged.answer.body).toMatchObject({ id: stored.id, created: false });
    expect(unchanged.statements).toHaveLength(1);
    expect((await api.get(`/v1/artworks/${stored.id}`)).body).toMatchObject({ ...work, last_synced_at: unchanged.answer.body.last_synced_at });
    const changes = (await api.get('/v1/changelog?limit=100')).body.changes;
    expect(changes.at(-1)).toMatchObject({
      entity_id: stored.id, action: 'update', field_changes: { last_synced_at: { old: synced, new: unchanged.answer.body.last_synced_at } },
    });
    expect(Object.keys(changes.at(-1).field_changes)).toEqual(['last_synced_at']);
    expect((await counted(api, work)).statements).toHaveLength(1);

    const changed = await counted(api, { ...other, price: 20 });
    expect(changed.answer.body).toMatchObject({ id: storedOther.id, created: false });
    expect(changed.statements).toHaveLength(2);
    expect((await api.get('/v1/changelog?limit=100')).body.changes.at(-1).field_changes.price).toEqual({ old: 10, new: 20 });

    const created = await counted(api, { ...work, title: 'Driver Study III' });
    expect(created.answer.body.created).toBe(true);
    expect(created.statements).toHaveLength(2);
    expect((await counted(api, { ...work, title: 'Driver Study IV' })).statements).toHaveLength(1);
    const stats = (await api.get('/v1/artworks?limit=1')).body.total;
    expect(stats).toBe(6);
  });

  test('a work without an image: its statement inserts no image or image job; with one, it queues the image', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    await warmUp(api);
    const imageJobs = async () => (await sql<{ key: string }>`select key from jobs where entity_id = ${gallery.entityId} and kind = 'image'`
      .execute(t.handle.db)).rows.map((job) => job.key);

    const plain = await counted(api, { title: 'Plain Study', artist_name: 'Ada Berg' });
    expect(plain.answer.status).toBe(201);
    expect(plain.statements).toHaveLength(1);
    expect(plain.statements[0]!.text).not.toContain('insert into images');
    expect(plain.statements[0]!.text).not.toContain('queued_jobs');
    const image = `https://images.example/${gallery.entityId}/plain.jpg`;
    const repost = await counted(api, { title: 'Plain Study', artist_name: 'Ada Berg', image_url: image });
    expect(repost.answer.body).toMatchObject({ id: plain.answer.body.id, created: false });
    expect(repost.statements).toHaveLength(2);
    expect(repost.statements[1]!.text).toContain('insert into images');
    expect(await imageJobs()).toEqual([image]);

    const pictured = `https://images.example/${gallery.entityId}/pictured.jpg`;
    const withImage = await counted(api, { title: 'Pictured Study', artist_name: 'Ada Berg', image_url: pictured });
    expect(withImage.answer.status).toBe(201);
    // After a re-post, the new work is tried as an unchanged re-post first (store/stored-artworks.ts, `repostLikely`).
    expect(withImage.statements).toHaveLength(2);
    expect(withImage.statements[1]!.text).toContain('insert into images');
    expect((await imageJobs()).sort()).toEqual([image, pictured].sort());
    expect((await api.get(`/v1/artworks/${plain.answer.body.id}`)).body).toMatchObject({ image_url: image });

    // A re-post this process has re-posted before sets an image in its one statement.
    for (const created of [true, false]) expect((await api.post('/v1/artworks', { title: 'Framed Study', artist_name: 'Ada Berg' })).body.created).toBe(created);
    const framed = `https://images.example/${gallery.entityId}/framed.jpg`;
    const framing = await counted(api, { title: 'Framed Study', artist_name: 'Ada Berg', image_url: framed });
    expect(framing.answer.body).toMatchObject({ created: false });
    expect(framing.statements).toHaveLength(1);
    expect(framing.statements[0]!.text).toContain('insert into images');
    expect((await imageJobs()).sort()).toEqual([framed, image, pictured].sort());
  });

  test('a new work of an entity without endpoints: its statement has no webhook CTEs; an endpoint another process adds gets its message', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const messages = () => messagesOf(gallery.entityId);

    expect((await api.post('/v1/artworks', { title: 'Warm-up' })).status).toBe(201);
    const plain = await counted(api, { title: 'Unhooked Study' });
    expect(plain.answer.status).toBe(201);
    expect(plain.statements).toHaveLength(1);
    expect(plain.statements[0]!.text).not.toContain('insert into webhook_messages');

    const endpoint = await endpointBehindTheBack(gallery.entityId);
    const hooked = await counted(api, { title: 'Hooked Study' });
    expect(hooked.answer.status).toBe(201);
    expect(hooked.statements).toHaveLength(2);
    expect(await messages()).toEqual([{ type: 'artwork.created', record_id: hooked.answer.body.id }]);
    const next = await counted(api, { title: 'Next Hooked Study' });
    expect(next.statements).toHaveLength(1);
    expect(next.statements[0]!.text).toContain('insert into webhook_messages');
    expect((await messages()).map((message) => message.record_id)).toEqual([hooked.answer.body.id, next.answer.body.id]);

    await sql`update webhook_endpoints set enabled = 0 where id = ${endpoint}`.execute(t.handle.db);
    expect((await counted(api, { title: 'Disabled Study' })).statements).toHaveLength(1);
    const unhooked = await counted(api, { title: 'Unhooked Again Study' });
    expect(unhooked.statements).toHaveLength(1);
    expect(unhooked.statements[0]!.text).not.toContain('insert into webhook_messages');
    expect(await messages()).toHaveLength(2);
  });

  test('a re-post of an entity without endpoints: its statements have no webhook CTEs; an endpoint another process adds gets its message', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const messages = () => messagesOf(gallery.entityId);
    const posted = await api.post('/v1/artworks', { title: 'Quiet Study' });
    for (const count of [2, 1]) {
      const reposted = await counted(api, { title: 'Quiet Study' });
      expect(reposted.answer.body).toMatchObject({ id: posted.body.id, created: false });
      expect(reposted.statements).toHaveLength(count);
      for (const statement of reposted.statements) expect(statement.text).not.toContain('insert into webhook_messages');
    }

    await endpointBehindTheBack(gallery.entityId);
    const hooked = await counted(api, { title: 'Quiet Study', price: 3 });
    expect(hooked.answer.body).toMatchObject({ id: posted.body.id, created: false });
    expect(hooked.statements).toHaveLength(2);
    expect(await messages()).toEqual([{ type: 'artwork.updated', record_id: posted.body.id }]);
    const next = await counted(api, { title: 'Quiet Study', price: 4 });
    expect(next.statements).toHaveLength(1);
    expect(next.statements[0]!.text).toContain('insert into webhook_messages');
    expect(await messages()).toHaveLength(2);
  });

  test('a re-post of a work this process does not hold, once an endpoint was added behind its back: its message, in three statements (the write again with the CTEs as a statement of its own), then one', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const messages = () => messagesOf(gallery.entityId);
    // A new work: this process does not hold it, and the entity's next POST is taken for a new one.
    const posted = await api.post('/v1/artworks', { title: 'Unheld Study' });
    expect(posted.status).toBe(201);

    await endpointBehindTheBack(gallery.entityId);
    const hooked = await counted(api, { title: 'Unheld Study', price: 3 });
    expect(hooked.answer.status).toBe(201);
    expect(hooked.answer.body).toMatchObject({ id: posted.body.id, created: false });
    expect(hooked.statements).toHaveLength(3);
    expect(hooked.statements[2]!.text).toContain('insert into webhook_messages');
    expect(await messages()).toEqual([{ type: 'artwork.updated', record_id: posted.body.id }]);
    expect((await api.get(`/v1/artworks/${posted.body.id}`)).body.price).toBe(3);
    const next = await counted(api, { title: 'Unheld Study', price: 4 });
    expect(next.statements).toHaveLength(1);
    expect(await messages()).toHaveLength(2);
  });

  test('a re-post of a work another write changed since this process re-posted it: two statements, recording the change from what is stored', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const posted = await api.post('/v1/artworks', { title: 'Changed Study', creation_year: 2001, price: 100 });
    expect(posted.status).toBe(201);
    expect((await api.post('/v1/artworks', { title: 'Changed Study', creation_year: 2001, price: 100 })).body.created).toBe(false);
    expect((await api.put(`/v1/artworks/${posted.body.id}`, { price: 250, medium: 'Ink' })).status).toBe(200);

    const reposted = await counted(api, { title: 'Changed Study', creation_year: 2001, price: 100 });
    expect(reposted.answer.body).toMatchObject({ id: posted.body.id, created: false });
    expect(reposted.statements).toHaveLength(2);
    expect((await api.get(`/v1/artworks/${posted.body.id}`)).body).toMatchObject({ price: 100, medium: 'Ink' });
    const changes = await api.get('/v1/changelog?limit=100');
    const last = changes.body.changes.at(-1);
    expect(last).toMatchObject({ entity_id: posted.body.id, action: 'update' });
    expect(last.field_changes.price).toEqual({ old: 250, new: 100 });

    const again = await counted(api, { title: 'Changed Study', creation_year: 2001, price: 100 });
    expect(again.answer.body).toMatchObject({ id: posted.body.id, created: false });
    expect(again.statements).toHaveLength(1);
  });

  test('a re-post without external_id of a work this process re-posted, once another work shares its fingerprint: 409 ambiguous, nothing written', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const first = await api.post('/v1/artworks', { title: 'Shared Study', creation_year: 1999 });
    expect((await api.post('/v1/artworks', { title: 'Shared Study', creation_year: 1999 })).body.created).toBe(false);
    const second = await api.post('/v1/artworks', { title: 'Other Study', creation_year: 1999, external_id: 'ed-2' });
    expect((await api.put(`/v1/artworks/${second.body.id}`, { title: 'Shared Study' })).status).toBe(200);
    const before = (await api.get('/v1/changelog?limit=100')).body.changes.length;

    const reposted = await counted(api, { title: 'Shared Study', creation_year: 1999, price: 5 });
    expect(reposted.answer.status).toBe(409);
    expect(reposted.answer.body).toMatchObject({ error: 'ambiguous', candidates: [first.body.id, second.body.id] });
    expect((await api.get(`/v1/artworks/${first.body.id}`)).body.price).toBeNull();
    expect((await api.get('/v1/changelog?limit=100')).body.changes).toHaveLength(before);
  });
});
