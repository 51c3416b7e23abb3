import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startApp, tenant, type Tenant, type TestApp } from '../helpers.js';
import { BIN } from '../support/serve.js';

// The other CLI files run the program in-process (test/support/cli.ts); these start the real bin/art-catalog
// to prove that what the program prints and the status it ends with reach the process: its streams, its
// exit status and its environment.
const ROOT = join(import.meta.dirname, '..', '..');

interface Run { code: number; stdout: string; stderr: string }

function launch(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(BIN, args, { env: { ...process.env, LOG_LEVEL: 'silent', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('the real bin/art-catalog', () => {
  let t: TestApp;
  let g: Tenant;
  let base: string;
  beforeAll(async () => {
    t = await startApp({ RATE_LIMIT_SUBSCRIBER: '100000' });
    g = await tenant(t);
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => { await t.close(); });

  test('--version prints the version on stdout and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(await launch(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  test('an unknown command is one line on stderr with a suggestion, nothing on stdout, exit 1', async () => {
    const run = await launch(['entiti', 'list']);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe("error: unknown command 'entiti' (Did you mean entity?)\n");
    expect(run.code).toBe(1);
  });

  test('a command\'s own error status reaches the process: a missing key is exit 1, a stopped push exit 2', async () => {
    const example = join(ROOT, 'examples', 'artworks.csv');
    const noKey = await launch(['push', example, '--kind', 'artworks', '--base-url', base], { ART_CATALOG_KEY: '' });
    expect(noKey).toEqual({ code: 1, stdout: '', stderr: 'art-catalog: no API key: pass --key or set ART_CATALOG_KEY\n' });
    const stopped = await launch(['push', example, '--kind', 'artworks', '--base-url', base, '--key', `ak_live_${'x'.repeat(32)}`]);
    expect(stopped.stdout).toBe('');
    expect(stopped.code).toBe(2);
  });

  test('push reads ART_CATALOG_URL and ART_CATALOG_KEY from the environment, prints its summary on stdout and progress on stderr, and exits 1 when rows failed', async () => {
    const run = await launch(['push', join(ROOT, 'examples', 'artworks.csv'), '--kind', 'artworks'], { ART_CATALOG_URL: base, ART_CATALOG_KEY: g.key });
    expect(run.stdout).toContain('267 rows: created 259, updated 0, unchanged 0, duplicate 3, failed 5');
    expect(run.stderr).toMatch(/progress 259\/259/);
    expect(run.code).toBe(1);
  });
});
