/**
 * The check of `POST /webhooks/{sourceId}` that runs before the body is read
 * (docs/security-and-deployment.md#what-protects-what): the signature header's presence and form
 * (401, closing the connection since the
 * body stays unread). The per-address budget of failed verifications is waited for in
 * receive-webhook.ts, around the read and the verification.
 */
import type { SourceConfig } from "../config/schema.ts";
import type { ErrorCode } from "../errors.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import type { IngressGuardDeps } from "./ingress-deps.ts";
import { precheckSignature } from "./precheck-signature.ts";

export interface EarlyRefusal {
  status: number;
  code: ErrorCode;
  message: string;
  /** Label of `gateway_webhooks_rejected_total`. */
  reason: string;
  extra: { details?: unknown; headers: Record<string, string> };
}

/**
 * The refusal of a delivery that must not have its body read, or the signature headers as the
 * service parsed them (for the verification of the same delivery: parsed once).
 */
export type BodyGuard = { refused: EarlyRefusal } | { refused: undefined; signatureForm: unknown };

/** Whether the delivery's body may be read: see `BodyGuard`. */
export async function guardBeforeBody(
  ctx: IngressGuardDeps,
  source: SourceConfig,
  headers: HeaderReader,
  clientAddress: string | undefined,
): Promise<BodyGuard> {
  const checked = await precheckSignature(source, headers, ctx.clock.now(), ctx.crypto, ctx.services);
  if (checked.ok) return { refused: undefined, signatureForm: checked.form };
  const failure = checked.reason;
  ctx.verificationLimiter?.recordFailure(clientAddress);
  const refused: EarlyRefusal = {
    status: 401,
    code: "invalid_signature",
    message: "the webhook signature is missing, malformed or does not match",
    reason: failure,
    extra: { details: { reason: failure }, headers: { connection: "close" } },
  };
  return { refused };
}
