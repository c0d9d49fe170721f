/**
 * Classifies an IP address for the SSRF guard: public, or which non-public range it is in
 * (IANA special-purpose registries for IPv4 and IPv6, plus cloud metadata endpoints). IPv6
 * forms that carry an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96, 6to4,
 * Teredo) are judged by the IPv4 address they reach, so `::ffff:127.0.0.1`, `64:ff9b::a00:1`
 * and `2002:c0a8:101::` are as refused as the private addresses inside them.
 */
import { formatIPv4, type ParsedIp, parseIp } from "./parse-ip-address.ts";

export type AddressCategory =
  | "public"
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "metadata"
  | "cgnat"
  | "unique-local"
  | "multicast"
  | "broadcast"
  | "documentation"
  | "benchmarking"
  | "reserved"
  | "invalid";

export interface AddressClass {
  category: AddressCategory;
  /** For IPv6 forms that embed IPv4: which form, and the IPv4 address judged. */
  via?: "ipv4-mapped" | "ipv4-compatible" | "nat64" | "6to4" | "teredo";
  embedded?: string;
}

const METADATA_V4 = new Set(["169.254.169.254", "169.254.170.2", "100.100.100.200"]);
/** AWS IMDS and its DNS resolver over IPv6. */
const METADATA_V6 = new Set(["fd00:ec2:0:0:0:0:0:254", "fd00:ec2:0:0:0:0:0:23"]);

const V4_RANGES: [string, number, AddressCategory][] = [
  ["0.0.0.0", 8, "reserved"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "cgnat"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const V4_PARSED = V4_RANGES.map(([base, bits, category]) => {
  const value = parseIp(base) as { value: number };
  return { base: value.value, mask: bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0, category };
});

/** Category of an IPv4 address given as a 32-bit number. */
export function classifyIPv4(value: number): AddressCategory {
  if (value === 0) return "unspecified";
  if (value === 0xffffffff) return "broadcast";
  if (METADATA_V4.has(formatIPv4(value))) return "metadata";
  for (const range of V4_PARSED) if ((value & range.mask) >>> 0 === range.base) return range.category;
  return "public";
}

const v4Of = (high: number, low: number) => ((high << 16) >>> 0) + low;

function classifyIPv6(w: number[]): AddressClass {
  const [w0, w1, w2, w3, w4, w5, w6, w7] = w as [number, number, number, number, number, number, number, number];
  const key = w.map((x) => x.toString(16)).join(":");
  const firstSixZero = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0 && w4 === 0;
  const embedded = (via: AddressClass["via"], value: number): AddressClass => {
    const category = classifyIPv4(value);
    return { category, via, embedded: formatIPv4(value) };
  };
  if (firstSixZero && w5 === 0 && w6 === 0 && w7 === 0) return { category: "unspecified" };
  if (firstSixZero && w5 === 0 && w6 === 0 && w7 === 1) return { category: "loopback" };
  if (firstSixZero && w5 === 0xffff) return embedded("ipv4-mapped", v4Of(w6, w7));
  if (firstSixZero && w5 === 0) return embedded("ipv4-compatible", v4Of(w6, w7));
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    return embedded("nat64", v4Of(w6, w7));
  }
  if (w0 === 0x2002) return embedded("6to4", v4Of(w1, w2));
  // Teredo carries the client's IPv4 inverted in the last 32 bits.
  if (w0 === 0x2001 && w1 === 0) return embedded("teredo", v4Of(w6 ^ 0xffff, w7 ^ 0xffff));
  if (METADATA_V6.has(key)) return { category: "metadata" };
  if ((w0 & 0xfe00) === 0xfc00) return { category: "unique-local" };
  if ((w0 & 0xffc0) === 0xfe80) return { category: "link-local" };
  if ((w0 & 0xffc0) === 0xfec0) return { category: "reserved" }; // site-local, deprecated
  if ((w0 & 0xff00) === 0xff00) return { category: "multicast" };
  if (w0 === 0x2001 && w1 === 0xdb8) return { category: "documentation" };
  if ((w0 & 0xfff0) === 0x3ff0) return { category: "documentation" }; // 3fff::/20
  if (w0 === 0x2001 && w1 === 2 && w2 === 0) return { category: "benchmarking" };
  if (w0 === 0x2001 && w1 < 0x200) return { category: "reserved" }; // 2001::/23 IETF protocol assignments
  // Only 2000::/3 is global unicast; everything else (64:ff9b:1::/48, 100::/64, ...) is not.
  if ((w0 & 0xe000) !== 0x2000) return { category: "reserved" };
  return { category: "public" };
}

/** Classifies a parsed address. */
export function classifyParsed(ip: ParsedIp): AddressClass {
  return ip.version === 4 ? { category: classifyIPv4(ip.value) } : classifyIPv6(ip.words);
}

/** Classifies an address given as text; `invalid` when it is not an IP address. */
export function classifyAddress(text: string): AddressClass {
  const ip = parseIp(text);
  return ip ? classifyParsed(ip) : { category: "invalid" };
}
