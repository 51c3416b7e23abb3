import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DIALECT, freshDatabase, type FreshDatabase } from '../helpers.js';
import { BIN, spawnServe } from '../support/serve.js';

const ROOT = join(import.meta.dirname, '..', '..');
const MIN_MAJOR = 22;

interface Run { code: number | null; stdout: string; stderr: string }
const run = (file: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }) => new Promise<Run>((resolve) => {
  execFile(file, args, options, (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }));
});

const majorOf = (node: string): number => {
  try {
    return Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]']).toString().trim());
  } catch {
    return Number.NaN;
  }
};
/**
 * A Node.js older than 22 on this machine: the kind this project's machines come with (Node 20 in
 * /usr/bin). The refusal tests need a real one; on a machine without any they are skipped.
 */
const OLD_NODE = [...(process.env.PATH ?? '').split(delimiter), '/usr/local/bin', '/usr/bin']
  .map((dir) => join(dir, 'node')).find((node) => existsSync(node) && majorOf(node) < MIN_MAJOR);

const scratch = mkdtempSync(join(tmpdir(), 'art-catalog-launcher-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/**
 * A copy of the launcher in a clone-like directory of its own (the launcher finds node_modules next to
 * itself), running this checkout's build. `runtime`: what node_modules/.bin/node is, if anything.
 */
function clone(name: string, runtime?: string): string {
  const dir = join(scratch, name);
  mkdirSync(join(dir, 'bin'), { recursive: true });
  for (const file of ['art-catalog', 'art-catalog.js']) copyFileSync(join(ROOT, 'bin', file), join(dir, 'bin', file));
  symlinkSync(join(ROOT, 'dist'), join(dir, 'dist'));
  if (runtime) {
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(runtime, join(dir, 'node_modules', '.bin', 'node'));
  }
  return dir;
}

/** A PATH holding only the commands the launcher needs besides Node.js, plus `extra` directories. */
function bareTools(): string {
  const tools = join(scratch, 'tools');
  if (!existsSync(tools)) {
    mkdirSync(tools);
    for (const command of ['sh', 'readlink']) symlinkSync(execFileSync('sh', ['-c', `command -v ${command}`]).toString().trim(), join(tools, command));
  }
  return tools;
}
const pathWith = (...dirs: string[]) => [...dirs, bareTools()].join(delimiter);

// The launcher does not depend on the database; one pass is enough.
describe.skipIf(DIALECT !== 'sqlite')('bin/art-catalog on the Node.js it finds', () => {
  test.skipIf(!OLD_NODE)('started from a shell whose node is too old, it runs on the runtime npm ci brought into node_modules/.bin', async () => {
    const dir = clone('brought', process.execPath);
    const result = await run(join(dir, 'bin', 'art-catalog'), ['--version'], { env: { PATH: pathWith(dirname(OLD_NODE!)) } });
    expect(result).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
  });

  test.skipIf(!OLD_NODE)('with no runtime brought and only an old node on the PATH, it says so in one line and exits 1', async () => {
    const dir = clone('old-only');
    const version = execFileSync(OLD_NODE!, ['-p', 'process.versions.node']).toString().trim();
    const result = await run(join(dir, 'bin', 'art-catalog'), ['key', 'list', '--entity', '1'], { env: { PATH: pathWith(dirname(OLD_NODE!)) } });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `art-catalog: Node.js ${version} is too old (22, 24 or 26 needed); run npm ci in ${dir} to bring Node 24, or install Node.js 24\n`,
    });
  });

  test('it keeps Node\'s compile cache in its own node_modules/.cache, never in the shared temp folder; NODE_DISABLE_COMPILE_CACHE=1 or a folder it cannot write turns the cache off, with no message', async () => {
    const temp = join(scratch, 'temp');
    mkdirSync(temp, { recursive: true });
    // No NODE_COMPILE_CACHE of the test runner's: the launcher's own choice is what is tested.
    const env = { PATH: pathWith(), TMPDIR: temp };
    const dir = clone('compile-cache', process.execPath);
    expect(await run(join(dir, 'bin', 'art-catalog'), ['--version'], { env })).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    expect(readdirSync(join(dir, 'node_modules', '.cache', 'node-compile-cache')).length).toBeGreaterThan(0);
    expect(readdirSync(temp)).toEqual([]);

    const off = clone('compile-cache-off', process.execPath);
    expect(await run(join(off, 'bin', 'art-catalog'), ['--version'], { env: { ...env, NODE_DISABLE_COMPILE_CACHE: '1' } })).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    expect(existsSync(join(off, 'node_modules', '.cache'))).toBe(false);

    // An install its user cannot write to (root's, run by a service account): a file where the folder would go.
    const readOnly = clone('compile-cache-read-only', process.execPath);
    writeFileSync(join(readOnly, 'node_modules', '.cache'), '');
    expect(await run(join(readOnly, 'bin', 'art-catalog'), ['--version'], { env })).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    expect(readdirSync(temp)).toEqual([]);
  });

  test('with no Node.js at all, it says so in one line and exits 1', async () => {
    const dir = clone('none');
    const result = await run(join(dir, 'bin', 'art-catalog'), ['serve'], { env: { PATH: pathWith() } });
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `art-catalog: no Node.js on the PATH (22, 24 or 26 needed); run npm ci in ${dir} to bring Node 24, or install Node.js 24\n`,
    });
  });
});

describe.skipIf(DIALECT !== 'sqlite')('npm ci bringing a runtime (scripts/bring-node.sh, the preinstall)', () => {
  /** A checkout with the install scripts and a runtime cache already holding "Node 24" (this test's Node.js). */
  function checkout(name: string): { dir: string; env: NodeJS.ProcessEnv } {
    const dir = join(scratch, name);
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    for (const file of ['bring-node.sh', 'node-runtime.sh']) copyFileSync(join(ROOT, 'scripts', file), join(dir, 'scripts', file));
    const cache = join(dir, 'cache');
    mkdirSync(join(cache, '24.21.0', 'bin'), { recursive: true });
    symlinkSync(process.execPath, join(cache, '24.21.0', 'bin', 'node'));
    return { dir, env: { ...process.env, ART_CATALOG_NODE_CACHE: cache } };
  }

  test.skipIf(!OLD_NODE)('run by npm on an old Node.js, it puts the cached runtime at node_modules/.bin/node and says so', async () => {
    const { dir, env } = checkout('install-old');
    const result = await run('sh', ['scripts/bring-node.sh'], { cwd: dir, env: { ...env, npm_node_execpath: OLD_NODE } });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/^art-catalog: this machine's Node\.js 20\.\d+\.\d+ is too old \(22, 24 or 26 needed\); npm scripts and bin\/art-catalog run on Node \d+\.\d+\.\d+ from node_modules\/\.bin\/node\n$/);
    expect(execFileSync(join(dir, 'node_modules', '.bin', 'node'), ['--version']).toString().trim()).toBe(process.version);
  });

  test('run by npm on a supported Node.js, it fetches nothing and removes a runtime an earlier install brought', async () => {
    const { dir, env } = checkout('install-supported');
    mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(process.execPath, join(dir, 'node_modules', '.bin', 'node'));
    const result = await run('sh', ['scripts/bring-node.sh'], { cwd: dir, env: { ...env, npm_node_execpath: process.execPath } });
    expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    expect(readdirSync(join(dir, 'node_modules', '.bin'))).toEqual([]);
  });

  test('no dependency compiled a native addon at install: better-sqlite3 loads its prebuilt N-API binary on this runtime', () => {
    const compiled = execFileSync('find', ['node_modules', '-path', '*/build/*', '-name', '*.node'], { cwd: ROOT }).toString();
    expect(compiled).toBe('');
    const require = createRequire(join(ROOT, 'package.json'));
    const Database = require('better-sqlite3') as typeof import('better-sqlite3');
    const db = new Database(':memory:');
    expect(db.prepare('select sqlite_version() as v').get()).toMatchObject({ v: expect.stringMatching(/^3\./) });
    db.close();
  });
});

describe.skipIf(DIALECT !== 'sqlite')('a second server on a port already taken', () => {
  let database: FreshDatabase;
  beforeAll(async () => { database = await freshDatabase(); });
  afterAll(() => database.drop());

  test('npm start twice: the second says in one line which port is taken and what to do, and exits 1', async () => {
    const first = spawnServe({ DATABASE_URL: database.url });
    try {
      const port = new URL(await first.url).port;
      const second = await run(BIN, ['serve'], { env: { ...process.env, DATABASE_URL: database.url, PORT: port, LOG_LEVEL: 'info', LOG_FORMAT: 'json' } });
      expect(second).toEqual({
        code: 1,
        stdout: '',
        stderr: `art-catalog: port ${port} on 127.0.0.1 is already in use (another art-catalog serve?); stop that process, or choose another port: PORT=${Number(port) + 1} npm start\n`,
      });
    } finally {
      expect(await first.stop()).toBe(0);
    }
  });
});
