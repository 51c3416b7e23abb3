import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { Config } from '../../config.js';
import type { AuthContext } from '../plugins/auth.js';
import { clientAddress } from '../../http-common/client-address.js';

/** What the server logs of a request (`duration_ms`, `entity_id` when a key authenticated it). */
const REQUEST_FIELDS = ['method', 'url', 'status', 'duration_ms', 'entity_id', 'client'];
// Request logs carry no headers; the redaction guards any log line that ever includes them.
const REDACT = ['req.headers.authorization', 'req.headers["idempotency-key"]', 'headers.authorization'];

/**
 * The logger: JSON lines when stdout is read by a program (a pipe, a file, a log shipper), pino-pretty
 * when a person watches a terminal; LOG_FORMAT forces either. `stream` (tests) replaces stdout.
 */
export async function loggerOptions(config: Config, stream?: NodeJS.WritableStream): Promise<NonNullable<FastifyServerOptions['logger']>> {
  const terminal = !stream && process.stdout.isTTY;
  const base = { level: config.logLevel, redact: REDACT };
  if ((config.logFormat ?? (terminal ? 'pretty' : 'json')) === 'json') return { ...base, ...(stream ? { stream } : {}) };
  // Loaded only here: a server logging JSON never pays for the prettifier.
  const { default: pretty } = await import('pino-pretty');
  return {
    ...base,
    stream: pretty({
      destination: stream ?? 1,
      sync: true,
      colorize: terminal,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: ['pid', 'hostname', ...REQUEST_FIELDS].join(','),
      messageFormat: '{msg}{if method}: {method} {url} → {status} in {duration_ms} ms from {client}{end}{if entity_id} (entity {entity_id}){end}',
    }),
  };
}

/**
 * pino's `isLevelEnabled`, which Fastify's logger type leaves out. A disabled logger (`logger: false`,
 * the tests' quiet apps) is Fastify's abstract one, which has no such method and logs nothing.
 */
export const logsAt = (log: FastifyBaseLogger, level: 'info' | 'warn' | 'error'): boolean => {
  const { isLevelEnabled } = log as FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean };
  return typeof isLevelEnabled === 'function' && isLevelEnabled.call(log, level);
};

/**
 * Query parameters whose values may be secrets: the upload form's CSRF token (`_csrf`, in its action's
 * query) and anything a caller sends that is named like one (docs/deploy.md, Logs).
 */
const SECRET_PARAMETER = /key|token|secret|password|auth|signature|csrf|session|credential/i;
/** Paths that carry a secret: an invite link's token (re-inviting is the password reset). */
const SECRET_PATH = /^(\/console\/invite\/)[^/?#]+/;

/** The URL as logged: a secret in the path or a query parameter that looks like one keeps its place, not its value. */
export function loggableUrl(url: string): string {
  const query = url.indexOf('?');
  const path = (query < 0 ? url : url.slice(0, query)).replace(SECRET_PATH, '$1redacted');
  if (query < 0) return path;
  const params = new URLSearchParams(url.slice(query + 1));
  for (const name of new Set(params.keys())) if (SECRET_PARAMETER.test(name)) params.set(name, 'redacted');
  return `${path}?${params.toString()}`;
}

/**
 * One log line per request, written when it is answered, instead of Fastify's "incoming request" and
 * "request completed" pair: method, URL, status, duration, the request id (`reqId`, from the
 * request's logger) and the entity of the key, never the key or its header. Fastify's other
 * per-request lines (route not found, errors it handles itself) stay off; our error handler logs 5xx.
 */
export class OneLinePerRequest extends LogController {
  constructor() {
    super({ disableRequestLogging: true });
  }

  override incomingRequest(): void {
    // Nothing: the request is logged once, when answered.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const level = error || reply.statusCode >= 500 ? 'error' : 'info';
    if (!logsAt(request.log, level)) return;
    // Only /v1 routes decorate `auth`, and it stays null when authentication failed.
    const entityId = (request.auth as AuthContext | null | undefined)?.entity.id;
    request.log[level](requestLogFields({
      method: request.method, url: request.url, status: reply.statusCode, durationMs: reply.elapsedTime,
      // The client's address: the peer, or the one a trusted proxy forwarded (TRUST_PROXY).
      client: clientAddress(request), entityId, error,
    }), REQUEST_COMPLETED);
  }
}

export const REQUEST_COMPLETED = 'request completed';

export interface AnsweredRequest {
  method: string;
  url: string;
  status: number;
  durationMs: number;
  client: string;
  entityId: number | undefined;
  error?: Error | null | undefined;
}

/**
 * The fields of a request's one log line (the request id comes from the logger's bindings), for every
 * path that answers a request: Fastify's (above) and the early 304s (fast-not-modified.ts).
 */
export function requestLogFields({ method, url, status, durationMs, client, entityId, error }: AnsweredRequest): Record<string, unknown> {
  return {
    method,
    url: loggableUrl(url),
    status,
    duration_ms: Math.round(durationMs * 10) / 10,
    client,
    ...(entityId === undefined ? {} : { entity_id: entityId }),
    ...(error ? { err: error } : {}),
  };
}
