import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { client, DIALECT, startApp, tenant, type TestApp } from '../helpers.js';
import { queriesDuring } from '../support/database.js';
import { until } from '../support/until.js';

/**
 * A batch's round trips on PostgreSQL, counted at the driver (every query the pg client sends, BEGIN
 * and COMMIT included): a batch of new works is one statement when this process knows its artists,
 * and its re-posted items are written together, in as many statements for 40 items as for 4
 * (docs/performance.md, Writes). What each answers and records is test/api/batch.test.ts's and
 * test/store/write-paths.test.ts's.
 */

let t: TestApp;
beforeAll(async () => {
  // Nothing else of the app sends queries meanwhile: no job runs.
  t = await startApp({ FEED_CONCURRENCY: '0', WEBHOOK_CONCURRENCY: '0', IMAGE_CONCURRENCY: '0' });
}, 60_000);
afterAll(async () => t?.close());

const work = (i: number, tag: string, price = 100) => ({
  title: `Round Trip ${tag} ${i}`, artist_name: `Round Trip Painter ${tag.split('-')[0]} ${i % 7}`, creation_year: 2000 + (i % 20), price, currency: 'EUR',
  ...(i % 2 === 0 ? { external_id: `${tag}-${i}` } : {}),
});

const isTheBatchs = (text: string) => /\b(artworks|artists|changelog)\b/.test(text) && !/"api_keys"/.test(text);

interface Result { status: number; created: boolean; changed: boolean; id: number }

async function batchOf(api: ReturnType<typeof client>, items: object[]): Promise<{ results: Result[]; trips: number }> {
  let results: Result[] = [];
  const queries = await queriesDuring(async () => {
    const answer = await api.post('/v1/artworks/batch', { items });
    expect(answer.status).toBe(200);
    results = answer.body.results as Result[];
  });
  // Only the batch's write: not the request's key looked up and its use noted, nor a job runner's look
  // for due work meanwhile (each a transaction of its own, on a connection of its own while it lasts).
  const open = new Map<pg.Client, string[]>();
  const trips: string[] = [];
  for (const { text, client: connection } of queries) {
    const transaction = open.get(connection);
    if (text === 'BEGIN') open.set(connection, [text]);
    else if (transaction && text !== 'COMMIT') transaction.push(text);
    else if (transaction) {
      open.delete(connection);
      if (transaction.some(isTheBatchs)) trips.push(...transaction, text);
    } else if (isTheBatchs(text)) trips.push(text);
  }
  return { results, trips: trips.length };
}

describe.runIf(DIALECT === 'postgres')('round trips of POST /v1/artworks/batch on PostgreSQL', () => {
  test('100 new works: one statement once this process has seen their artists, four (BEGIN, the artists, the works with their record, COMMIT) until then', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    const created = Array.from({ length: 100 }, () => [201, true]);
    // The first batch creates the artists; the second finds them committed; the third names them.
    for (const [tag, trips] of [['new-1', 4], ['new-2', 4], ['new-3', 1]] as const) {
      const batch = await batchOf(api, Array.from({ length: 100 }, (_, i) => work(i, tag)));
      expect({ tag, results: batch.results.map((r) => [r.status, r.created]), trips: batch.trips }).toEqual({ tag, results: created, trips });
    }
    const { rows } = await sql<{ n: string }>`select count(*) as n from changelog where owner_id = ${gallery.entityId} and entity_type = 'artwork'`.execute(t.handle.db);
    expect(Number(rows[0]!.n)).toBe(300);
  });

  test.each([4, 40])('%i re-posted items among new ones: the same statements whatever their number', async (reposts) => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    await batchOf(api, Array.from({ length: reposts }, (_, i) => work(i, 'kept')));
    // Every artist seen committed: the batch below first tries its one statement of new works.
    await batchOf(api, Array.from({ length: 7 }, (_, i) => work(i, 'kept-seen')));
    const before = await sql<{ id: number; price: number }>`select id, price from artworks where entity_id = ${gallery.entityId} and title like 'Round Trip kept %' order by id`.execute(t.handle.db);
    // Each re-post changes its price; the new works come between them.
    const items = Array.from({ length: 100 }, (_, i) => (i % 2 === 1 && (i - 1) / 2 < reposts ? work((i - 1) / 2, 'kept', 500) : work(i, 'new')));
    const { results, trips } = await batchOf(api, items);
    expect(results.map((r) => r.status)).toEqual(items.map(() => 201));
    expect(results.filter((r) => !r.created).map((r) => [r.id, r.changed])).toEqual(before.rows.map((row) => [row.id, true]));
    // The one statement of new works tried first, then BEGIN, the new works, the matches, their update, the record, COMMIT.
    expect(trips).toBe(7);
    const after = await sql<{ price: number }>`select price from artworks where entity_id = ${gallery.entityId} and title like 'Round Trip kept %' order by id`.execute(t.handle.db);
    expect(after.rows.map((row) => Number(row.price))).toEqual(before.rows.map(() => 500));
    const changes = await sql<{ record_id: number; action: string }>`
      select record_id, action from changelog where owner_id = ${gallery.entityId} and entity_type = 'artwork' order by id offset ${reposts + 7}`.execute(t.handle.db);
    // Recorded in item order, as item by item.
    expect(changes.rows.map((row) => [Number(row.record_id), row.action])).toEqual(results.map((r) => [r.id, r.created ? 'create' : 'update']));
  });
});

describe.runIf(DIALECT === 'postgres')('a batch of new works beside a concurrent write of one of them', () => {
  test('its one statement fails on the unique index and the batch is written in a transaction: the item re-posts the work the other wrote', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    // Its artists created, then seen committed: the batch tries its one statement.
    for (const tag of ['race-created', 'race-seen']) await batchOf(api, Array.from({ length: 7 }, (_, i) => work(i, tag)));
    const items = Array.from({ length: 10 }, (_, i) => work(i, 'race'));
    const other = new pg.Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    try {
      // Another writer holds an uncommitted artwork with the external_id of item 4.
      await other.query('begin');
      const { rows: [held] } = await other.query<{ id: number }>(`insert into artworks (entity_id, title, external_id, source_fingerprint, fingerprint_version,
        price_display, last_synced_at, created_at, updated_at) values ($1, 'Held', 'race-4', 'held', 2, 'shown', '2026-01-01', '2026-01-01', '2026-01-01') returning id`,
      [gallery.entityId]);
      const answer = api.post('/v1/artworks/batch', { items });
      // The batch's statement waits on the unique index for the other transaction.
      await until(async () => Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%insert into artworks%'`.execute(t.handle.db)).rows[0]!.n) > 0);
      await other.query('commit');
      const { status, body } = await answer;
      expect(status).toBe(200);
      const results = body.results as Result[];
      expect(results.map((r) => [r.status, r.created])).toEqual(items.map((_, i) => [201, i !== 4]));
      expect(results[4]!.id).toBe(Number(held!.id));
      const { rows } = await sql<{ record_id: number; action: string }>`select record_id, action from changelog
        where owner_id = ${gallery.entityId} and entity_type = 'artwork' order by id offset 14`.execute(t.handle.db);
      expect(rows.map((row) => [Number(row.record_id), row.action])).toEqual(results.map((r) => [r.id, r.created ? 'create' : 'update']));
      const { rows: [count] } = await sql<{ n: string }>`select count(*) as n from artworks where entity_id = ${gallery.entityId}`.execute(t.handle.db);
      expect(Number(count!.n)).toBe(24);
    } finally {
      await other.end();
    }
  });

  test('a re-posted work written in between is merged into what that write left, the general way', async () => {
    const gallery = await tenant(t);
    const api = client(t, gallery.key);
    for (const tag of ['between-created', 'between-seen']) await batchOf(api, Array.from({ length: 7 }, (_, i) => work(i, tag)));
    const [kept] = (await batchOf(api, [work(0, 'between', 100)])).results;
    const other = new pg.Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    try {
      // Another writer changes the work's price and holds its row while the batch re-posts it.
      await other.query('begin');
      await other.query('update artworks set price = 300 where id = $1', [kept!.id]);
      const answer = api.post('/v1/artworks/batch', { items: [work(0, 'between', 500), work(1, 'between')] });
      // The batch's update of its re-posts waits for the row; when it is free, its version is not the one read.
      await until(async () => Number((await sql<{ n: string }>`select count(*) as n from pg_stat_activity
        where wait_event_type = 'Lock' and query like '%update artworks a set%'`.execute(t.handle.db)).rows[0]!.n) > 0);
      await other.query('commit');
      const { status, body } = await answer;
      expect(status).toBe(200);
      expect((body.results as Result[]).map((r) => [r.status, r.created, r.changed])).toEqual([[201, false, true], [201, true, true]]);
      const { rows } = await sql<{ field_changes: string }>`select field_changes from changelog
        where owner_id = ${gallery.entityId} and record_id = ${kept!.id} and action = 'update'`.execute(t.handle.db);
      expect(rows.map((row) => (JSON.parse(row.field_changes) as { price: unknown }).price)).toEqual([{ old: 300, new: 500 }]);
    } finally {
      await other.end();
    }
  });
});
