import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { derivativeName } from '../../src/images/derive.js';
import { sweepImages } from '../../src/images/sweep.js';
import { startApp, type TestApp } from '../helpers.js';
import { startS3, type LocalS3 } from '../support/s3.js';

/**
 * The sweep deletes only names of the service's own shape (docs/deploy.md, Images): a folder or an
 * S3 prefix (even the empty one) shared with another tool keeps that tool's files. A derivative of
 * no known original is deleted, so the sweep does run.
 */

vi.setConfig({ testTimeout: 60_000 });

const ORPHAN = 'ab'.repeat(32);
const orphans = [derivativeName(ORPHAN, 480, 'avif'), derivativeName(ORPHAN, 960, 'webp'), derivativeName(ORPHAN, 480, 'jpeg')];
/** Names another tool might keep next to the derivatives: each a name a store accepts, none of the service's shape. */
const FOREIGN = [
  'backup.tar', 'README.md', 'ab-logo.jpg', `${ORPHAN}.jpg`, `${ORPHAN}-480.png`, `${ORPHAN.toUpperCase()}-480.jpg`,
  `${ORPHAN}-480.jpg.bak`, `${ORPHAN}-0480.jpg`, `${ORPHAN}-99999.jpg`, `x${ORPHAN}-480.jpg`,
];

let s3: LocalS3;
let folder: string;
beforeAll(async () => {
  s3 = await startS3();
  folder = mkdtempSync(join(tmpdir(), 'art-catalog-sweep-'));
});
afterAll(async () => {
  await s3?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('on a shared folder', () => {
  let t: TestApp;
  let root: string;
  beforeAll(async () => {
    root = join(folder, 'shared');
    t = await startApp({ IMAGE_STORE: `file:${root}` });
  });
  afterAll(async () => { await t?.close(); });

  const files = (): string[] =>
    readdirSync(root, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => relative(root, join(entry.parentPath, entry.name))).sort();

  test("another tool's files stay, in the store's subfolders too; the service's unused copies go", async () => {
    for (const name of orphans) await t.app.imageStore.put(name, Buffer.from('stale'), 'image/jpeg');
    const theirs = [
      'notes.txt', // at the top
      ...FOREIGN.map((name) => join(name.slice(0, 2), name)), // where the store would put a name starting so
      join('zz', derivativeName(ORPHAN, 1600, 'jpeg')), // of the service's shape, but not where it writes it
      join('photos', '2024', 'IMG_0001.jpg'),
    ];
    for (const path of theirs) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), 'not yours');
    }

    const report = await sweepImages(t.handle.db, t.app.imageStore, Date.now() + 2 * 3600_000);

    expect(files()).toEqual([...theirs].sort());
    expect(report.deleted).toBe(orphans.length);
  });
});

describe('on an S3 bucket with an empty prefix', () => {
  let t: TestApp;
  let client: S3Client;
  beforeAll(async () => {
    t = await startApp(s3.env(''));
    const env = s3.env();
    client = new S3Client({
      endpoint: s3.endpoint, forcePathStyle: true, region: env.AWS_REGION!,
      credentials: { accessKeyId: env.AWS_ACCESS_KEY_ID!, secretAccessKey: env.AWS_SECRET_ACCESS_KEY! },
    });
  });
  afterAll(async () => {
    client?.destroy();
    await t?.close();
  });

  const keys = async (): Promise<string[]> =>
    ((await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }))).Contents ?? []).map((object) => object.Key!).sort();

  test("another tool's objects stay, at the top and under its own prefixes; the service's unused copies go", async () => {
    for (const name of orphans) await t.app.imageStore.put(name, Buffer.from('stale'), 'image/jpeg');
    const theirs = [...FOREIGN, 'logs/2024-01-01.log', `other/${derivativeName(ORPHAN, 480, 'jpeg')}`];
    for (const key of theirs) await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: 'not yours' }));
    expect(await keys()).toEqual([...orphans, ...theirs].sort());

    const report = await sweepImages(t.handle.db, t.app.imageStore, Date.now() + 2 * 3600_000);

    expect(await keys()).toEqual([...theirs].sort());
    expect(report.deleted).toBe(orphans.length);
  });
});
