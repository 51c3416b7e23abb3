import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';

/**
 * The client's address, for the keyless routes' limit and the logs: Fastify's `request.ip` (the peer,
 * or what X-Forwarded-For names when TRUST_PROXY trusts the peer) when it is an IP address, else the
 * peer. A forwarded header is text anyone before the proxy may have written: `garbage` or 8 KB of `a`
 * would otherwise each be a client of its own, with a fresh counter. One address, one spelling
 * (IPv6 compressed and lower-case, no zone), so respelling it does not make a new client either.
 */
export function clientAddress(request: FastifyRequest): string {
  return clientAddressOf(request.ip, request.socket.remoteAddress);
}

/** clientAddress from the address Fastify names (`request.ip`) and the peer's. */
export function clientAddressOf(named: string | undefined, peer: string | undefined): string {
  return canonicalAddress(named) ?? canonicalAddress(peer) ?? 'unknown';
}

export function canonicalAddress(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const family = isIP(text);
  if (family === 4) return text;
  if (family !== 6) return undefined;
  // The zone (`%eth0`) names the peer's interface, not the client, and is unbounded text.
  return new URL(`http://[${text.split('%', 1)[0]}]`).hostname.slice(1, -1);
}
