/**
 * Outgoing webhooks of the emulators are signed by the gateway's own service modules
 * (src/services/registry.ts, `signDelivery` of src/services/service-contract.ts): one
 * implementation of each upstream's signing scheme, which the service conformance suite checks
 * against that service's verifier.
 */
import { createWebCrypto, utf8 } from "../../src/crypto/crypto-port.ts";
import { builtinServices } from "../../src/services/registry.ts";
import type { ServiceRegistry } from "../../src/services/service-contract.ts";

/** Signs one attempt of a delivery: the authentication headers for `body` at `nowMs`. */
export type DeliverySigner = (
  secret: string,
  body: string,
  options: { nowMs: number; deliveryId: string },
) => Promise<Record<string, string>>;

/** The signer of the service registered as `name` (throws when none is: a wiring bug). */
export function serviceSigner(name: string, services: ServiceRegistry = builtinServices): DeliverySigner {
  const service = services.get(name);
  if (!service) throw new Error(`no service "${name}" is registered to sign its webhooks`);
  const crypto = createWebCrypto();
  return (secret, body, options) => service.signDelivery(secret, utf8(body), options, crypto);
}
