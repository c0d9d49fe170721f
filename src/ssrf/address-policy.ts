/**
 * The SSRF decision for one address a destination resolved to: public addresses are allowed;
 * `allowPrivateNetworks` also allows loopback, private, link-local, CGNAT and unique-local
 * ranges (never metadata, multicast, broadcast, unspecified or reserved ones); `allowCidrs`
 * allows exactly the listed ranges, whatever they are. Pure: the Node transport calls it for
 * every address the resolver returns, right before connecting.
 */
import { type AddressCategory, type AddressClass, classifyParsed } from "./classify-address.ts";
import { type ParsedIp, parseIp } from "./parse-ip-address.ts";

export interface AddressPolicy {
  allowPrivateNetworks?: boolean;
  allowCidrs?: readonly string[];
}

export type AddressDecision =
  | { allowed: true; class: AddressClass }
  | { allowed: false; class: AddressClass; reason: string };

const PRIVATE_NETWORKS = new Set<AddressCategory>(["loopback", "private", "link-local", "cgnat", "unique-local"]);

export interface Cidr {
  version: 4 | 6;
  /** 32 bits (v4) or 128 bits (v6) as a bigint. */
  base: bigint;
  bits: number;
}

const toBig = (ip: ParsedIp): bigint =>
  ip.version === 4 ? BigInt(ip.value) : ip.words.reduce((acc, w) => (acc << 16n) | BigInt(w), 0n);

/** Parses `address/bits` (strict: the address must be written as an address). */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.lastIndexOf("/");
  const address = slash === -1 ? text : text.slice(0, slash);
  const ip = /^[0-9a-fA-F:.]+$/.test(address) ? parseIp(address) : undefined;
  if (!ip) return undefined;
  const width = ip.version === 4 ? 32 : 128;
  const bitsText = slash === -1 ? String(width) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText) || Number(bitsText) > width) return undefined;
  const bits = Number(bitsText);
  const shift = BigInt(width - bits);
  return { version: ip.version, base: (toBig(ip) >> shift) << shift, bits };
}

function contains(cidr: Cidr, ip: ParsedIp): boolean {
  if (cidr.version !== ip.version) return false;
  const shift = BigInt((ip.version === 4 ? 32 : 128) - cidr.bits);
  return (toBig(ip) >> shift) << shift === cidr.base;
}

/** Decides whether a destination may connect to `address` (an IP literal). */
export function checkAddress(address: string, policy: AddressPolicy): AddressDecision {
  const ip = parseIp(address);
  if (!ip) return { allowed: false, class: { category: "invalid" }, reason: "not an IP address" };
  const found = classifyParsed(ip);
  if (
    policy.allowCidrs?.some((text) => {
      const cidr = parseCidr(text);
      return cidr !== undefined && contains(cidr, ip);
    })
  ) {
    return { allowed: true, class: found };
  }
  if (found.category === "public") return { allowed: true, class: found };
  if (policy.allowPrivateNetworks && PRIVATE_NETWORKS.has(found.category)) return { allowed: true, class: found };
  const via = found.via ? ` via ${found.via} ${found.embedded}` : "";
  return { allowed: false, class: found, reason: `${found.category} address${via}` };
}
