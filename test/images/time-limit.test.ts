import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type TestApp } from '../helpers.js';
import { tricklingImageOrigin, type ImageOrigin } from '../support/image-origin.js';

/**
 * Issue 34, item 4: one image's work is limited (docs/api.md, Images: 60 s; here a test's 3 s). An
 * image past it ends `failed` with the one line "took too long"; another gallery's image is still made.
 */

let t: TestApp;
let origin: ImageOrigin;
let base = '';
let storeDir: string;

beforeAll(async () => {
  // Small, so that the fast image's fetch and derivatives fit in the limit on a loaded machine, where the image
  // threads yield their cores (src/images/priority.ts): at 600 x 400 it took over 1.5 s there.
  const photo = await sharp({ create: { width: 120, height: 80, channels: 3, background: { r: 10, g: 120, b: 200 } } }).jpeg().toBuffer();
  // Every image but /fast.jpg comes a byte every 200 ms: it never arrives within its time limit.
  origin = await tricklingImageOrigin(photo, 200);
  base = origin.base;
  storeDir = mkdtempSync(join(tmpdir(), 'art-catalog-time-limit-'));
  t = await startApp({ IMAGE_STORE: `file:${storeDir}`, IMAGE_FETCH_ALLOW_PRIVATE: 'true', IMAGE_FETCH_TIMEOUT_S: '60' },
    undefined, { imageWorker: { pollMs: 20, timeoutMs: 3000 } });
});

afterAll(async () => {
  await t?.close();
  await origin?.close();
  rmSync(storeDir, { recursive: true, force: true });
});

async function settled(api: ReturnType<typeof client>, path: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await api.get(path);
    if (answer.body.image?.status !== 'pending' || Date.now() > deadline) return answer.body.image;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test('an image past its time limit is failed: "took too long", and another gallery\'s image still gets ready', async () => {
  const [slow, fast] = [await tenant(t, { name: 'Slow Gallery' }), await tenant(t, { name: 'Fast Gallery' })];
  const slowApi = client(t, slow.key);
  const fastApi = client(t, fast.key);
  const slowPosted = await slowApi.post('/v1/artworks', { title: 'Trickled', image_url: `${base}/slow.jpg` });
  const fastPosted = await fastApi.post('/v1/artworks', { title: 'Quick', image_url: `${base}/fast.jpg` });
  expect([slowPosted.status, fastPosted.status]).toEqual([201, 201]);
  const started = Date.now();
  const failed = await settled(slowApi, `/v1/artworks/${slowPosted.body.id}`);
  expect(failed).toMatchObject({ status: 'failed', error: 'took too long', src: null });
  // Ended by its limit, not by the fetch's own 60 s.
  expect(Date.now() - started).toBeLessThan(30_000);
  expect(await settled(fastApi, `/v1/artworks/${fastPosted.body.id}`)).toMatchObject({ status: 'ready', error: null });
}, 90_000);
