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

/**
 * Who a keyless route's limit counts (docs/public-pages.md, Limits per client address): an IPv4 address, or the /64
 * an IPv6 address belongs to. One IPv6 subscriber, host or VM is given a whole /64 (RFC 6177, and
 * every provider's practice) and picks addresses in it at will: counted per address, one client could
 * take 2⁶⁴ fresh counters, and churn everyone else's out of the bounded table. An IPv4 address written
 * as IPv6 (`::ffff:192.0.2.1`, how a dual-stack socket reports an IPv4 peer) is that IPv4 client.
 */
export function limitedClient(request: FastifyRequest): string {
  const address = clientAddress(request);
  if (!address.includes(':')) return address;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 6).join(':') === '0:0:0:0:0:ffff') {
    const [high, low] = [parseInt(groups[6]!, 16), parseInt(groups[7]!, 16)];
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight groups of an IPv6 address as canonicalAddress spells it (hexadecimal, `::` for zeros). */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  if (tail === undefined) return left;
  const right = tail === '' ? [] : tail.split(':');
  return [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
}
