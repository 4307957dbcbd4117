import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * Which IP addresses outbound webhooks may connect to (docs/alerts.md, "SSRF"). Only global
 * unicast addresses pass by default: a rule's URL is chosen by any member, and must not reach
 * the service's own network, its loopback, or a cloud metadata service. Operators who run their
 * receivers on a private network allow those ranges (CORRAL_WEBHOOK_ALLOW_PRIVATE=1); the
 * metadata addresses stay refused even then, since no receiver lives there and they hand out
 * credentials.
 */
export type AddressVerdict =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly reason: string };

type Range = readonly [address: string, prefix: number, kind: string];

// IPv4 special-purpose ranges (RFC 6890 and the IANA registry) that are not global unicast.
const ipv4Ranges: Range[] = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT (shared)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

// IPv6: IPv4-mapped addresses are judged as the IPv4 address they carry (see below).
const ipv6Ranges: Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b::', 96, 'NAT64 (embeds an IPv4 address)'],
  ['64:ff9b:1::', 48, 'local NAT64'],
  ['100::', 64, 'discard-only'],
  ['2001::', 23, 'IETF protocol assignments (Teredo among them)'],
  ['2001:db8::', 32, 'documentation'],
  ['2002::', 16, '6to4 (embeds an IPv4 address)'],
  ['fc00::', 7, 'unique local'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

// Instance metadata services: AWS, GCP and Azure (169.254.169.254), AWS over IPv6, Oracle
// Cloud, Alibaba Cloud.
const metadataAddresses: ReadonlyArray<readonly [string, 'ipv4' | 'ipv6']> = [
  ['169.254.169.254', 'ipv4'],
  ['fd00:ec2::254', 'ipv6'],
  ['192.0.0.192', 'ipv4'],
  ['100.100.100.200', 'ipv4'],
];

function listOf(ranges: readonly Range[], type: 'ipv4' | 'ipv6'): Array<{ list: BlockList; kind: string }> {
  return ranges.map(([address, prefix, kind]) => {
    const list = new BlockList();
    list.addSubnet(address, prefix, type);
    return { list, kind };
  });
}
const v4 = listOf(ipv4Ranges, 'ipv4');
const v6 = listOf(ipv6Ranges, 'ipv6');
const metadata = new BlockList();
for (const [address, type] of metadataAddresses) metadata.addAddress(address, type);

/** `::ffff:a.b.c.d` (or its hex spelling) → `a.b.c.d`; anything else unchanged. */
function unmapped(address: string): string {
  const lower = address.toLowerCase();
  const dotted = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1] && isIPv4(dotted[1])) return dotted[1];
  const hex = /^(?:0{0,4}:){0,5}:?ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex?.[1] && hex[2]) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return address;
}

export function judgeAddress(address: string, allowPrivate: boolean): AddressVerdict {
  const plain = unmapped(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  const type = isIPv4(plain) ? 'ipv4' : isIPv6(plain) ? 'ipv6' : undefined;
  if (!type) return { allowed: false, reason: `${address} is not an IP address` };
  if (metadata.check(plain, type)) return { allowed: false, reason: `${plain} is a cloud metadata address` };
  if (allowPrivate) return { allowed: true };
  const hit = (type === 'ipv4' ? v4 : v6).find((r) => r.list.check(plain, type));
  if (hit) return { allowed: false, reason: `${plain} is in the ${hit.kind} range` };
  return { allowed: true };
}
