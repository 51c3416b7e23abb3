import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { derivativeName } from '../../src/images/derive.js';
import { sweepImages } from '../../src/images/sweep.js';
import { startApp, type TestApp } from '../helpers.js';
import { startS3, type LocalS3 } from '../support/s3.js';

/**
 * Issue 34, item 9c: the sweep deletes only names the service writes (docs/deploy.md, Images). A store
 * sharing its folder or an empty bucket prefix with another tool keeps that tool's files; the service's
 * own unused copies still go. (Before: every unknown object under the prefix was deleted.)
 */

let s3: LocalS3;
let folder: string;
beforeAll(async () => {
  s3 = await startS3('shared');
  folder = mkdtempSync(join(tmpdir(), 'art-catalog-sweep-'));
});
afterAll(async () => {
  await s3?.close();
  rmSync(folder, { recursive: true, force: true });
});

const stores = {
  file: () => ({ IMAGE_STORE: `file:${folder}` }),
  // An empty prefix: the service's names sit at the bucket's top, beside everything else in it.
  s3: () => s3.env(''),
};

describe.each(Object.entries(stores))('the sweep on a shared %s store', (_kind, env) => {
  let t: TestApp;
  beforeAll(async () => { t = await startApp(env()); });
  afterAll(async () => { await t?.close(); });

  test("deletes the service's own unused copies and leaves another tool's files", async () => {
    const store = t.app.imageStore;
    const orphan = derivativeName('a'.repeat(64), 480, 'webp');
    // Other tools' names: some look almost like ours (a hash without a width, an upper-case hash, a .png).
    const foreign = ['backup-2026.tar', 'aa', `${'a'.repeat(64)}.webp`, `${'A'.repeat(64)}-480.webp`, `${'b'.repeat(64)}-480.png`, 'README.md'];
    for (const name of [orphan, ...foreign]) await store.put(name, Buffer.from(name), 'application/octet-stream');
    // Past the grace hour, so an unused copy of the service's is swept at once.
    const report = await sweepImages(t.handle.db, store, Date.now() + 2 * 3600_000);
    expect(report.deleted).toBe(1);
    expect(report.foreign).toBe(foreign.length);
    expect(await store.has(orphan)).toBe(false);
    for (const name of foreign) expect(await store.has(name), name).toBe(true);
  }, 60_000);
});
