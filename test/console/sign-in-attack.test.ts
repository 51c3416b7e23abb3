import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashesRunning, HASHES_AT_ONCE } from '../../src/domain/passwords.js';
import { failureKey, purgeSignInRows, recordFailure } from '../../src/store/users.js';
import { client, DIALECT, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { ConsoleSession, PASSWORD, signedIn, type Answer } from '../support/console.js';

/**
 * Console sign-in as an attacker uses it (docs/deploy.md, Sign-in limits): many attempts from one
 * address, wrong passwords for the owner's email, a burst of hashes, random emails. The owner still
 * signs in at once from another address, and another gallery's API keeps answering.
 * TRUST_PROXY lets the test name each request's client address in X-Forwarded-For.
 */

const ATTACKER = '203.0.113.66';

/** A sign-in from `address`: the form's page for its token, then the post. */
async function signInFrom(base: string, address: string, email: string, password: string): Promise<Answer> {
  const session = new ConsoleSession(base);
  const from = { 'x-forwarded-for': address };
  await session.request('GET', '/console/sign-in', undefined, from);
  return session.post('/console/sign-in', { email, password }, from);
}

describe('console sign-in under attack', { timeout: 180_000 }, () => {
  let t: TestApp;
  let base: string;
  let gallery: Tenant;
  let other: Tenant;
  let owner: ConsoleSession & { email: string };

  beforeAll(async () => {
    t = await startApp({ TRUST_PROXY: '127.0.0.1' });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    gallery = await tenant(t, { name: 'Galerie Target' });
    other = await tenant(t, { name: 'Galerie Bystander' });
    owner = await signedIn(t, base, gallery.entityId, 'owner');
  }, 120_000);
  afterAll(async () => t.close());

  test('30 wrong sign-ins from one address: 20 answered 401, the rest 429 with Retry-After, and no hash is made for them', async () => {
    const began = Date.now();
    const answers: Answer[] = [];
    for (let i = 0; i < 30; i++) answers.push(await signInFrom(base, ATTACKER, `random-${i}@nowhere.example`, `wrong password ${i}`));
    expect(answers.slice(0, 20).map((a) => a.status)).toEqual(Array(20).fill(401));
    expect(answers.slice(20).map((a) => a.status)).toEqual(Array(10).fill(429));
    const retry = Number(answers[29]!.headers.get('retry-after'));
    // What is left of the window that began with the first attempt.
    expect(retry).toBeGreaterThanOrEqual(15 * 60 - Math.ceil((Date.now() - began) / 1000));
    expect(retry).toBeLessThanOrEqual(15 * 60);
    expect(answers[29]!.text).toMatch(/Too many sign-in attempts from your network\. Try again in 1[45] minutes\./);
    // Refused before any hash: a refusal costs no scrypt (a hash takes 0.1–0.3 s).
    const started = performance.now();
    expect((await signInFrom(base, ATTACKER, owner.email, PASSWORD)).status).toBe(429);
    expect(performance.now() - started).toBeLessThan(250);
    // The owner, from another address, signs in at once.
    expect((await signInFrom(base, '198.51.100.7', owner.email, PASSWORD)).status).toBe(303);
  });

  test('ten wrong passwords for the owner\'s email lock it from the attacker\'s address only: the owner signs in from theirs', async () => {
    const stranger = '203.0.113.77';
    for (let i = 0; i < 10; i++) expect((await signInFrom(base, stranger, owner.email, `guess number ${i}`)).status).toBe(401);
    expect((await signInFrom(base, stranger, owner.email, PASSWORD)).status).toBe(401);
    expect((await signInFrom(base, '198.51.100.8', owner.email, PASSWORD)).status).toBe(303);
  });

  // The hashes' limit is the process's own (src/domain/passwords.ts): the burst proves the same on either dialect, so
  // it runs once (its 40 production-cost hashes are the file's largest cost); what PostgreSQL changes, the rows of
  // failures and attempts, the other tests of this file show on both.
  test.skipIf(DIALECT === 'postgres')('a burst of 40 sign-ins from 40 addresses hashes at most 4 at once; the others wait, then 503 with Retry-After; the API answers meanwhile', async () => {
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, hashesRunning());
    }, 5);
    const reads: number[] = [];
    let bursting = true;
    const reader = (async () => {
      while (bursting) {
        const started = performance.now();
        expect((await client(t, other.key).get('/v1/artworks')).status).toBe(200);
        reads.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => signInFrom(base, `192.0.2.${i + 1}`, `burst-${i}@nowhere.example`, 'a wrong password')));
    bursting = false;
    await reader;
    clearInterval(sampler);
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(HASHES_AT_ONCE);
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 401 || s === 503)).toBe(true);
    const busy = answers.filter((a) => a.status === 503);
    // 40 hashes of 0.1–0.3 s, four at a time, are more than 2 s of waiting for the last ones.
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]!.headers.get('retry-after')).toBe('1');
    expect(busy[0]!.text).toContain('Many people are signing in right now. Try again in a moment.');
    // The API kept answering (every read above was a 200). How fast it answered while four hashes share two
    // cores with the event loop is a speed goal: a benchmark's to measure (docs/performance.md), not a test's.
    expect(reads.length).toBeGreaterThan(3);
  });

  test('failure and attempt rows are purged once their window has passed, and kept while it runs', async () => {
    const now = Date.now();
    const old = now - 16 * 60_000;
    await recordFailure(t.handle.db, failureKey('old@nowhere.example', ATTACKER), old);
    await recordFailure(t.handle.db, failureKey('recent@nowhere.example', ATTACKER), now);
    await sql`update sign_in_addresses set window_start = ${new Date(old).toISOString()}`.execute(t.handle.db);
    await purgeSignInRows(t.handle.db, now);
    const failures = await sql<{ email_hash: string }>`select email_hash from login_failures`.execute(t.handle.db);
    expect(failures.rows.map((r) => r.email_hash)).toContain(failureKey('recent@nowhere.example', ATTACKER));
    expect(failures.rows.map((r) => r.email_hash)).not.toContain(failureKey('old@nowhere.example', ATTACKER));
    expect(Number((await sql<{ n: number }>`select count(*) as n from sign_in_addresses`.execute(t.handle.db)).rows[0]!.n)).toBe(0);
  });
});
