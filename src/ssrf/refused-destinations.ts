/**
 * Finds the `http` and `email` destinations (the SMTP host, or the mail API's URL) whose address the SSRF guard will refuse at delivery time (a
 * loopback or private address without `allowPrivateNetworks`, a metadata address...), so the
 * gateway can say so at start and at reload instead of after the first dead letter. IP literals
 * and `localhost` are decided here; a host name is decided on the addresses `resolve` returns
 * (the Node adapter passes a DNS lookup; without one host names are not checked).
 */
import type { DestinationConfig } from "../config/schema.ts";
import { type AddressPolicy, checkAddress } from "./address-policy.ts";
import { parseIp } from "./parse-ip-address.ts";

export interface RefusedDestination {
  destination: string;
  /** The URL's host or the SMTP host (never a URL's path or query, which may carry a token). */
  host: string;
  /** What the guard says, e.g. `loopback address`. */
  reason: string;
}

export type ResolveHost = (host: string) => Promise<string[]>;

/** The host a destination connects to under the SSRF guard, and its policy, if it has one. */
function guardedHost(destination: DestinationConfig): { host: string; policy: AddressPolicy } | undefined {
  if (destination.type !== "http" && destination.type !== "email") return undefined;
  const policy = { allowPrivateNetworks: destination.allowPrivateNetworks, allowCidrs: destination.allowCidrs };
  const host =
    destination.type === "email" && destination.transport === "smtp"
      ? destination.host
      : new URL(destination.url).hostname;
  return { host: host.replace(/^\[(.*)\]$/, "$1"), policy };
}

/** The destinations that the guard refuses, in config order. */
export async function findRefusedDestinations(
  destinations: readonly DestinationConfig[],
  resolve?: ResolveHost,
): Promise<RefusedDestination[]> {
  const found: RefusedDestination[] = [];
  for (const destination of destinations) {
    const guarded = guardedHost(destination);
    if (guarded === undefined) continue;
    const { host, policy } = guarded;
    let addresses: string[] = [];
    if (parseIp(host)) addresses = [host];
    else if (host === "localhost" || host.endsWith(".localhost")) addresses = ["127.0.0.1"];
    else if (resolve) addresses = await resolve(host).catch(() => []);
    const refused = addresses.map((address) => checkAddress(address, policy)).find((decision) => !decision.allowed);
    if (refused && !refused.allowed) found.push({ destination: destination.id, host, reason: refused.reason });
  }
  return found;
}

/** Logs one `warn` per refused destination, naming the setting that allows it. */
export async function warnRefusedDestinations(
  destinations: readonly DestinationConfig[],
  logger: { warn(msg: string, fields?: Record<string, unknown>): void },
  resolve?: ResolveHost,
): Promise<void> {
  for (const refused of await findRefusedDestinations(destinations, resolve)) {
    logger.warn("destination address refused by the SSRF guard; its deliveries will fail", {
      destination: refused.destination,
      host: refused.host,
      reason: refused.reason,
      hint: "set allowPrivateNetworks: true (or allowCidrs) on this destination if the address is meant",
    });
  }
}
