import { isIP } from 'node:net';
import type { Tier } from './domain/keys.js';

/** Everything the service reads from the environment (decisions §1), with its default. */
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
  /** PUBLIC_BASE_URL: base of links on public pages and feeds, default http://HOST:PORT. */
  publicBaseUrl: string;
  /** LOG_LEVEL: pino level, default info. */
  logLevel: string;
  /** RATE_LIMIT_FREE / _SUBSCRIBER / _PARTNER: requests per window per key, defaults 30, 120, 600. */
  rateLimits: Record<Tier, number>;
  /** RATE_LIMIT_WINDOW_S: the fixed window in seconds, default 60. */
  rateLimitWindowS: number;
  /** PG_POOL_SIZE: PostgreSQL connections per process, default 10. */
  pgPoolSize: number;
  /** PG_STATEMENT_TIMEOUT_MS: PostgreSQL statement timeout, default 10000. */
  pgStatementTimeoutMs: number;
  /** METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`; unset, it is open. */
  metricsToken: string | undefined;
  /** LOG_FORMAT: `json` or `pretty`; unset, pretty when stdout is a terminal and JSON otherwise. */
  logFormat: LogFormat | undefined;
  /** PUBLIC_RATE_LIMIT: keyless requests per window per client address, default 300 (decisions §9). */
  publicRateLimit: number;
  /** PUBLIC_CACHE_MB: memory for built public pages and feeds per process, default 64. */
  publicCacheMb: number;
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
   * exits non-zero anyway; default 9000 (decisions §9: stopped within 10 s).
   */
  shutdownTimeoutMs: number;
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
    publicBaseUrl: (env.PUBLIC_BASE_URL || `http://${host}:${port}`).replace(/\/+$/, ''),
    logLevel: env.LOG_LEVEL || 'info',
    rateLimits: {
      free: integer(env, 'RATE_LIMIT_FREE', 30, 1),
      subscriber: integer(env, 'RATE_LIMIT_SUBSCRIBER', 120, 1),
      partner: integer(env, 'RATE_LIMIT_PARTNER', 600, 1),
    },
    rateLimitWindowS: integer(env, 'RATE_LIMIT_WINDOW_S', 60, 1),
    pgPoolSize: integer(env, 'PG_POOL_SIZE', 10, 1),
    pgStatementTimeoutMs: integer(env, 'PG_STATEMENT_TIMEOUT_MS', 10_000, 1),
    metricsToken: env.METRICS_TOKEN || undefined,
    logFormat: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const),
    publicRateLimit: integer(env, 'PUBLIC_RATE_LIMIT', 300, 1),
    publicCacheMb: integer(env, 'PUBLIC_CACHE_MB', 64, 1, 65_536),
    trustProxy: trustProxy(env.TRUST_PROXY),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 9000, 1),
  };
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

