import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openImageStore, type ImageStore } from '../../src/images/store/index.js';
import { startS3, type LocalS3 } from '../support/s3.js';

const name = (n: number, ext = 'jpg') => `${n.toString(16).padStart(64, 'a')}-480.${ext}`;

async function read(body: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function names(store: ImageStore): Promise<string[]> {
  const all: string[] = [];
  for await (const each of store.list()) all.push(each);
  return all.sort();
}

let s3: LocalS3;
let folder: string;
beforeAll(async () => {
  s3 = await startS3();
  folder = mkdtempSync(join(tmpdir(), 'art-catalog-images-'));
});
afterAll(async () => {
  await s3?.close();
  rmSync(folder, { recursive: true, force: true });
});

const kinds = {
  file: () => loadConfig({ IMAGE_STORE: `file:${folder}/${Math.random().toString(36).slice(2)}` }),
  s3: () => loadConfig(s3.env(`test-${Math.random().toString(36).slice(2)}`)),
};

describe.each(Object.entries(kinds))('the %s image store', (kind, config) => {
  let store: ImageStore;
  beforeAll(() => { store = openImageStore(config()); });
  afterAll(async () => { await store.close(); });

  it('gives back what was put, with its size and content type, and lists it', async () => {
    const bytes = Buffer.from('not really a jpeg, but bytes are bytes');
    await store.put(name(1), bytes, 'image/jpeg');
    await store.put(name(2, 'avif'), Buffer.from('avif bytes'), 'image/avif');
    expect(await store.has(name(1))).toBe(true);
    const got = await store.get(name(1));
    expect(got).toMatchObject({ size: bytes.length, contentType: 'image/jpeg' });
    expect(await read(got!.body)).toEqual(bytes);
    const avif = await store.get(name(2, 'avif'));
    expect(avif?.contentType).toBe('image/avif');
    expect((await read(avif!.body)).toString()).toBe('avif bytes');
    expect(await names(store)).toEqual([name(1), name(2, 'avif')].sort());
    expect(await store.head(name(1))).toEqual({ size: bytes.length, contentType: 'image/jpeg' });
    expect(await store.head(name(2, 'avif'))).toEqual({ size: 10, contentType: 'image/avif' });
    expect(await store.head(name(3))).toBeNull();
  });

  it('answers "no such image" for a name never stored, and deleting it is not an error', async () => {
    expect(await store.has(name(404))).toBe(false);
    expect(await store.get(name(404))).toBeNull();
    await expect(store.delete(name(404))).resolves.toBeUndefined();
  });

  it('forgets a deleted image', async () => {
    await store.put(name(3), Buffer.from('three'), 'image/jpeg');
    await store.delete(name(3));
    expect(await store.has(name(3))).toBe(false);
    expect(await store.get(name(3))).toBeNull();
    expect(await names(store)).not.toContain(name(3));
  });

  // S3 replaces objects atomically by its contract; s3rver rewrites its file in place (a reader caught
  // in the middle gets a mix), so this holds the file store to the contract and S3 to its own.
  it.skipIf(kind === 's3')('replaces an image whole: concurrent readers see the old bytes or the new, never a mix or a part', async () => {
    const old = Buffer.alloc(2_000_000, 1);
    const fresh = Buffer.alloc(3_000_000, 2);
    await store.put(name(5), old, 'image/jpeg');
    const writes = store.put(name(5), fresh, 'image/jpeg');
    const reads = await Promise.all(Array.from({ length: 8 }, async () => {
      const got = await store.get(name(5));
      return read(got!.body);
    }));
    await writes;
    for (const body of reads) expect(body.equals(old) || body.equals(fresh)).toBe(true);
    expect(await read((await store.get(name(5)))!.body)).toEqual(fresh);
  });

  it('streams a big object instead of handing it over in one piece', async () => {
    const big = Buffer.alloc(24 * 1024 * 1024);
    for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
    await store.put(name(6), big, 'image/jpeg');
    const got = await store.get(name(6));
    expect(got!.size).toBe(big.length);
    expect(got!.body).toBeInstanceOf(Readable);
    let chunks = 0;
    const parts: Buffer[] = [];
    for await (const chunk of got!.body) { chunks++; parts.push(chunk as Buffer); }
    expect(chunks).toBeGreaterThan(1);
    expect(Buffer.concat(parts).equals(big)).toBe(true);
  });

  it('refuses names that could leave the store', async () => {
    for (const bad of ['../escape.jpg', '..', 'a/b.jpg', '/etc/passwd', '.hidden', '', 'x\\y.jpg', 'nul\0.jpg']) {
      await expect(store.put(bad, Buffer.from('x'), 'image/jpeg'), bad).rejects.toThrow(/not a valid image name/);
      await expect(store.get(bad), bad).rejects.toThrow(/not a valid image name/);
    }
  });
});

describe('the file image store on disk', () => {
  it('writes through a temporary file and leaves none behind, spread over subfolders', async () => {
    const root = join(folder, 'layout');
    const store = openImageStore(loadConfig({ IMAGE_STORE: `file:${root}` }));
    await store.put(name(7), Buffer.from('seven'), 'image/jpeg');
    expect(readdirSync(root)).toEqual([name(7).slice(0, 2)]);
    expect(readdirSync(join(root, name(7).slice(0, 2)))).toEqual([name(7)]);
  });
});

describe('IMAGE_STORE and S3 settings', () => {
  it('default to a folder beside the SQLite file, or ./data/images', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:/srv/catalog/art.db' }).imageStore).toBe('file:/srv/catalog/images');
    expect(loadConfig({}).imageStore).toBe('file:./data/images');
    expect(loadConfig({ DATABASE_URL: 'postgres://db/art' }).imageStore).toBe('file:./data/images');
  });

  it('refuse malformed values with one line naming the variable', () => {
    for (const [env, message] of [
      [{ IMAGE_STORE: 'ftp://x' }, /^IMAGE_STORE must be file:PATH or s3:\/\/bucket\/prefix \(got "ftp:\/\/x"\)$/],
      [{ IMAGE_STORE: 's3://' }, /^IMAGE_STORE must be/],
      [{ IMAGE_STORE: 's3://Bad_Bucket/x' }, /^IMAGE_STORE must be/],
      [{ IMAGE_STORE: 's3://bucket/../x' }, /^IMAGE_STORE must be/],
      [{ IMAGE_STORE: 'file:' }, /^IMAGE_STORE must be/],
      [{ S3_ENDPOINT: 'localhost:9000' }, /^S3_ENDPOINT must be an http or https URL \(got "localhost:9000"\)$/],
      [{ AWS_ACCESS_KEY_ID: 'id' }, /^AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together$/],
    ] as const) {
      expect(() => loadConfig(env), JSON.stringify(env)).toThrow(message);
    }
  });

  it('accept a bucket with or without a prefix', () => {
    expect(loadConfig({ IMAGE_STORE: 's3://art-images' }).imageStore).toBe('s3://art-images');
    expect(loadConfig({ IMAGE_STORE: 's3://art-images/prod/derivatives/' }).imageStore).toBe('s3://art-images/prod/derivatives/');
  });
});
