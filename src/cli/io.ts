import { AsyncLocalStorage } from 'node:async_hooks';

/** Where a stream's text goes: process.stdout or, in a test, a collector. */
export interface CliStream {
  write(text: string): unknown;
  /** A terminal's width; a stream without one (a pipe, a file, a collector) is not a terminal. */
  readonly columns?: number;
  readonly isTTY?: boolean;
}

/** What one run of the CLI reads and writes besides its arguments. */
export interface CliIo {
  stdout: CliStream;
  stderr: CliStream;
  env: NodeJS.ProcessEnv;
}

interface RunState { io: CliIo; exitCode: number }

// The commands reach their streams, environment and exit status through one accessor, so a test runs the
// same program in its own process (src/cli/program.ts `run`) that bin/art-catalog runs in a new one.
const current = new AsyncLocalStorage<RunState>();

const processIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** The running command's streams and environment (the process's own outside a run). */
export function cliIo(): CliIo {
  return current.getStore()?.io ?? processIo();
}

/** Ends the running command with this status once it returns (a push with failed rows: 1). */
export function setExitCode(code: number): void {
  const state = current.getStore();
  if (state) state.exitCode = code;
  else process.exitCode = code;
}

/** Runs `body` with `io` as the CLI's streams and environment; resolves to the exit status it set (0 otherwise). */
export async function withCliIo(io: CliIo, body: () => Promise<number>): Promise<number> {
  const state: RunState = { io, exitCode: 0 };
  const code = await current.run(state, body);
  return code || state.exitCode;
}
