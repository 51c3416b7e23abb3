import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { generateKey } from '../../src/domain/keys.js';
import { setPaused } from '../../src/store/entities.js';
import { DIALECT, startApp, tenant, type TestApp } from '../helpers.js';
import { openRaw, parseResponses } from '../support/raw-http.js';

/**
 * A key's look-up is shared by the requests that need it meanwhile (src/http/plugins/key-cache.ts,
 * `lookUp`; docs/performance.md, API key cache): requests pipelined on one connection reach the key check
 * in one turn of the event loop, before any look-up of theirs has ended, so each would send its own.
 * Counted at the driver (pg's queries, better-sqlite3's statements): the statements that find a key by
 * its hash, sent while the requests run. Nothing else in this process looks keys up by hash.
 */

let t: TestApp;
let port: number;
let lookUps = 0;
const LOOK_UP = /"key_hash"\s*=/;

type PgQuery = { text: string; submit: (this: PgQuery, connection: unknown) => unknown };
const pgQuery = pg.Query.prototype as unknown as PgQuery;
const { submit } = pgQuery;
type Statement = { source: string; all: (this: Statement, ...parameters: unknown[]) => unknown; get: (this: Statement, ...parameters: unknown[]) => unknown };
const probe = new SQLite(':memory:');
const statementProto = Object.getPrototypeOf(probe.prepare('select 1')) as Statement;
probe.close();
const { all, get } = statementProto;

beforeAll(async () => {
  t = await startApp();
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  if (DIALECT === 'postgres') {
    pgQuery.submit = function (connection) {
      if (LOOK_UP.test(this.text)) lookUps++;
      return submit.call(this, connection);
    };
  } else {
    statementProto.all = function (...parameters) {
      if (LOOK_UP.test(this.source)) lookUps++;
      return all.apply(this, parameters);
    };
    statementProto.get = function (...parameters) {
      if (LOOK_UP.test(this.source)) lookUps++;
      return get.apply(this, parameters);
    };
  }
});
afterAll(async () => {
  pgQuery.submit = submit;
  statementProto.all = all;
  statementProto.get = get;
  await t?.close();
});

const REQUESTS = 40;

/** `REQUESTS` GETs of the profile with `key`, pipelined in one write: their statuses and the look-ups they made. */
async function pipelined(key: string) {
  const connection = await openRaw(port);
  try {
    const before = lookUps;
    await connection.write(`GET /v1/profile HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\n\r\n`.repeat(REQUESTS));
    await connection.waitFor((received) => parseResponses(received).length === REQUESTS, 30_000);
    const responses = parseResponses(connection.received());
    return { statuses: [...new Set(responses.map((response) => response.status))], lookUps: lookUps - before, responses };
  } finally {
    connection.destroy();
  }
}

test('requests of a key not cached yet share one look-up, and are all answered', async () => {
  const gallery = await tenant(t, { tier: 'partner' });
  const answered = await pipelined(gallery.key);
  expect(answered.statuses).toEqual([200]);
  expect(answered.lookUps).toBe(1);
});

test('requests of a key that is not there share one look-up, and each gets its 401', async () => {
  const answered = await pipelined(generateKey());
  expect(answered.statuses).toEqual([401]);
  expect(new Set(answered.responses.map((response) => response.headers['www-authenticate']))).toEqual(new Set(['Bearer realm="art-catalog", error="invalid_token"']));
  expect(answered.lookUps).toBe(1);
});

test('a key whose entry was dropped (its entity paused, then resumed, here) is looked up once again, and a paused entity\'s requests share theirs and each get 403', async () => {
  const gallery = await tenant(t, { tier: 'partner' });
  expect((await pipelined(gallery.key)).lookUps).toBe(1);
  await setPaused(t.handle.db, gallery.entityId, true);
  const paused = await pipelined(gallery.key);
  expect(paused.statuses).toEqual([403]);
  expect(paused.lookUps).toBe(1);
  await setPaused(t.handle.db, gallery.entityId, false);
  const resumed = await pipelined(gallery.key);
  expect(resumed.statuses).toEqual([200]);
  expect(resumed.lookUps).toBe(1);
});
