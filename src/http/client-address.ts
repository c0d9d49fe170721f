/**
 * The client address of a request, as the ingress limiter, the ops access check and the Node
 * connection caps compare it (README "Security"). Shared here so those folders need not import
 * each other.
 */

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
