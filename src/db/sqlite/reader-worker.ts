// The reader thread of src/db/sqlite/reader.ts: its own read-only connection to the database file
// (WAL lets it read while the main connection writes) answers the statements whose cost grows with a
// catalog, so that the event loop never waits for them. It also checkpoints the WAL file, on a
// connection of its own, so that copying pages back into the database never happens on the event loop.
// Self-contained on purpose: Node runs this file as it is (compiled, or with its types stripped under
// the test runner).
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

type Request = { id: number; sql: string; parameters: unknown[] } | { id: number; checkpoint: true } | { close: true };

const { path, busyTimeoutMs } = workerData as { path: string; busyTimeoutMs: number };
const db = new Database(path, { readonly: true, fileMustExist: true });
db.pragma(`busy_timeout = ${Number(busyTimeoutMs)}`);
db.pragma('cache_size = -8000');

const MAX_PREPARED = 200;
const prepared = new Map<string, Database.Statement>();

function prepare(sql: string): Database.Statement {
  let statement = prepared.get(sql);
  if (!statement) {
    if (prepared.size >= MAX_PREPARED) prepared.delete(prepared.keys().next().value!);
    statement = db.prepare(sql);
    if (statement.reader) statement.raw(true);
    prepared.set(sql, statement);
  }
  return statement;
}

let checkpointer: Database.Database | null = null;

/** A passive checkpoint: copies what no reader still needs, never waits for a lock. */
function checkpoint(): unknown[][] {
  checkpointer ??= new Database(path, { fileMustExist: true });
  return [Object.values(checkpointer.pragma('wal_checkpoint(PASSIVE)', { simple: false }) as object)];
}

parentPort!.on('message', (request: Request) => {
  if ('close' in request) {
    // The thread ends on its own once its port is closed: nothing native is under way when it stops.
    checkpointer?.close();
    db.close();
    parentPort!.close();
    return;
  }
  const { id } = request;
  try {
    if ('checkpoint' in request) {
      parentPort!.postMessage({ id, columns: ['busy', 'log', 'checkpointed'], rows: checkpoint() });
      return;
    }
    const { sql, parameters } = request;
    const statement = prepare(sql);
    if (!statement.reader) throw new Error('the reader thread runs statements that return rows only');
    const rows = statement.all(parameters) as unknown[][];
    parentPort!.postMessage({ id, columns: statement.columns().map((column) => column.name), rows });
  } catch (error) {
    const { message, code } = error as { message?: string; code?: string };
    parentPort!.postMessage({ id, error: { message: message ?? String(error), code } });
  }
});
