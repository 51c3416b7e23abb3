import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { freshDatabase, type FreshDatabase } from '../helpers.js';
import { spawnServe, type ServeProcess } from '../support/serve.js';

const ROOT = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);

/** The text of a document's section: from its heading to the next heading of the same level, or the end. */
function section(file: string, heading: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  expect(start, `${file} lacks "${heading}"`).toBeGreaterThanOrEqual(0);
  const level = heading.slice(0, heading.indexOf(' ') + 1);
  const end = text.indexOf(`\n${level}`, start + heading.length + 2);
  return text.slice(start, end < 0 ? undefined : end);
}

/**
 * The shell blocks of the README's five-minute tour, then those of docs/api.md's walk through the
 * API, in order, except the one that starts the server and the `push` runs (test/process/push.test.ts runs
 * those on the same example files).
 */
function tourBlocks(): string[] {
  const tour = section('README.md', '## A five-minute tour') + section('docs/api.md', '## A walk through the API');
  return [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)
    .filter((block) => block.trim() !== 'npm start' && !block.includes('bin/art-catalog push'));
}

/** An error answer's body starts with "error"; a batch result merely contains per-item errors. */
const ERROR_ANSWER = /(^|[}\n])\{"error":/;

let database: FreshDatabase;
let server: ServeProcess;
let base: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  database = await freshDatabase();
  env = { ...process.env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' };
  server = spawnServe(env);
  base = await server.url;
});

afterAll(async () => {
  await server.stop();
  await database.drop();
});

test('every curl example of the README tour and of the API walk in docs/api.md works as written', async () => {
  const blocks = tourBlocks();
  expect(blocks.length).toBeGreaterThan(6);
  // One shell session: the tour's exports carry over from block to block, as in a reader's terminal.
  const script = blocks.map((block, i) => `echo "@@block ${i}"\n${block.replace('export BASE=http://127.0.0.1:3000', `export BASE=${base}`)}\necho`).join('\n');
  const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env });
  const outputs = stdout.split(/@@block \d+\n/).slice(1);
  expect(outputs).toHaveLength(blocks.length);
  for (const [i, block] of blocks.entries()) {
    const output = outputs[i]!;
    if (!block.includes('curl')) continue;
    if (block.includes('"error":"bad_request"')) {
      expect(output).toMatch(ERROR_ANSWER);
      continue;
    }
    expect(output, `block ${i}:\n${block}`).not.toMatch(ERROR_ANSWER);
    expect(output.trim().length, `block ${i} printed nothing`).toBeGreaterThan(0);
  }
  expect(stdout).toContain('"created":false');
  expect(stdout).toContain('"deleted":true');
  expect(stdout).toContain('"results":[{"index":0,"status":201');
});

test('the README opens with the two commands a newcomer runs, and nothing else', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const first = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  expect(first.trim().split('\n').map((line) => line.split('#')[0]!.trim())).toEqual(['npm ci && npm start', 'npm test']);
});

test('the README stays a front door: at most 300 lines, none longer than 160 characters', () => {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  expect(lines.length).toBeLessThanOrEqual(300);
  expect(lines.filter((line) => [...line].length > 160)).toEqual([]);
});
