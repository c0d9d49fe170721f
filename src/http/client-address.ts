/**
 * The client address of a request, as the ingress limiter, the ops access check and the Node
 * connection caps compare it (docs/security-and-deployment.md#what-protects-what). Shared here so
 * those folders need not import
 * each other.
 */
import { parseIPv6 } from "../ssrf/parse-ip-address.ts";

/**
 * The client address the runtime reports (srvx's `request.ip`, which follows `X-Forwarded-For`
 * only from the proxies `server.trustProxy` names).
 */
export function clientAddressOf(request: Request): string | undefined {
  const ip = (request as Request & { ip?: unknown }).ip;
  return typeof ip === "string" && ip !== "" ? ip : undefined;
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
