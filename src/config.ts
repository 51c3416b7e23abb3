import { isIP } from 'node:net';
import { dirname } from 'node:path';
import type { Tier } from './domain/keys.js';
import { parseImageStore } from './images/store/location.js';
import type { S3Settings } from './images/store/s3.js';

/** Everything the service reads from the environment (docs/operations.md, Configuration), with its default. */
export interface Config {
  /** PORT: listen port, default 3000; 0 picks a free one. */
  port: number;
  /** HOST: listen address, default 127.0.0.1. */
  host: string;
  /** DATABASE_URL: `sqlite:PATH` (default sqlite:./data/art-catalog.db) or `postgres://…`. */
  databaseUrl: string;
  /** REDIS_URL: optional; shares rate-limit counters and idempotency locks between processes. */
  redisUrl: string | undefined;
  /** REDIS_KEY_PREFIX: prefix of every Redis key, default `art-catalog:` (several deployments, one Redis). */
  redisKeyPrefix: string;
  /**
   * PUBLIC_BASE_URL: base of links on public pages and feeds, default http://HOST:PORT. With PORT=0
   * the default names the port actually bound: the app sets it when it starts listening (so readers
   * take it per request, not at start-up).
   */
  publicBaseUrl: string;
  /** Whether PUBLIC_BASE_URL was left unset, so the base URL follows the address the server binds. */
  publicBaseUrlIsDefault: boolean;
  /** LOG_LEVEL: pino level, default info. */
  logLevel: string;
  /** RATE_LIMIT_FREE / _SUBSCRIBER / _PARTNER: requests per window per key, defaults 30, 120, 600. */
  rateLimits: Record<Tier, number>;
  /** RATE_LIMIT_WINDOW_S: the fixed window in seconds, default 60. */
  rateLimitWindowS: number;
  /** RATE_LIMIT_LEASE: with Redis, a key's units a process may count before telling Redis (at most a twentieth of the limit), default 20; 1: every request asks Redis. */
  rateLimitLease: number;
  /** PG_POOL_SIZE: PostgreSQL connections per process, default 10. */
  pgPoolSize: number;
  /**
   * PG_BULK_READS: how many slices of large answers (changelog pages) a process reads from PostgreSQL
   * at once, default 2 (at most PG_POOL_SIZE); the rest wait their turn, so the pool's other
   * connections stay free for small requests and the database's cores are not all taken by them.
   */
  pgBulkReads: number;
  /** PG_STATEMENT_TIMEOUT_MS: PostgreSQL statement timeout, default 10000. */
  pgStatementTimeoutMs: number;
  /**
   * METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`; unset, it is open.
   * Set but empty (or with spaces, which no Bearer header can carry) is refused at start-up: an
   * operator who wrote `METRICS_TOKEN=` meant to close /metrics, not to leave it open.
   */
  metricsToken: string | undefined;
  /** LOG_FORMAT: `json` or `pretty`; unset, pretty when stdout is a terminal and JSON otherwise. */
  logFormat: LogFormat | undefined;
  /** PUBLIC_RATE_LIMIT: keyless requests per window per client address, default 300 (docs/public-pages.md, Limits per client address). */
  publicRateLimit: number;
  /** PUBLIC_CACHE_MB: memory for built public pages and feeds per process, default 64. */
  publicCacheMb: number;
  /** ANSWER_CACHE_MB: memory for API answers kept per data version (and their compressed copies) per process, default 32. */
  answerCacheMb: number;
  /**
   * NOT_MODIFIED_MEMO_KB: memory for the (key, URL) pairs whose 304, or kept answer, is sent
   * before the framework (fast-not-modified.ts) per process, default 1024; 0 sends all through it.
   */
  notModifiedMemoKb: number;
  /**
   * TRUST_PROXY: which proxies may name the client in `X-Forwarded-For` (and the scheme and host in
   * `X-Forwarded-Proto`/`-Host`), for per-address limits and logs. Default `false`: the client is the
   * peer address. `true` trusts every hop (only behind a proxy that overwrites the header); a
   * comma-separated list trusts those addresses or CIDR ranges (e.g. `127.0.0.1,10.0.0.0/8`), the safe
   * choice. (A hop count is refused: Fastify cannot check the peer with one, and ignores it.)
   */
  trustProxy: TrustProxy;
  /**
   * SHUTDOWN_TIMEOUT_MS: how long `serve` waits, after SIGTERM/SIGINT, for requests in flight before it
   * exits non-zero anyway; default 9000 (docs/operations.md, Failure, shutdown and slow clients: stopped within 10 s).
   */
  shutdownTimeoutMs: number;
  /**
   * IMAGE_STORE: where image derivatives are kept (docs/deploy.md, Images: where the derivatives live): `file:PATH` for one machine, default
   * the folder `images` beside the SQLite file (`file:./data/images` with the default DATABASE_URL, and
   * with PostgreSQL), or `s3://bucket/prefix` for an S3-compatible bucket that several processes share.
   */
  imageStore: string;
  /**
   * S3_ENDPOINT (an http/https URL; unset: AWS itself), AWS_REGION (default us-east-1),
   * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (both or neither; neither: the SDK's usual sources,
   * such as an instance role). Only read with an `s3://` IMAGE_STORE.
   */
  s3: S3Settings;
  /**
   * SEND_TIMEOUT_MS: a connection whose answer makes no progress for this long (its client stopped
   * reading) is closed, and the memory of the answer released; default 60000, as nginx's send_timeout.
   */
  sendTimeoutMs: number;
  /**
   * UNSENT_MAX_MB: memory the process may hold for answers their clients have not read yet; past it,
   * list routes answer 503 with Retry-After until readers catch up or are dropped. Default 64.
   */
  unsentMaxMb: number;
  /** IMAGE_CONCURRENCY: images processed at a time per process, default 2 (0: this process processes none). */
  imageConcurrency: number;
  /** IMAGE_MAX_MB: the largest original fetched, default 25. */
  imageMaxMb: number;
  /** IMAGE_FETCH_TIMEOUT_S: the whole fetch of an original, redirects included, default 20. */
  imageFetchTimeoutS: number;
  /** IMAGE_FETCH_ALLOW_PRIVATE (or FETCH_ALLOW_PRIVATE): image originals may be fetched from loopback and private addresses (tests, closed networks only). */
  imageFetchAllowPrivate: boolean;
  /** FEED_CONCURRENCY: feed runs at a time per process, default 1 (0: this process runs none). */
  feedConcurrency: number;
  /** IMAGE_JOB_LEASE_S: how long an image job stays claimed by a process that stopped renewing it (died), default 60. */
  imageJobLeaseS: number;
  /** JOB_LEASE_S: how long any background job stays claimed by a process that stopped renewing it; default IMAGE_JOB_LEASE_S. */
  jobLeaseS: number;
  /** WEBHOOK_CONCURRENCY: webhook deliveries at once per process (at most 4 per endpoint across processes), default 8; 0: none. */
  webhookConcurrency: number;
  /** FETCH_ALLOW_PRIVATE: feeds, webhooks and images may reach loopback and private addresses (tests, closed networks only); IMAGE_FETCH_ALLOW_PRIVATE opens images only. */
  fetchAllowPrivate: boolean;
  /** TRASH_DAYS: how long a deleted artwork or event stays in the trash before the purge, 1–365, default 30. */
  trashDays: number;
}

export type LogFormat = 'json' | 'pretty';
export type TrustProxy = boolean | string[];

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  return {
    port,
    host,
    databaseUrl: env.DATABASE_URL || 'sqlite:./data/art-catalog.db',
    redisUrl: env.REDIS_URL || undefined,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'art-catalog:',
    publicBaseUrl: env.PUBLIC_BASE_URL ? env.PUBLIC_BASE_URL.replace(/\/+$/, '') : defaultBaseUrl(host, port),
    publicBaseUrlIsDefault: !env.PUBLIC_BASE_URL,
    logLevel: env.LOG_LEVEL || 'info',
    rateLimits: {
      free: integer(env, 'RATE_LIMIT_FREE', 30, 1),
      subscriber: integer(env, 'RATE_LIMIT_SUBSCRIBER', 120, 1),
      partner: integer(env, 'RATE_LIMIT_PARTNER', 600, 1),
    },
    rateLimitWindowS: integer(env, 'RATE_LIMIT_WINDOW_S', 60, 1),
    rateLimitLease: integer(env, 'RATE_LIMIT_LEASE', 20, 1, 10_000),
    pgPoolSize: integer(env, 'PG_POOL_SIZE', 10, 1),
    pgBulkReads: integer(env, 'PG_BULK_READS', 2, 1),
    pgStatementTimeoutMs: integer(env, 'PG_STATEMENT_TIMEOUT_MS', 10_000, 1),
    metricsToken: metricsToken(env.METRICS_TOKEN),
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const),
    publicRateLimit: integer(env, 'PUBLIC_RATE_LIMIT', 300, 1),
    publicCacheMb: integer(env, 'PUBLIC_CACHE_MB', 64, 1, 65_536),
    answerCacheMb: integer(env, 'ANSWER_CACHE_MB', 32, 0, 65_536),
    notModifiedMemoKb: integer(env, 'NOT_MODIFIED_MEMO_KB', 1024, 0, 1_048_576),
    trustProxy: trustProxy(env.TRUST_PROXY),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 9000, 1),
    sendTimeoutMs: integer(env, 'SEND_TIMEOUT_MS', 60_000, 1),
    unsentMaxMb: integer(env, 'UNSENT_MAX_MB', 64, 1, 65_536),
    imageStore: imageStore(env),
    s3: s3Settings(env),
    imageConcurrency: integer(env, 'IMAGE_CONCURRENCY', 2, 0, 64),
    imageMaxMb: integer(env, 'IMAGE_MAX_MB', 25, 1, 1024),
    imageFetchTimeoutS: integer(env, 'IMAGE_FETCH_TIMEOUT_S', 20, 1, 600),
    imageFetchAllowPrivate: oneOf(env, 'IMAGE_FETCH_ALLOW_PRIVATE', ['true', 'false'] as const) === 'true'
      || oneOf(env, 'FETCH_ALLOW_PRIVATE', ['true', 'false'] as const) === 'true',
    imageJobLeaseS: integer(env, 'IMAGE_JOB_LEASE_S', 60, 1, 86_400),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 8, 0, 256),
    jobLeaseS: integer(env, 'JOB_LEASE_S', integer(env, 'IMAGE_JOB_LEASE_S', 60, 1, 86_400), 1, 86_400),
    fetchAllowPrivate: oneOf(env, 'FETCH_ALLOW_PRIVATE', ['true', 'false'] as const) === 'true',
    feedConcurrency: integer(env, 'FEED_CONCURRENCY', 1, 0, 64),
    trashDays: integer(env, 'TRASH_DAYS', 30, 1, 365),
  };
}

/** The default PUBLIC_BASE_URL for a listening address (an IPv6 host in brackets). */
export const defaultBaseUrl = (host: string, port: number): string => `http://${isIP(host) === 6 ? `[${host}]` : host}:${port}`;

function metricsToken(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  // The value is a secret: the message never shows it.
  if (!/^\S+$/.test(raw)) throw new Error('METRICS_TOKEN is set but empty or contains spaces: set a token (e.g. `openssl rand -hex 32`), or unset it to leave /metrics open');
  return raw;
}

function imageStore(env: NodeJS.ProcessEnv): string {
  if (env.IMAGE_STORE) {
    parseImageStore(env.IMAGE_STORE);
    return env.IMAGE_STORE;
  }
  const sqlite = /^sqlite:(.+)$/.exec(env.DATABASE_URL || '');
  return sqlite && sqlite[1] !== ':memory:' ? `file:${dirname(sqlite[1]!)}/images` : 'file:./data/images';
}

function s3Settings(env: NodeJS.ProcessEnv): S3Settings {
  const endpoint = env.S3_ENDPOINT || undefined;
  if (endpoint !== undefined && !/^https?:\/\/[^/\s]+/.test(endpoint)) {
    throw new Error(`S3_ENDPOINT must be an http or https URL (got "${endpoint}")`);
  }
  const accessKeyId = env.AWS_ACCESS_KEY_ID || undefined;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY || undefined;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new Error('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together');
  }
  return { endpoint, region: env.AWS_REGION || undefined, accessKeyId, secretAccessKey };
}

function trustProxy(raw: string | undefined): TrustProxy {
  const value = raw?.trim() ?? '';
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  const addresses = value.split(',').map((part) => part.trim());
  for (const address of addresses) {
    const [ip, bits, ...rest] = address.split('/');
    const family = isIP(ip ?? '');
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !validBits || rest.length > 0) {
      throw new Error(`TRUST_PROXY must be true, false or a comma-separated list of addresses/CIDR ranges (got "${address}")`);
    }
  }
  return addresses;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function oneOf<const V extends readonly string[]>(env: NodeJS.ProcessEnv, name: string, values: V): V[number] | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!values.includes(raw)) throw new Error(`${name} must be one of ${values.join(', ')} (got "${raw}")`);
  return raw;
}

