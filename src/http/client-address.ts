/**
 * The client address of a request, as the ingress limiter, the ops access check and the Node
 * connection caps compare it (docs/security-and-deployment.md#what-protects-what). Shared here so
 * those folders need not import
 * each other.
 */
import { parseIPv6 } from "../ssrf/parse-ip-address.ts";

/**
 * The client address the runtime reports (`request.ip`: on Node the address
 * `resolveClientAddress` gives, which follows `X-Forwarded-For` only from the proxies
 * `server.trustProxy` names).
 */
export function clientAddressOf(request: Request): string | undefined {
  const ip = (request as Request & { ip?: unknown }).ip;
  return typeof ip === "string" && ip !== "" ? ip : undefined;
}

/** `server.trustProxy`: nobody, loopback peers, or the listed proxy addresses. */
export type TrustProxy = false | "loopback" | readonly string[];

/** Is `address` (as the socket or a proxy reports it) one of the proxies `trustProxy` names? */
export function isTrustedProxy(trustProxy: TrustProxy, address: string | undefined): boolean {
  if (trustProxy === false || address === undefined) return false;
  const normalized = normalizeAddress(address);
  if (trustProxy === "loopback") return normalized === "::1" || normalized.startsWith("127.");
  return trustProxy.some((proxy) => normalizeAddress(proxy) === normalized);
}

/**
 * The client address of a request from `peer` (the socket's address) carrying `forwardedFor`
 * (`X-Forwarded-For`, its non-IP entries already dropped by the Node server): the peer unless
 * it is a trusted proxy; then the right-most forwarded entry that is not a trusted proxy (each
 * proxy appends the address it received from), the left-most when all are, the peer when the
 * header is empty. The one policy of both webhook paths on Node, the ops access check and the
 * per-client caps (docs/behind-a-load-balancer.md).
 */
export function resolveClientAddress(
  trustProxy: TrustProxy,
  peer: string | undefined,
  forwardedFor: string | readonly string[] | undefined,
): string | undefined {
  if (forwardedFor === undefined || !isTrustedProxy(trustProxy, peer)) return peer;
  const entries: string[] = [];
  for (const part of (typeof forwardedFor === "string" ? forwardedFor : forwardedFor.join(",")).split(",")) {
    const entry = part.trim();
    if (entry !== "") entries.push(entry);
  }
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i] as string;
    if (!isTrustedProxy(trustProxy, entry)) return entry;
  }
  return entries[0] ?? peer;
}

/** `::ffff:127.0.0.1` and `127.0.0.1` are one address. */
export function normalizeAddress(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address.toLowerCase();
}

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/**
 * Is `text` one IP address as a proxy writes it into `X-Forwarded-For` (dotted IPv4 or IPv6,
 * no port, brackets or zone)? Anything else (`unknown`, a host name, `_hidden`) is no address.
 */
export function isIpAddress(text: string): boolean {
  if (IPV4.test(text)) return true;
  if (!text.includes(":") || !/^[0-9A-Fa-f:.]+$/.test(text)) return false;
  return parseIPv6(text) !== undefined;
}

/** `X-Forwarded-For` without its entries that are not IP addresses (empty when none is). */
export function keepIpEntries(forwardedFor: string): string {
  const kept: string[] = [];
  for (const part of forwardedFor.split(",")) {
    const entry = part.trim();
    if (isIpAddress(entry)) kept.push(entry);
  }
  return kept.join(", ");
}
