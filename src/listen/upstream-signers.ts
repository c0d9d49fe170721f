/**
 * Re-signing in each service's own scheme for `gateway listen --format upstream`, with the
 * listener's local secret, so an app written against the upstream's webhooks verifies them with
 * its usual code (README, "Webhook ingress": Verification). The signatures come from
 * src/samples/sign-webhook.ts, the code `gateway trigger` and the tests sign with.
 */
import type { CryptoPort } from "../crypto/crypto-port.ts";
import { signEsignWebhook, signStaffingWebhook } from "../samples/sign-webhook.ts";

/** Signature headers of `body` at `nowMs` (lower-case names). */
export type UpstreamSigner = (
  crypto: CryptoPort,
  secret: string,
  body: Uint8Array,
  nowMs: number,
) => Promise<Record<string, string>>;

const signers: Readonly<Record<string, UpstreamSigner>> = {
  esign: async (crypto, secret, body) => ({ "x-svc-signature": await signEsignWebhook(crypto, secret, body) }),
  staffing: async (crypto, secret, body, nowMs) => {
    const t = Math.floor(nowMs / 1000);
    return {
      "x-svc-signature": await signStaffingWebhook(crypto, secret, body, t),
      "x-svc-timestamp": String(t),
    };
  },
};

/** The signer of a service, if the listener knows its scheme. */
export function upstreamSignerOf(service: string): UpstreamSigner | undefined {
  return Object.hasOwn(signers, service) ? signers[service] : undefined;
}
