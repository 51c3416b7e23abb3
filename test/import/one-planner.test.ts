import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { feedFetcher } from '../../src/feeds/fetcher.js';
import { runFeed } from '../../src/feeds/run.js';
import { cli } from '../support/cli.js';
import { signedIn, uploadToImport, type ConsoleSession } from '../support/console.js';
import { closeFeeds, startFeeds, type FeedsSetup } from '../support/feeds.js';
import { csv } from '../support/file-server.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One planner (docs/architecture.md, The import planner): the same bad file through `push --dry-run`,
 * the console's Import preview and a feed's run names the same problems — line, column, message — and
 * each words its advice its own way.
 */

let setup: FeedsSetup;
let base: string;
let editor: ConsoleSession;
let dir: string;
let twins: number[];

beforeAll(async () => {
  setup = await startFeeds();
  base = await setup.t.app.listen({ port: 0, host: '127.0.0.1' });
  editor = await signedIn(setup.t, base, setup.gallery.entityId, 'editor');
  dir = mkdtempSync(join(tmpdir(), 'one-planner-'));
  // Two editions of one work: a row without an external_id matches both.
  twins = [];
  for (const external_id of ['TW-1', 'TW-2']) {
    const created = await setup.api.post('/v1/artworks', { title: 'Twin', artist_name: 'Bo Lind', creation_year: 2001, external_id });
    expect(created.status).toBe(201);
    twins.push(created.body.id as number);
  }
}, 120_000);
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await closeFeeds(setup);
});

const BAD = csv(
  'Title,Artist,Year,Price,Currency,Additional images',
  'Harbour,Ann Berg,1990,100,EUR,',
  'Storm,Ann Berg,nineties,100,EUR,',
  'Harbour,Ann Berg,1990,100,EUR,',
  'Twin,Bo Lind,2001,,,',
  'Quay,Ann Berg,1995,100,EUR,ftp://example.com/quay.jpg',
);

/** `push --dry-run --json` of `text`: its exit code, failures and stderr. */
async function push(name: string, text: string) {
  const file = join(dir, name);
  writeFileSync(file, text);
  const run = await cli(['push', file, '--kind', 'artworks', '--dry-run', '--json'], {
    ART_CATALOG_URL: base, ART_CATALOG_KEY: setup.gallery.key, ART_CATALOG_CACHE_DIR: join(dir, 'answers'),
  });
  return { ...run, failures: run.stdout ? (JSON.parse(run.stdout) as { failures: { label: string; message: string }[] }).failures : [] };
}

/** The console's Import of `text`, each column given the field in `fields` (by position): the page after Preview. */
async function consoleImport(name: string, text: string, fields: string[]) {
  const uploaded = await uploadToImport(editor, name, Buffer.from(text));
  expect(uploaded.status).toBe(303);
  const id = /\/console\/import\/([\w-]+)$/.exec(uploaded.location ?? '')![1]!;
  const posted = await editor.post(`/console/import/${id}/columns`, Object.fromEntries(fields.map((field, i) => [`column_${i}`, field])));
  return posted.status === 303 ? editor.get(`/console/import/${id}/preview`) : posted;
}

/** The rows (label, reason) of the console table captioned `caption`, as a person reads them. */
function tableRows(page: string, caption: string): { label: string; message: string }[] {
  const at = page.indexOf(`<caption class="visually-hidden">${caption}</caption>`);
  if (at < 0) return [];
  const body = page.slice(at, page.indexOf('</table>', at));
  const text = (cell: string) => cell.replace(/<[^>]+>/g, '').replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
  return [...body.matchAll(/<tr><td[^>]*>(.*?)<\/td><td[^>]*>(.*?)<\/td><\/tr>/g)].map(([, label, message]) => ({ label: text(label!), message: text(message!) }));
}

/** A feed of `text` run once (as its job runs it): its last run. */
async function feedRun(path: string, text: string) {
  // Created before the file is there: the first run reads the file with the suggested mapping, as push does.
  const created = await setup.api.post('/v1/feeds', { url: setup.files.url(path), kind: 'artworks' });
  expect(created.status).toBe(201);
  setup.files.set(path, text);
  await sql`update jobs set due_at = ${'2000-01-01T00:00:00.000Z'} where kind = 'feed_run' and key = ${`feed:${created.body.id}`}`.execute(setup.t.handle.db);
  await runFeed({ db: setup.t.handle.db, fetch: feedFetcher(() => true) }, created.body.id as number);
  const feed = (await setup.api.get(`/v1/feeds/${created.body.id}`)).body;
  await setup.api.delete(`/v1/feeds/${created.body.id}`);
  return feed.last_run as { status: string; error: string | null; problems: { line: number | null; column: string | null; message: string; level: string }[] };
}

describe('one planner for push, the console and feeds', { timeout: 120_000 }, () => {
  test('the same bad rows: push, the console and a feed run name the same line, column and message for each problem', async () => {
    const year = 'creation_year: "nineties" is not a year (such as 1990, c. 1990 or 1990–92)';
    const duplicate = 'same artwork as line 2 (same artist, title and year): not sent';
    const ambiguous = `matches several artworks (#${twins.join(', #')}) by artist, title and year; give the row an external_id`;
    // A view's URL: the problem stands in the column that fills additional_images.
    const view = 'additional_images.0.url: must be an absolute http or https URL';

    const pushed = await push('bad.csv', BAD);
    expect(pushed.failures).toEqual([
      { label: 'line 3', message: year },
      { label: 'line 4', message: duplicate },
      { label: 'line 5', message: ambiguous },
      { label: 'line 6', message: view },
    ]);

    const preview = await consoleImport('bad.csv', BAD, ['title', 'artist_name', 'creation_year', 'price', 'currency', 'additional_images']);
    expect(preview.status).toBe(200);
    expect(tableRows(preview.text, 'Rows that are refused')).toEqual([
      { label: 'line 3', message: year }, { label: 'line 5', message: ambiguous }, { label: 'line 6', message: view },
    ]);
    expect(tableRows(preview.text, 'Rows that repeat an earlier row')).toEqual([{ label: 'line 4', message: duplicate }]);

    const run = await feedRun('/bad.csv', BAD);
    expect(run.status).toBe('applied');
    expect(run.problems).toEqual([
      { line: 3, column: 'Year', message: year, level: 'error' },
      { line: 4, column: null, message: duplicate, level: 'error' },
      { line: 5, column: null, message: ambiguous, level: 'error' },
      { line: 6, column: 'Additional images', message: view, level: 'error' },
    ]);
  });

  test('a file with no title column: push advises its --map flag, a feed run names the problem without CLI advice, the console (every column given a field by a person) neither', async () => {
    const noTitle = csv('Thing,Year', 'Harbour,1990');
    const problem = 'no title column: every row needs a title; the columns left out are "Thing"';

    const pushed = await push('no-title.csv', noTitle);
    expect(pushed.code).toBe(2);
    expect(pushed.stderr.trim()).toBe(`art-catalog: cannot push ${join(dir, 'no-title.csv')}: ${problem} (map one with --map "COLUMN=title")`);

    const page = await consoleImport('no-title.csv', noTitle, ['', 'creation_year']);
    expect(page.status).toBe(400);
    expect(page.text).toContain('<div class="notice notice-error" role="alert">no title column: every row needs a title</div>');
    expect(page.text).not.toContain('--map');

    const run = await feedRun('/no-title.csv', noTitle);
    expect(run).toMatchObject({ status: 'failed', error: problem, problems: [] });
  });
});
