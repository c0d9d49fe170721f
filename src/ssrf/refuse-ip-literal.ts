/**
 * The SSRF refusal of IP literals in a destination URL, on every runtime: a URL whose host is an
 * IP address never reaches a resolver (Node's guarded lookup, Cloudflare's network), so it is
 * judged here against the destination's address policy, once per URL.
 */
import { type AddressPolicy, checkAddress } from "./address-policy.ts";

/** A checker of URLs: the refusal reason when the URL's host is a refused IP literal. */
export function createLiteralRefusal(policy: AddressPolicy): (url: string) => string | undefined {
  const judged = new Map<string, string | undefined>();
  return (url) => {
    if (!judged.has(url)) {
      const hostname = new URL(url).hostname.replace(/^\[|\]$/g, "");
      const decision = checkAddress(hostname, policy);
      judged.set(url, decision.class.category !== "invalid" && !decision.allowed ? decision.reason : undefined);
    }
    return judged.get(url);
  };
}
