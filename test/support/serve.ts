import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connect } from '../../src/db/connect.js';
import { TIER_SCOPES } from '../../src/domain/keys.js';
import { createEntity } from '../../src/store/entities.js';
import { createKey } from '../../src/store/keys.js';
import { migratedDatabase, type FreshDatabase } from './database.js';

export const BIN = join(import.meta.dirname, '..', '..', 'bin', 'art-catalog');
/** The JavaScript the launcher BIN (a shell script) runs, for starting it on a Node.js of a test's choice. */
export const BIN_ENTRY = `${BIN}.js`;

export interface CliResult { code: number; stdout: string; stderr: string }

/**
 * `bin/art-catalog ARGS` on the database `databaseUrl`, logs off, `env` added: its exit code and both
 * streams, whether it succeeded or not.
 */
export async function runCli(databaseUrl: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  try {
    const { stdout, stderr } = await promisify(execFile)(BIN, args, { env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as CliResult;
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * The URL in the server's "listening on URL" log line, whether that line is JSON (stdout piped, the
 * URL ends at the closing quote) or pino-pretty's text.
 */
export const LISTENING = /listening on (http:\/\/[^\s"]+)/;

export interface ServeProcess {
  child: ChildProcess;
  /** The URL the server printed, e.g. http://127.0.0.1:40123. */
  url: Promise<string>;
  /** The exit code, once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<number | null>;
}

export interface SpawnOptions {
  /** Node.js options for the server process (it then runs as `node OPTIONS bin/art-catalog.js serve`). */
  nodeArgs?: string[];
}

/** Runs the real `bin/art-catalog serve` on a free port (unless env.PORT says otherwise). */
export function spawnServe(env: NodeJS.ProcessEnv, { nodeArgs }: SpawnOptions = {}): ServeProcess {
  const serveEnv = { ...process.env, PORT: '0', LOG_LEVEL: 'silent', ...env };
  const child = nodeArgs
    ? spawn(process.execPath, [...nodeArgs, BIN_ENTRY, 'serve'], { env: serveEnv })
    : spawn(BIN, ['serve'], { env: serveEnv });
  if (process.env.DEBUG_SERVE) child.stdout.pipe(process.stderr);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = LISTENING.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    child.once('exit', (code, signal) => reject(new Error(`serve exited early (${code ?? signal})`)));
  });
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    return exited;
  };
  return { child, url, exited, stop };
}

/** A fresh migrated database holding one gallery and a partner key for it, for tests of the real process. */
export async function databaseWithKey(): Promise<{ database: FreshDatabase; key: string }> {
  const database = await migratedDatabase();
  const handle = connect(database.url);
  try {
    const entity = await createEntity(handle.db, { type: 'gallery', name: 'Process Test Gallery' });
    const { key } = await createKey(handle.db, { entityId: entity.id, tier: 'partner', scopes: TIER_SCOPES.partner, expiresAt: null });
    return { database, key };
  } finally {
    await handle.close();
  }
}
