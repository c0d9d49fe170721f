/**
 * The SSRF guard at the moment of connecting, on Node: a resolver that only ever hands out
 * addresses the destination's policy (src/ssrf/address-policy.ts) allows. The `http` transport
 * gives it to undici as `connect.lookup`; the SMTP transport resolves with it and connects
 * nodemailer to the checked address. Checking the address actually connected to (not the name,
 * not an earlier resolution) is what makes DNS rebinding useless.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { type AddressPolicy, checkAddress } from "../../src/ssrf/address-policy.ts";

/** Resolves a host name to every address (injectable: tests simulate rebinding resolvers). */
export type ResolveAll = (hostname: string) => Promise<LookupAddress[]>;

/** The `code` of the error a refused lookup fails with. */
export const SSRF_REFUSED = "ERR_SSRF_REFUSED";

export class SsrfRefusedError extends Error {
  readonly code = SSRF_REFUSED;
}

/** The system resolver (`dns.lookup` with `all: true`), which also accepts IP literals. */
export const systemResolve: ResolveAll = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** A `net.connect` lookup that only ever hands out addresses the policy allows. */
export function createGuardedLookup(policy: AddressPolicy, resolve: ResolveAll = systemResolve) {
  return (hostname: string, options: { family?: number | string; all?: boolean }, callback: LookupCallback) => {
    resolve(hostname).then(
      (addresses) => {
        const family = options.family === "IPv4" ? 4 : options.family === "IPv6" ? 6 : Number(options.family ?? 0);
        const candidates = family ? addresses.filter((a) => a.family === family) : addresses;
        const allowed = candidates.filter((a) => checkAddress(a.address, policy).allowed);
        const first = allowed[0];
        if (!first) {
          const decision = candidates[0] ? checkAddress(candidates[0].address, policy) : undefined;
          const reason = decision && !decision.allowed ? decision.reason : "no address";
          callback(new SsrfRefusedError(`${hostname} resolves to a ${reason}`), options.all ? [] : "", undefined);
          return;
        }
        if (options.all) callback(null, allowed);
        else callback(null, first.address, first.family);
      },
      (error: Error) => callback(error, options.all ? [] : "", undefined),
    );
  };
}

/**
 * The first address of `hostname` the policy allows; rejects with SsrfRefusedError when there is
 * none, or with the resolver's error.
 */
export function resolveGuarded(
  hostname: string,
  policy: AddressPolicy,
  resolve: ResolveAll = systemResolve,
): Promise<LookupAddress> {
  const lookup = createGuardedLookup(policy, resolve);
  return new Promise((done, fail) => {
    lookup(hostname, {}, (error, address, family) => {
      if (error) fail(error);
      else done({ address: address as string, family: family ?? 4 });
    });
  });
}
