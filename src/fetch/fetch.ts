import { createHash } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingHttpHeaders, type ClientRequest } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import { publicAddress } from './address.js';
import type { KeptConnections } from './kept.js';

/**
 * The one outgoing fetcher (images, feeds, webhooks; docs/deploy.md, "Outgoing fetches"), built so that
 * a URL a gallery gives cannot be turned against us or our network: http and https only; at most
 * `maxRedirects` redirects, each checked like the first URL; at most `maxBytes` of body, counted while
 * streaming (a Content-Length is not trusted); `timeoutMs` for everything; the address of every
 * connection checked by the policy (src/fetch/address.ts). The check sits in the connection's own
 * `lookup`, so the address checked is the address connected to: a name that resolves to a public
 * address for a check and to a private one for the connection (DNS rebinding) does not pass. A
 * connection is destroyed when the fetch ends, whatever the source keeps sending; only an answer read
 * to its end leaves it open, and only to a pool of kept connections given as `connections` (kept.ts).
 */
export interface FetchRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** POST's body. */
  body?: Buffer | string;
  /** Redirects followed (3 for images and feeds, 0 for webhooks: a redirect is then a failure). */
  maxRedirects: number;
  maxBytes: number;
  /**
   * A body past `maxBytes`: `fail` (the fetch fails, "too large: N MB"), or `truncate` (the first
   * `maxBytes` are kept and the rest is not read: a webhook receiver's answer).
   */
  overflow?: 'fail' | 'truncate';
  /** Read the body of a non-2xx answer too (webhooks keep a receiver's error); by default it is not read. */
  readErrorBody?: boolean;
  /** Hash the body (SHA-256, hex) as it arrives. */
  hash?: boolean;
  timeoutMs: number;
  /** Which addresses may be connected to; by default only public ones. A fetch with `connections` uses theirs. */
  allowAddress?: (address: string) => boolean;
  /** Connections kept open between fetches to one origin, opened under their own policy (kept.ts). */
  connections?: KeptConnections;
  /** The caller gave the fetch up: it stops and rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface FetchResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body (empty for a non-2xx answer unless `readErrorBody`). */
  body: Buffer;
  /** Its SHA-256 (hex) when `hash` was asked. */
  sha256: string | null;
  /** Whether the body was cut at `maxBytes` (`overflow: 'truncate'`). */
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
}

/** A fetch that failed; `message` is one line fit to show (docs/api.md, Images). */
export class FetchFailed extends Error {
  /** The status of the answer that ended the fetch, when there was one (a redirect not followed). */
  constructor(message: string, readonly status?: number) {
    super(message);
  }
}

const MB = 1024 * 1024;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function fetchUrl(request: FetchRequest): Promise<FetchResponse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), request.timeoutMs);
  const abandon = request.signal;
  const giveUp = () => controller.abort();
  abandon?.addEventListener('abort', giveUp, { once: true });
  try {
    abandon?.throwIfAborted();
    let current = new URL(request.url);
    let method = request.method ?? 'GET';
    let body = request.body;
    for (let redirects = 0; ; redirects++) {
      const answer = await exchangeOnLiveConnection(current, method, body, request, controller.signal);
      const location = answer.headers.location;
      if (!REDIRECTS.has(answer.status) || !location) return { ...answer, url: current.href };
      if (redirects === request.maxRedirects) {
        throw request.maxRedirects === 0 ? new FetchFailed(`redirected (HTTP ${answer.status})`, answer.status) : new FetchFailed('too many redirects');
      }
      current = new URL(location, current);
      // A 303 (and, as browsers do, a 301 or 302 after a POST) is followed with a GET without a body.
      if (answer.status === 303 || (method === 'POST' && answer.status !== 307 && answer.status !== 308)) {
        method = 'GET';
        body = undefined;
      }
    }
  } catch (error) {
    abandon?.throwIfAborted();
    if (controller.signal.aborted) throw new FetchFailed('timed out');
    throw error instanceof FetchFailed ? error : new FetchFailed(fetchError(error));
  } finally {
    clearTimeout(timer);
    abandon?.removeEventListener('abort', giveUp);
  }
}

type Answer = Omit<FetchResponse, 'url'>;

/** A kept connection the peer had closed (or reset) before it answered: the request never got an answer on it. */
class KeptConnectionClosed extends Error {}

/**
 * `exchange`, sent again when a kept connection turns out closed by the receiver before it answered
 * (an idle connection the receiver timed out as it was reused). Each such connection leaves the pool,
 * so the tries are bounded by the pool's idle connections, then a new connection answers for itself.
 */
async function exchangeOnLiveConnection(url: URL, method: 'GET' | 'POST', body: Buffer | string | undefined, options: FetchRequest, signal: AbortSignal): Promise<Answer> {
  for (;;) {
    try {
      return await exchange(url, method, body, options, signal);
    } catch (error) {
      if (!(error instanceof KeptConnectionClosed)) throw error;
    }
  }
}

/** One request and its answer; its connection is destroyed when it settles, whatever the peer still sends. */
function exchange(url: URL, method: 'GET' | 'POST', body: Buffer | string | undefined, options: FetchRequest, signal: AbortSignal): Promise<Answer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new FetchFailed('not http or https'));
  const allowed = options.connections?.allowAddress ?? options.allowAddress ?? publicAddress;
  // A literal address is connected to without a lookup: it is checked here.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !allowed(host)) return Promise.reject(new FetchFailed('address not allowed'));
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = addresses.filter((a) => allowed(a.address));
      if (usable.length === 0) return callback(new FetchFailed('address not allowed'), '', 0);
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
  const client = url.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { 'user-agent': 'ArtCatalogService/1', ...options.headers };
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  let request: ClientRequest | undefined;
  let answered = false;
  const answer = new Promise<Answer>((resolve, reject) => {
    // A kept connection is reused only for its origin; a new one is opened through `lookup`.
    const agent = options.connections?.agentFor(url) ?? false;
    request = client.request(url, { method, lookup, signal, agent, headers }, (response) => {
      answered = true;
      const status = response.statusCode ?? 0;
      const base = { status, headers: response.headers, sha256: null, truncated: false };
      if (REDIRECTS.has(status) && response.headers.location) return resolve({ ...base, body: Buffer.alloc(0) });
      if ((status < 200 || status > 299) && !options.readErrorBody) return resolve({ ...base, body: Buffer.alloc(0) });
      const truncate = options.overflow === 'truncate';
      const declared = Number(response.headers['content-length']);
      if (declared > options.maxBytes && !truncate) return reject(new FetchFailed(tooLarge(declared)));
      const chunks: Buffer[] = [];
      let received = 0;
      // Hashed as it arrives, a socket read (at most 64 KiB, ~0.1 ms) at a time: no second pass over
      // the body, and no copy of it for WebCrypto — each such copy was external memory that asked
      // V8 for a full collection sooner (docs/performance.md, Images).
      const hash = options.hash ? createHash('sha256') : undefined;
      // Settled once; what arrives before the connection is destroyed is dropped.
      let settled = false;
      const finish = (truncated: boolean) => {
        if (settled) return;
        settled = true;
        resolve({ ...base, body: Buffer.concat(chunks, received), sha256: hash?.digest('hex') ?? null, truncated });
      };
      response.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (received + chunk.length > options.maxBytes) {
          if (!truncate) {
            settled = true;
            return reject(new FetchFailed(tooLarge(received + chunk.length)));
          }
          chunk = chunk.subarray(0, options.maxBytes - received);
          received += chunk.length;
          hash?.update(chunk);
          chunks.push(chunk);
          return finish(true);
        }
        received += chunk.length;
        hash?.update(chunk);
        chunks.push(chunk);
      });
      response.once('end', () => finish(false));
      response.once('error', reject);
    });
    // Belt and braces: whatever connected, the peer's address must be allowed (a kept connection's was
    // when it connected, and is again at each reuse).
    request.once('socket', (socket: Socket) => {
      const check = () => {
        if (socket.remoteAddress && !allowed(socket.remoteAddress)) request!.destroy(new FetchFailed('address not allowed'));
      };
      if (socket.connecting) socket.once('connect', check);
      else check();
    });
    request.once('error', (error) => reject(request!.reusedSocket && !answered && !signal.aborted && !(error instanceof FetchFailed) ? new KeptConnectionClosed() : error));
    request.end(body);
  });
  // Settled: the connection goes, with whatever the peer was still sending (an endless error body). An
  // answer read to its end has already handed its connection back to its pool, and this does nothing.
  const close = () => request?.destroy();
  return answer.finally(close);
}

const tooLarge = (bytes: number) => `too large: ${Math.ceil(bytes / MB)} MB`;

/** One line for a failure the network gave (no stack, no internals). */
function fetchError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code === 'ERR_INVALID_URL') return 'not a valid URL';
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT'))) return 'TLS error';
  return 'fetch failed';
}
