import { afterAll, beforeAll, expect, test } from 'vitest';
import { client, startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { fileServer, type FileServer } from '../support/file-server.js';
import { hostileXlsx } from '../support/spreadsheets.js';

/**
 * A feed whose URL serves a hostile zip (docs/security-testing.md): its run, taken by the app's own job
 * runner, ends `failed` with the one line the console's Import shows, writes nothing, and the server keeps
 * answering another gallery, its memory growing by less than 100 MB while it refuses the 1 GiB hidden entry.
 */

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const ROWS = [['title', 'external_id'], ['Hidden Work', 'H-1']];

let t: TestApp;
let files: FileServer;
let attacker: Tenant;
let other: Tenant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  files = await fileServer();
  t = await startApp({ FETCH_ALLOW_PRIVATE: 'true', FEED_CONCURRENCY: '1' });
  attacker = await tenant(t, { name: 'Galerie Feed Zip' });
  other = await tenant(t, { name: 'Galerie Bystander' });
  api = client(t, attacker.key);
  await client(t, other.key).post('/v1/artworks', { title: 'Still here' });
}, 60_000);
afterAll(async () => {
  await t?.close();
  await files?.close();
});

async function finishedRun(feedId: number) {
  for (let i = 0; i < 600; i++) {
    const feed = (await api.get(`/v1/feeds/${feedId}`)).body;
    if (feed.last_run && !['queued', 'running'].includes(feed.last_run.status)) return feed.last_run;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`feed ${feedId} did not finish its run`);
}

test('a feed serving the understated-count zip (1 GiB hidden in 1 MB): the run ends failed in one line, the server growing by less than 100 MB (3 GB before), another gallery answered', async () => {
  files.set('/understated.xlsx', await hostileXlsx('understated', ROWS), XLSX);
  const atRest = process.memoryUsage().rss;
  let highest = atRest;
  const sampler = setInterval(() => { highest = Math.max(highest, process.memoryUsage().rss); }, 5);
  let run;
  try {
    const created = await api.post('/v1/feeds', { url: files.url('/understated.xlsx'), kind: 'artworks' });
    expect(created.status).toBe(201);
    run = await finishedRun(created.body.id);
  } finally {
    clearInterval(sampler);
  }
  expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(/^not a valid xlsx file: its zip directory holds \d+ entries but its end record counts \d+$/) });
  // This process is the server and the test runner, and other files may have run in it before: what is
  // asserted is what refusing the file added (gigabytes before the fix), which keeps a server at rest
  // (137 MB in the run) under 400 MB.
  expect(highest - atRest).toBeLessThan(100 * 1024 * 1024);
  const read = await client(t, other.key).get('/v1/artworks');
  expect(read.status).toBe(200);
  expect(read.body.artworks[0].title).toBe('Still here');
  expect((await api.get('/v1/artworks')).body.artworks).toEqual([]);
}, 120_000);

test.each([
  ['renamed', /^not a valid xlsx file: the part "xl\/media\/image9\.png" is named "xl\/worksheets\/sheet1\.xml" where its data is$/],
  ['prefixed', /^not a valid xlsx file: bytes come before its first zip entry$/],
  ['whitespace', /^the workbook holds more than 1,000,000 cells, more than one import may read; split it into several files$/],
] as const)('a feed serving the %s zip: the run ends failed in one line, nothing written, the server alive', async (shape, message) => {
  files.set(`/${shape}.xlsx`, await hostileXlsx(shape, ROWS), XLSX);
  const created = await api.post('/v1/feeds', { url: files.url(`/${shape}.xlsx`), kind: 'artworks' });
  expect(created.status).toBe(201);
  const run = await finishedRun(created.body.id);
  expect(run).toMatchObject({ status: 'failed', error: expect.stringMatching(message) });
  expect((await api.get('/v1/artworks')).body.artworks).toEqual([]);
  expect((await client(t, other.key).get('/v1/artworks')).status).toBe(200);
}, 120_000);
