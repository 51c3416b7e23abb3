import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bodyTextHash, requestHash } from '../../src/http/plugins/idempotency.js';
import { claimIdempotencyKey } from '../../src/store/idempotency.js';
import { client, freshDatabase, keyFor, startApp, tenant, type Reply, type TestApp } from '../helpers.js';

/** Idempotency-Key on POST, PUT and DELETE (docs/api.md, Retries and idempotency). */

let t: TestApp;
beforeAll(async () => { t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' }); });
afterAll(async () => { await t?.close(); });

const IDEM = 'idempotency-key';
const REPLAYED = 'idempotent-replayed';

async function gallery(on: TestApp = t) {
  const g = await tenant(on);
  return { ...g, api: client(on, g.key) };
}

type Api = ReturnType<typeof client>;

const artworkTotal = async (api: Api) => (await api.get('/v1/artworks?limit=100')).body.total as number;
const changes = async (api: Api) => (await api.get('/v1/changelog?limit=1000')).body.changes as { entity_type: string; entity_id: number; action: string }[];
const apiKeyId = async (on: TestApp, prefix: string) =>
  Number((await on.handle.db.selectFrom('api_keys').select('id').where('prefix', '=', prefix).executeTakeFirstOrThrow()).id);

function expectReplayOf(replay: Reply, first: Reply): void {
  expect(replay.status).toBe(first.status);
  expect(replay.body).toEqual(first.body);
  expect(replay.headers[REPLAYED]).toBe('true');
}

describe('replaying a completed request', () => {
  test('POST /v1/artworks sent twice with one Idempotency-Key and body answers the first status and body again, marked Idempotent-Replayed, without a second write', async () => {
    const { api } = await gallery();
    const body = { title: 'Replayed Work', creation_year: 2004, price: 100 };
    const first = await api.post('/v1/artworks', body, { [IDEM]: 'post-once-1' });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);
    expect(first.headers[REPLAYED]).toBeUndefined();
    const changesAfterFirst = await changes(api);
    expect(changesAfterFirst).toHaveLength(1);

    const second = await api.post('/v1/artworks', body, { [IDEM]: 'post-once-1' });
    expectReplayOf(second, first);
    // A re-run would have answered created false with a new last_synced_at.
    expect(second.body.created).toBe(true);
    expect(second.body.last_synced_at).toBe(first.body.last_synced_at);
    expect(await artworkTotal(api)).toBe(1);
    expect(await changes(api)).toEqual(changesAfterFirst);
    const stored = await api.get(`/v1/artworks/${first.body.id}`);
    expect(stored.body.last_synced_at).toBe(first.body.last_synced_at);

    // Without the header the same body is a real second write (a merge), so the replay above was not one.
    const plain = await api.post('/v1/artworks', body);
    expect(plain.status).toBe(201);
    expect(plain.body.created).toBe(false);
    expect(plain.headers[REPLAYED]).toBeUndefined();
    expect(await changes(api)).toHaveLength(2);
  });

  test('PUT /v1/artworks/:id replayed answers the first 200 body and does not write again', async () => {
    const { api } = await gallery();
    const created = await api.post('/v1/artworks', { title: 'Put Target', price: 100 });
    const id = created.body.id as number;
    const first = await api.put(`/v1/artworks/${id}`, { price: 200, availability: 'reserved' }, { [IDEM]: 'put-once-1' });
    expect(first.status).toBe(200);
    expect(first.body.price).toBe(200);
    expect(first.headers[REPLAYED]).toBeUndefined();

    // Another write in between: a re-run of the first PUT would set the price back to 200.
    const between = await api.put(`/v1/artworks/${id}`, { price: 300 });
    expect(between.status).toBe(200);
    const changesBefore = await changes(api);

    const replay = await api.put(`/v1/artworks/${id}`, { price: 200, availability: 'reserved' }, { [IDEM]: 'put-once-1' });
    expectReplayOf(replay, first);
    expect(replay.body.price).toBe(200);
    const stored = await api.get(`/v1/artworks/${id}`);
    expect(stored.body.price).toBe(300);
    expect(stored.body.updated_at).toBe(between.body.updated_at);
    expect(await changes(api)).toEqual(changesBefore);
  });

  test('DELETE /v1/events/:id replayed answers 200 {deleted: true, id} again instead of 404, with one delete entry in the changelog', async () => {
    const { api } = await gallery();
    const event = await api.post('/v1/events', { title: 'Deleted Once', start_date: '2030-01-01' });
    const id = event.body.id as number;
    const first = await api.delete(`/v1/events/${id}`, { [IDEM]: 'delete-once-1' });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ deleted: true, id });

    const replay = await api.delete(`/v1/events/${id}`, { [IDEM]: 'delete-once-1' });
    expectReplayOf(replay, first);
    expect(replay.body).toEqual({ deleted: true, id });

    // The event is gone: without the key (or with a new one) the DELETE runs and finds nothing.
    const fresh = await api.delete(`/v1/events/${id}`, { [IDEM]: 'delete-once-2' });
    expect(fresh.status).toBe(404);
    expect(fresh.headers[REPLAYED]).toBeUndefined();
    expect((await api.delete(`/v1/events/${id}`)).status).toBe(404);
    const deletes = (await changes(api)).filter((c) => c.action === 'delete');
    expect(deletes).toHaveLength(1);
    expect(deletes[0]!.entity_id).toBe(id);
  });

  test('a 400 validation answer is final: the same key and body replay the 400', async () => {
    const { api } = await gallery();
    const body = { price: 'ten' };
    const first = await api.post('/v1/artworks', body, { [IDEM]: 'bad-body-1' });
    expect(first.status).toBe(400);
    expect(first.body.error).toBe('bad_request');
    expect(first.headers[REPLAYED]).toBeUndefined();
    const replay = await api.post('/v1/artworks', body, { [IDEM]: 'bad-body-1' });
    expectReplayOf(replay, first);
    expect(await artworkTotal(api)).toBe(0);
  });

  test('a 404 answer is final too: a replayed PUT of a missing artwork answers 404 again, marked replayed', async () => {
    const { api } = await gallery();
    const first = await api.put('/v1/artworks/987654', { price: 1 }, { [IDEM]: 'missing-1' });
    expect(first.status).toBe(404);
    const replay = await api.put('/v1/artworks/987654', { price: 1 }, { [IDEM]: 'missing-1' });
    expectReplayOf(replay, first);
    expect(replay.body.error).toBe('not_found');
  });
});

describe('reusing a key for a different request', () => {
  test('the same Idempotency-Key with a different body gets 422 idempotency_key_reused and writes nothing', async () => {
    const { api } = await gallery();
    const first = await api.post('/v1/artworks', { title: 'Original Body' }, { [IDEM]: 'reused-1' });
    expect(first.status).toBe(201);
    const changesBefore = await changes(api);

    const other = await api.post('/v1/artworks', { title: 'Different Body' }, { [IDEM]: 'reused-1' });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('idempotency_key_reused');
    expect(typeof other.body.message).toBe('string');
    expect(other.headers[REPLAYED]).toBeUndefined();
    expect(await artworkTotal(api)).toBe(1);
    const titles = (await api.get('/v1/artworks')).body.artworks.map((a: { title: string }) => a.title);
    expect(titles).toEqual(['Original Body']);
    expect(await changes(api)).toEqual(changesBefore);
  });

  test('the same Idempotency-Key on another path gets 422 and does not run that request', async () => {
    const { api } = await gallery();
    const a = await api.post('/v1/artworks', { title: 'Path A', price: 1 });
    const b = await api.post('/v1/artworks', { title: 'Path B', price: 1 });
    expect((await api.put(`/v1/artworks/${a.body.id}`, { price: 5 }, { [IDEM]: 'path-1' })).status).toBe(200);
    const other = await api.put(`/v1/artworks/${b.body.id}`, { price: 5 }, { [IDEM]: 'path-1' });
    expect(other.status).toBe(422);
    expect(other.body.error).toBe('idempotency_key_reused');
    expect((await api.get(`/v1/artworks/${b.body.id}`)).body.price).toBe(1);
  });

  test('keys are scoped per API key: another key of the same entity uses the same Idempotency-Key value independently', async () => {
    const g = await gallery();
    const second = client(t, (await keyFor(t, g.entityId)).key);
    const third = client(t, (await keyFor(t, g.entityId)).key);
    const body = { title: 'Shared Key Work' };

    const first = await g.api.post('/v1/artworks', body, { [IDEM]: 'shared-value' });
    expect(first.status).toBe(201);
    expect(first.body.created).toBe(true);

    // A different body under the same value is no reuse for another API key: it runs.
    const differentBody = await second.post('/v1/artworks', { title: 'Second Key Work' }, { [IDEM]: 'shared-value' });
    expect(differentBody.status).toBe(201);
    expect(differentBody.body.created).toBe(true);
    expect(differentBody.headers[REPLAYED]).toBeUndefined();

    // The same body under the same value is no replay for another API key: it runs (a merge).
    const sameBody = await third.post('/v1/artworks', body, { [IDEM]: 'shared-value' });
    expect(sameBody.status).toBe(201);
    expect(sameBody.body.created).toBe(false);
    expect(sameBody.body.id).toBe(first.body.id);
    expect(sameBody.headers[REPLAYED]).toBeUndefined();

    expect(await artworkTotal(g.api)).toBe(2);
    // Each key still replays its own first answer.
    expectReplayOf(await g.api.post('/v1/artworks', body, { [IDEM]: 'shared-value' }), first);
    expectReplayOf(await second.post('/v1/artworks', { title: 'Second Key Work' }, { [IDEM]: 'shared-value' }), differentBody);
  });
});

describe('a request still running', () => {
  test('while a claim on the key is in flight, the same request gets 409 idempotency_conflict and writes nothing', async () => {
    const g = await gallery();
    const body = { title: 'In Flight Work' };
    // Claimed through the app's own guard: a database row, or a Redis lock when the run uses Redis.
    const claim = await t.app.idempotency.claim({ apiKeyId: await apiKeyId(t, g.prefix), key: 'in-flight-1', requestHash: requestHash('POST', '/v1/artworks', bodyTextHash(JSON.stringify(body))) });
    expect(claim.outcome).toBe('claimed');

    const r = await g.api.post('/v1/artworks', body, { [IDEM]: 'in-flight-1' });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('idempotency_conflict');
    expect(typeof r.body.message).toBe('string');
    expect(await artworkTotal(g.api)).toBe(0);
    expect(await changes(g.api)).toEqual([]);

    // The same value is free for another API key of the entity, so the 409 came from this key's claim.
    const sibling = client(t, (await keyFor(t, g.entityId)).key);
    expect((await sibling.post('/v1/artworks', body, { [IDEM]: 'in-flight-1' })).status).toBe(201);
  });

  test('a claim whose lease has expired (its process died) is taken over: the request runs and its answer is kept', async () => {
    const g = await gallery();
    const body = { title: 'Abandoned Claim Work' };
    const claim = await claimIdempotencyKey(t.handle.db, await apiKeyId(t, g.prefix), 'abandoned-1', requestHash('POST', '/v1/artworks', bodyTextHash(JSON.stringify(body))), -1);
    expect(claim.outcome).toBe('claimed');

    const r = await g.api.post('/v1/artworks', body, { [IDEM]: 'abandoned-1' });
    expect(r.status).toBe(201);
    expect(r.body.created).toBe(true);
    expect(r.headers[REPLAYED]).toBeUndefined();
    expect(await artworkTotal(g.api)).toBe(1);

    expectReplayOf(await g.api.post('/v1/artworks', body, { [IDEM]: 'abandoned-1' }), r);
    expect(await artworkTotal(g.api)).toBe(1);
  });

  test('of several concurrent identical requests with one key exactly one writes; the others replay it or get 409', async () => {
    const { api } = await gallery();
    const body = { title: 'Concurrent Work' };
    const replies = await Promise.all(Array.from({ length: 5 }, () => api.post('/v1/artworks', body, { [IDEM]: 'concurrent-1' })));
    const ran = replies.filter((r) => r.status === 201 && r.headers[REPLAYED] === undefined);
    expect(ran).toHaveLength(1);
    for (const r of replies) {
      if (r === ran[0]) continue;
      if (r.status === 409) expect(r.body.error).toBe('idempotency_conflict');
      else expectReplayOf(r, ran[0]!);
    }
    expect(await artworkTotal(api)).toBe(1);
    expect(await changes(api)).toHaveLength(1);
  });
});

describe('the header value', () => {
  test('a value of 255 printable ASCII characters is accepted and replayed', async () => {
    const { api } = await gallery();
    const value = ' !~'.repeat(85);
    expect(value).toHaveLength(255);
    const first = await api.post('/v1/artworks', { title: 'Long Key Work' }, { [IDEM]: value });
    expect(first.status).toBe(201);
    expectReplayOf(await api.post('/v1/artworks', { title: 'Long Key Work' }, { [IDEM]: value }), first);
  });

  test.each([
    ['256 characters', 'k'.repeat(256)],
    ['a non-ASCII character', 'clé-1'],
    ['a control character', 'key\u0001one'],
    ['a DEL character', 'key\u007fone'],
  ])('a value with %s gets 400 bad_request naming Idempotency-Key and writes nothing', async (_name, value) => {
    const { api } = await gallery();
    const r = await api.post('/v1/artworks', { title: 'Bad Key Work' }, { [IDEM]: value });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('bad_request');
    expect(r.body.details?.map((d: { field: string }) => d.field)).toContain('Idempotency-Key');
    expect(await artworkTotal(api)).toBe(0);
  });

  test('a GET with an Idempotency-Key header is simply served, never replayed', async () => {
    const { api } = await gallery();
    const first = await api.get('/v1/artworks', { [IDEM]: 'get-1' });
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(0);
    expect(first.headers[REPLAYED]).toBeUndefined();
    await api.post('/v1/artworks', { title: 'Seen By Second Get' });
    const second = await api.get('/v1/artworks', { [IDEM]: 'get-1' });
    expect(second.status).toBe(200);
    expect(second.body.total).toBe(1);
    expect(second.headers[REPLAYED]).toBeUndefined();
    // An invalid value on a GET is ignored too.
    expect((await api.get('/v1/artworks', { [IDEM]: 'k'.repeat(300) })).status).toBe(200);
  });
});

describe('across a restart', () => {
  test('a replay still works after the server restarts on the same database file', async () => {
    const database = await freshDatabase();
    const start = () => startApp({}, database.url);
    try {
      const one = await start();
      const g = await tenant(one);
      const body = { title: 'Survives Restart', price: 10 };
      const first = await client(one, g.key).post('/v1/artworks', body, { [IDEM]: 'restart-1' });
      expect(first.status).toBe(201);
      expect(first.body.created).toBe(true);
      await one.close();

      const two = await start();
      try {
        const api = client(two, g.key);
        const replay = await api.post('/v1/artworks', body, { [IDEM]: 'restart-1' });
        expectReplayOf(replay, first);
        expect(await artworkTotal(api)).toBe(1);
        expect(await changes(api)).toHaveLength(1);
        const reused = await api.post('/v1/artworks', { title: 'Other After Restart' }, { [IDEM]: 'restart-1' });
        expect(reused.status).toBe(422);
      } finally {
        await two.close();
      }
    } finally {
      await database.drop();
    }
  });
});
