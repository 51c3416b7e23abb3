import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type PgModule from 'pg';
import { PostgresRuntime } from './postgres/runtime.js';
import { attachRuntime } from './run.js';
import { SqliteReader } from './sqlite/reader.js';
import { SqliteRuntime } from './sqlite/runtime.js';
import type { Database, Db } from './types.js';

// pg is loaded only when a postgres:// URL asks for it: the embedded default never pays its memory.
const require = createRequire(import.meta.url);

export type Dialect = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Db;
  dialect: Dialect;
  /**
   * Resolves when the database answers a trivial statement (`/healthz`). On PostgreSQL it has a
   * connection of its own: behind a pool busy with 100 large reads, a health check waited its turn
   * (87 ms measured) and could pass its deadline — a busy pool is load, not an outage.
   */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** PostgreSQL pool size. */
  poolSize?: number;
  /**
   * PostgreSQL: how many large reads (slices of large answers, `readBulk`) run at once; default 2.
   * The rest wait for one of them, so the pool's other connections stay free for small requests.
   */
  bulkReads?: number;
  /** PostgreSQL statement timeout in milliseconds. */
  statementTimeoutMs?: number;
  /**
   * SQLite: how long a statement blocks waiting for a lock another process holds (busy_timeout).
   * Default 0: the server never blocks its event loop; its writes wait between tries instead
   * (src/db/sqlite/runtime.ts) and answer 503 after a short while. The CLI, which blocks nobody, waits longer.
   */
  busyTimeoutMs?: number;
  /**
   * PostgreSQL: how long opening one connection may take. Default 750 ms: a server that does not answer
   * (a host that swallows packets) fails the request with 503 within a second (docs/api.md, Service unavailable (503)); a refused
   * connection fails at once. Waiting for a free connection of a busy pool is bounded separately, by the
   * statement timeout: that is load, not an outage. The CLI waits longer.
   */
  connectTimeoutMs?: number;
}

/** PostgreSQL: the application_name of ping()'s own connection (DatabaseHandle.ping). */
export const PING_APPLICATION_NAME = 'art-catalog health check';

export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgres';
  throw new Error(`DATABASE_URL must start with sqlite: or postgres:// (got "${url.split(':')[0]}:")`);
}

/**
 * A new database file is created readable by its owner only (0600, in a folder made 0700): it holds
 * key hashes and console sessions. SQLite gives its -wal and -shm files the database file's mode.
 * An existing file keeps the mode the operator gave it.
 */
function createPrivately(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

/** Opens the database named by a DATABASE_URL (`sqlite:PATH`, `sqlite::memory:` or `postgres://…`). */
export function connect(url: string, options: ConnectOptions = {}): DatabaseHandle {
  const dialect = dialectOf(url);
  return dialect === 'sqlite' ? connectSqlite(url.slice('sqlite:'.length), options) : connectPostgres(url, options);
}

function connectSqlite(path: string, { busyTimeoutMs = 0 }: ConnectOptions): DatabaseHandle {
  if (path !== ':memory:') createPrivately(path);
  const sqlite = new SQLite(path);
  sqlite.pragma('journal_mode = WAL');
  // NORMAL keeps every committed transaction across a process crash; only an OS crash may lose the last ones.
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // What a row held before it changed or went is overwritten with zeros, not left in the file's free space:
  // a secret sealed in place (a key's, a webhook's) is then not readable in a copy of the file
  // (docs/operations.md, Secrets at rest).
  sqlite.pragma('secure_delete = ON');
  sqlite.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // With a reader thread, the WAL is checkpointed there (sqlite/runtime.ts); this is only the backstop.
  sqlite.pragma(`wal_autocheckpoint = ${path === ':memory:' ? 10_000 : 100_000}`);
  // 8 MB of pages in the process; the operating system's file cache holds the rest of a large catalog
  // outside the process's memory, a system call away.
  sqlite.pragma('cache_size = -8000');
  // A batch's savepoints journal the pages each item changes; in memory that costs a copy, on disk a write.
  sqlite.pragma('temp_store = MEMORY');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  // An in-memory database has no file another connection could read: its scans stay on the main one.
  const reader = path === ':memory:' ? null : new SqliteReader(path);
  attachRuntime(db, new SqliteRuntime(db, sqlite, reader));
  return {
    db, dialect: 'sqlite',
    // Synchronous on the main connection: it waits for no queue.
    ping: () => sql`select 1`.execute(db),
    async close() {
      await reader?.close();
      await db.destroy();
      // Kysely's driver opens (and so closes) its connection only once a query went through Kysely itself;
      // the runtime runs most on `sqlite` directly. Closing it here is what checkpoints the WAL into the
      // file and releases it, not the garbage collector some time later.
      if (sqlite.open) sqlite.close();
    },
  };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query anew; preparing costs as much as running a point query. The SQL text of
 * a query shape never changes (values are parameters), so prepared statements are kept by text.
 * better-sqlite3 runs them synchronously, so one statement is never in use twice at once.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        // Shapes are few; a bound keeps a caller that builds SQL from data from growing it forever.
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
        statement = sqlite.prepare(sql);
        statements.set(sql, statement);
      }
      return statement;
    },
  };
}

function connectPostgres(url: string, { poolSize = 10, bulkReads = 2, statementTimeoutMs = 10_000, connectTimeoutMs = 750 }: ConnectOptions): DatabaseHandle {
  const pg = require('pg') as typeof PgModule;
  // BIGINT (prices, counts) arrives as a string by default; every value we store fits a JS number.
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  // The pool passes its options to each client: the client's own connect deadline is the short one,
  // the pool's (waiting for a free connection) is as long as a statement may run.
  class Client extends pg.Client {
    constructor(config?: PgModule.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
      // A connection the server ends while it is checked out (a query running, or a transaction between
      // two statements) emits 'error' with no pool listener on it: unhandled, that would crash the
      // process. Its queries fail on their own (the request answers 503), and the pool drops it on release.
      this.on('error', () => undefined);
    }
  }
  const pool = new pg.Pool({ connectionString: url, max: poolSize, statement_timeout: statementTimeoutMs, connectionTimeoutMillis: statementTimeoutMs, Client });
  // One connection kept for ping(), opened with the short deadline and never waiting behind the pool;
  // named, so that pg_stat_activity tells it from the pool's.
  const pingPool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 0, statement_timeout: statementTimeoutMs, connectionTimeoutMillis: connectTimeoutMs, application_name: PING_APPLICATION_NAME, Client });
  // An idle connection the server ends (a restart, a failover, an admin's terminate) is dropped by the
  // pool, which then emits 'error': unhandled, that would crash the process. The next query reconnects.
  pool.on('error', () => undefined);
  pingPool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  attachRuntime(db, new PostgresRuntime(db, pool, Math.min(bulkReads, poolSize)));
  return {
    db, dialect: 'postgres',
    ping: () => pingPool.query('select 1'),
    async close() {
      await Promise.all([db.destroy(), pingPool.end()]);
    },
  };
}
