import { BlockList, isIP } from 'node:net';

/**
 * The one address policy of every outgoing fetch (docs/deploy.md, "Outgoing fetches"): only public
 * unicast addresses, unless FETCH_ALLOW_PRIVATE=true (IMAGE_FETCH_ALLOW_PRIVATE=true: images only) for tests and
 * closed networks.
 */
export function addressPolicy(allowPrivate: boolean): (address: string) => boolean {
  return allowPrivate ? () => true : publicAddress;
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
