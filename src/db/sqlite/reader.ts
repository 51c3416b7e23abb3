import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { databaseUnavailable } from '../errors.js';
import { rowBuilder, type RowBuilder } from './prepared.js';

/** Scans waiting at most; beyond this a request is refused at once (503) instead of queueing for ever. */
const MAX_PENDING = 256;
/** The reader's own wait for a lock another process holds, blocking only the reader thread. */
const READER_BUSY_TIMEOUT_MS = 250;
/** How long closing waits for the thread to finish its scans and close its connections before stopping it. */
const CLOSE_GRACE_MS = 10_000;

type Answer = { id: number; columns: string[]; rows: unknown[][] } | { id: number; error: { message: string; code?: string } };

/** The compiled worker beside this module, or its TypeScript source when the tests run from src/. */
function workerFile(): URL {
  const compiled = new URL('./reader-worker.js', import.meta.url);
  return existsSync(fileURLToPath(compiled)) ? compiled : new URL('./reader-worker.ts', import.meta.url);
}

/**
 * A thread that answers scans (statements whose cost grows with a catalog) on a read-only connection of
 * its own, one at a time, while the event loop goes on serving other requests. Started on first use;
 * a crashed thread is replaced on the next scan.
 */
export class SqliteReader {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (rows: unknown[]) => void; reject: (error: unknown) => void }>();
  private readonly builders = new Map<string, RowBuilder>();
  private closed = false;

  constructor(private readonly path: string) {}

  run(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    // Closed: no new thread for a database being closed.
    if (this.closed || this.pending.size >= MAX_PENDING) return Promise.reject(databaseUnavailable());
    return this.send({ sql, parameters });
  }

  /**
   * Checkpoints the WAL file on the thread (PASSIVE: it waits for no lock and blocks no writer). Once
   * closed, nothing: a late commit must not start a thread for a database being closed or removed.
   */
  checkpoint(): Promise<unknown[]> {
    if (this.closed) return Promise.resolve([]);
    return this.send({ checkpoint: true });
  }

  private send(request: { sql: string; parameters: readonly unknown[] } | { checkpoint: true }): Promise<unknown[]> {
    const worker = this.worker ?? this.start();
    const id = this.nextId++;
    return new Promise<unknown[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, ...request });
    });
  }

  /**
   * Asks the thread to close its connections and end, after the scans already sent. Not
   * `worker.terminate()` at once: stopping a thread inside better-sqlite3's native code (loading the
   * addon, or a statement under way) aborts the whole process (WiseLibs/better-sqlite3#1507; seen here
   * when a server closed right after its first scan started the thread). Stopped all the same if it
   * has not ended after CLOSE_GRACE_MS (a scan that never ends).
   */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = null;
    if (!worker) return;
    const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ close: true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), CLOSE_GRACE_MS); });
    if (await Promise.race([ended.then(() => false), late])) await worker.terminate();
    clearTimeout(timer);
  }

  /** Whether the thread runs now: a scan or a checkpoint started it, and it has not ended. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** The WAL file's size in bytes (0 while there is none). */
  walBytes(): number {
    try {
      return statSync(`${this.path}-wal`).size;
    } catch {
      return 0;
    }
  }

  private start(): Worker {
    const worker = new Worker(workerFile(), { workerData: { path: this.path, busyTimeoutMs: READER_BUSY_TIMEOUT_MS } });
    // The thread never keeps a process alive on its own (a CLI command that forgot to close).
    worker.unref();
    worker.on('message', (answer: Answer) => this.answer(answer));
    const fail = (error: unknown) => {
      if (this.worker === worker) this.worker = null;
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the SQLite reader thread exited (${code})`)));
    this.worker = worker;
    return worker;
  }

  private answer(answer: Answer): void {
    const waiting = this.pending.get(answer.id);
    if (!waiting) return;
    this.pending.delete(answer.id);
    if ('error' in answer) {
      waiting.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
      return;
    }
    const key = answer.columns.join('\u0000');
    let toRow = this.builders.get(key);
    if (!toRow) {
      if (this.builders.size >= 500) this.builders.clear();
      this.builders.set(key, (toRow = rowBuilder(answer.columns)));
    }
    waiting.resolve(answer.rows.map(toRow));
  }
}
