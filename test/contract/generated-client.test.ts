import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startApp, tenant, type TestApp } from '../helpers.js';

/**
 * Proof that the OpenAPI document is what a gallery's developer feeds to a generator: a client generated
 * from the live /v1/openapi.json by @hey-api/openapi-ts, type-checked by tsc in strict mode together with
 * a short sync written against its types, then run against the live server.
 */

const run = promisify(execFile);
let t: TestApp;
let baseUrl: string;
let dir: string;

beforeAll(async () => {
  t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  dir = await mkdtemp(join(tmpdir(), 'generated-client-'));
});
afterAll(async () => {
  await t.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * What a gallery's sync would do with the generated SDK: post an artwork, read the whole catalog by
 * cursor (`after` = the previous page's `next_after`), then read the changelog the same way. Written
 * against the generated types: a renamed operation or model, or a field the document loses, fails tsc.
 */
const SYNC = `
import { changelog, listArtworks, me, postArtwork, postArtworks } from './generated/index.js';
import { client } from './generated/client.gen.js';
import type { ArtworkListItem, ChangelogEntry, Me } from './generated/index.js';

export async function sync(baseUrl: string, key: string) {
  client.setConfig({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const who: Me = (await me({ throwOnError: true })).data;

  const posted = await postArtwork({ body: { title: 'Generated Client Work', artist_name: 'Gen Artist', creation_year: 2001, price: 1200 }, throwOnError: true });
  const batch = await postArtworks({ body: { items: [{ title: 'Batch One' }, { title: 'Batch Two' }, { title: '' }] }, throwOnError: true });

  const artworks: ArtworkListItem[] = [];
  let after = 0;
  let pages = 0;
  for (;;) {
    const page = (await listArtworks({ query: { after, limit: 2 }, throwOnError: true })).data;
    artworks.push(...page.artworks);
    pages++;
    if (!page.has_more || page.next_after === null) break;
    after = page.next_after;
  }

  const changes: ChangelogEntry[] = [];
  let since = 0;
  for (;;) {
    const page = (await changelog({ query: { after: since, limit: 3 }, throwOnError: true })).data;
    changes.push(...page.changes);
    if (!page.has_more || page.next_after === null) break;
    since = page.next_after;
  }

  const refused = await postArtwork({ body: { title: '' } });
  return {
    entity: who.entity.slug,
    posted: { id: posted.data.id, created: posted.data.created, status: posted.response.status },
    batch: batch.data.results.map((r) => r.status),
    titles: artworks.map((a) => a.title),
    pages,
    changes: changes.map((c) => \`\${c.entity_type}:\${c.action}\`),
    refused: { status: refused.response?.status, error: refused.error?.error },
  };
}
`;

test('a client generated from /v1/openapi.json compiles under strict tsc and syncs against the live server', async () => {
  const { key, slug } = await tenant(t);
  await createClient({ input: `${baseUrl}/v1/openapi.json`, output: { path: join(dir, 'generated') }, logs: { level: 'silent' } });
  await writeFile(join(dir, 'sync.ts'), SYNC);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: {
      target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM', 'DOM.Iterable'],
      strict: true, noUncheckedIndexedAccess: true, skipLibCheck: false, types: [], outDir: 'out', rootDir: '.',
    },
    include: ['sync.ts', 'generated/**/*.ts'],
  }));

  // tsc prints its diagnostics on stdout: show them when it fails.
  const tsc = join(import.meta.dirname, '..', '..', 'node_modules', 'typescript', 'bin', 'tsc');
  await run(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')]).catch((error: Error & { stdout?: string }) => {
    throw new Error(`tsc failed on the generated client:\n${error.stdout ?? error.message}`);
  });

  const { sync } = await import(join(dir, 'out', 'sync.js')) as { sync: (baseUrl: string, key: string) => Promise<any> };
  const result = await sync(baseUrl, key);
  expect(result.entity).toBe(slug);
  expect(result.posted).toMatchObject({ created: true, status: 201 });
  expect(result.batch).toEqual([201, 201, 400]);
  expect(result.titles).toEqual(['Generated Client Work', 'Batch One', 'Batch Two']);
  expect(result.pages).toBe(2);
  expect(result.changes).toEqual(['artist:create', 'artwork:create', 'artwork:create', 'artwork:create']);
  expect(result.refused).toEqual({ status: 400, error: 'bad_request' });
}, 120_000);
