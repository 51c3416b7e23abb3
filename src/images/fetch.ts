import { createHash } from 'node:crypto';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction, type Socket } from 'node:net';

/**
 * Fetches a gallery's image (decisions §10) so that it cannot be turned against us or our network:
 * http and https only; at most 3 redirects, each checked like the first URL; at most `maxBytes`,
 * counted while streaming (a Content-Length is not trusted); `timeoutMs` for everything; and the
 * address of every connection checked against non-public ranges. The check sits in the connection's
 * own `lookup`, so the address checked is the address connected to: a name that resolves to a public
 * address for a check and to a private one for the connection (DNS rebinding) does not pass.
 */
export interface FetchOptions {
  maxBytes: number;
  timeoutMs: number;
  /** Which addresses may be connected to; by default only public ones (`publicAddress`). */
  allowAddress?: (address: string) => boolean;
}

/** A fetch that did not give an image; `message` is the one-line error of §10. */
export class FetchFailed extends Error {}

export const MAX_REDIRECTS = 3;
const MB = 1024 * 1024;

/** An original as fetched: its bytes and their SHA-256 (hex), which names it (decisions §10). */
export interface FetchedImage {
  bytes: Buffer;
  hash: string;
}

/** `abandon`: the caller gave the fetch up (its job was lost); the fetch stops and rejects with its reason. */
export async function fetchImage(url: string, options: FetchOptions, abandon?: AbortSignal): Promise<FetchedImage> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs);
  const giveUp = () => controller.abort();
  abandon?.addEventListener('abort', giveUp, { once: true });
  try {
    abandon?.throwIfAborted();
    let current = new URL(url);
    for (let redirects = 0; ; redirects++) {
      const answer = await get(current, options, controller.signal);
      if ('location' in answer) {
        if (redirects === MAX_REDIRECTS) throw new FetchFailed('too many redirects');
        current = new URL(answer.location, current);
        continue;
      }
      return answer.image;
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

type Answer = { image: FetchedImage } | { location: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function get(url: URL, options: FetchOptions, signal: AbortSignal): Promise<Answer> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new FetchFailed('not http or https'));
  const guard = addressGuard(options.allowAddress ?? publicAddress);
  if (guard.literalRefused(url)) return Promise.reject(new FetchFailed('address not allowed'));
  const { lookup } = guard;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const request = client.get(url, {
      lookup, signal, agent: false,
      headers: { accept: 'image/avif,image/webp,image/*;q=0.9,*/*;q=0.5', 'user-agent': 'ArtCatalogService-ImageFetcher/1' },
    }, (response) => {
      const status = response.statusCode ?? 0;
      if (REDIRECTS.has(status) && response.headers.location) {
        response.resume();
        resolve({ location: response.headers.location });
        return;
      }
      if (status < 200 || status > 299) {
        response.resume();
        reject(new FetchFailed(`HTTP ${status}`));
        return;
      }
      const declared = Number(response.headers['content-length']);
      if (declared > options.maxBytes) {
        response.destroy();
        reject(new FetchFailed(tooLarge(declared)));
        return;
      }
      const chunks: Buffer[] = [];
      let received = 0;
      // Hashed as it arrives, a socket read (at most 64 KiB, ~0.1 ms) at a time: no second pass over
      // the original, and no copy of it for WebCrypto — each such copy was external memory that asked
      // V8 for a full collection sooner (docs/performance.md, "Tracing the delays").
      const hash = createHash('sha256');
      response.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received > options.maxBytes) {
          response.destroy();
          reject(new FetchFailed(tooLarge(received)));
          return;
        }
        hash.update(chunk);
        chunks.push(chunk);
      });
      response.once('end', () => resolve({ image: { bytes: Buffer.concat(chunks, received), hash: hash.digest('hex') } }));
      response.once('error', reject);
    });
    guard.watch(request);
    request.once('error', reject);
  });
}

/**
 * The address policy of every outgoing connection (image fetches, webhook deliveries): a literal
 * address is checked before connecting, a name on every address it resolves to (so DNS tricks do not
 * pass), and the peer of the connection made once more.
 */
export function addressGuard(allowed: (address: string) => boolean) {
  const lookup: LookupFunction = (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      const usable = addresses.filter((a) => allowed(a.address));
      if (usable.length === 0) return callback(new FetchFailed('address not allowed'), '', 0);
      if (lookupOptions.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, usable);
      return callback(null, usable[0]!.address, usable[0]!.family);
    });
  };
  return {
    lookup,
    /** A literal address is connected to without a lookup: it is checked here. */
    literalRefused: (url: URL): boolean => {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      return isIP(host) !== 0 && !allowed(host);
    },
    /** Belt and braces: whatever connected, the peer's address must be allowed. */
    watch: (request: http.ClientRequest): void => {
      request.once('socket', (socket: Socket) => {
        socket.once('connect', () => {
          if (socket.remoteAddress && !allowed(socket.remoteAddress)) request.destroy(new FetchFailed('address not allowed'));
        });
      });
    },
  };
}

const tooLarge = (bytes: number) => `too large: ${Math.ceil(bytes / MB)} MB`;

/** One line for a failure the network gave (no stack, no internals). */
export function fetchError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection reset';
  if (code === 'ERR_INVALID_URL') return 'not a valid URL';
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT'))) return 'TLS error';
  return 'fetch failed';
}

/** Everything that is not a public unicast address, IPv4 and IPv6 (IANA special-purpose registries). */
// Two lists: Node's BlockList also matches IPv4 addresses against IPv6 rules (as mapped addresses).
const NOT_PUBLIC_V4 = new BlockList();
const NOT_PUBLIC_V6 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC_V4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // Only 2000::/3 is global unicast; inside it, the special-purpose blocks (Teredo, documentation, 6to4, …).
  ['::', 3], ['4000::', 2], ['8000::', 1],
  ['2001::', 23], ['2001:db8::', 32], ['2002::', 16], ['3fff::', 20],
] as const) NOT_PUBLIC_V6.addSubnet(network, prefix, 'ipv6');

/** Whether an address is public: IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it maps. */
export function publicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !NOT_PUBLIC_V4.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = mappedIpv4(address);
  if (mapped) return !NOT_PUBLIC_V4.check(mapped, 'ipv4');
  return !NOT_PUBLIC_V6.check(address.split('%')[0]!, 'ipv6');
}

const MAPPED = new BlockList();
MAPPED.addSubnet('::ffff:0:0', 96, 'ipv6');

/** The IPv4 address inside ::ffff:0:0/96, in either spelling (::ffff:127.0.0.1 or ::ffff:7f00:1). */
function mappedIpv4(address: string): string | undefined {
  const zoneless = address.split('%')[0]!;
  if (!MAPPED.check(zoneless, 'ipv6')) return undefined;
  // The URL parser writes an IPv6 address in one canonical form, the mapped IPv4 part as two hex words.
  const [high, low] = new URL(`http://[${zoneless}]`).hostname.slice(1, -1).split(':').slice(-2).map((word) => parseInt(word, 16));
  return [high! >> 8, high! & 0xff, low! >> 8, low! & 0xff].join('.');
}
