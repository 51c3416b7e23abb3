import { run } from '../../src/cli/program.js';
import type { CliResult } from './serve.js';

/** What one CLI run printed and how it ended, like a finished process's. */
export interface CliRun { code: number; stdout: string; stderr: string; ms: number }

/**
 * The CLI's program (src/cli/program.ts) run in the test's own process: the same commands, output and exit
 * status as `bin/art-catalog ARGS` without a Node.js start (~0.4 s) per call. `env` is added to the test's
 * environment, as to a child process's. The launcher itself, exit by signal,
 * stdin and pipes are proven with real processes (test/process/launcher.test.ts, cli-process.test.ts).
 */
export async function cli(args: readonly string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const started = Date.now();
  const code = await run(args, {
    stdout: { write: (text: string) => stdout.push(text) },
    stderr: { write: (text: string) => stderr.push(text) },
    env: { ...process.env, ...env },
  });
  return { code, stdout: stdout.join(''), stderr: stderr.join(''), ms: Date.now() - started };
}

/** `runCli` (test/support/serve.ts) in-process: the CLI on the database `databaseUrl`, logs off, `env` added. */
export async function cliOn(databaseUrl: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const { code, stdout, stderr } = await cli(args, { DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env });
  return { code, stdout, stderr };
}
