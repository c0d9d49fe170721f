/**
 * Staffing webhooks (staffing reference, Events): POSTed to the request's `webhookUrl` with
 * `X-Svc-Signature: t=<unix seconds>,v1=<hex of HMAC-SHA256("<t>.<raw body>")>`,
 * `X-Svc-Timestamp` and `X-Svc-Delivery-Id`, signed afresh on each attempt; non-2xx answers are
 * retried after 1 min, 5 min, 30 min, 2 h and 12 h (scaled), then the delivery is `given_up`.
 * Bodies: the documented `candidate.accepted` and `candidate.responded` shapes; the others (not
 * shown in the reference) carry `event`, `staffingRequestId`, `externalId`, `status`,
 * `occurredAt` and what the transition is about.
 */
import { serviceSigner } from "../shared/service-signer.ts";
import type { SendInput, WebhookSender } from "../shared/webhook-sender.ts";
import { audit, isoNow, type StaffingContext, type StaffingRequest } from "./staffing-context.ts";

export const STAFFING_RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000, 43_200_000];

/** Signature, `X-Svc-Timestamp` and `X-Svc-Delivery-Id` of one attempt (the gateway's staffing module). */
const sign = serviceSigner("staffing");

/** The body of `event` about `request`. */
export function buildStaffingBody(
  ctx: StaffingContext,
  request: StaffingRequest,
  event: string,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const base = { event, staffingRequestId: request.id, externalId: request.externalId };
  if (event === "candidate.accepted" || event === "candidate.responded") return { ...base, ...extra };
  return { ...base, status: request.status, occurredAt: isoNow(ctx), ...extra };
}

/** Wires `ctx.emit` to deliver through `sender`; returns a one-shot sender for `test-webhook`. */
export function addStaffingWebhooks(ctx: StaffingContext, sender: WebhookSender, secret: string) {
  const input = (request: StaffingRequest, event: string, body: string): SendInput => {
    const id = `dlv_${crypto.randomUUID()}`;
    return {
      id,
      url: request.webhookUrl,
      event,
      subject: request.id,
      body,
      sign: (raw, nowMs) => sign(secret, raw, { nowMs, deliveryId: id }),
    };
  };
  ctx.emit = (request, event, extra = {}) => {
    const delivery = sender.send(input(request, event, JSON.stringify(buildStaffingBody(ctx, request, event, extra))));
    audit(ctx, request, "webhook_queued", { event, deliveryId: delivery.id });
  };
  return {
    /** Sends a signed ping once, now; answers with the receiver's status. */
    async ping(request: StaffingRequest) {
      const body = JSON.stringify({
        event: "ping",
        staffingRequestId: request.id,
        externalId: request.externalId,
        sentAt: isoNow(ctx),
      });
      const one = input(request, "ping", body);
      const attempt = await sender.attemptOnce(one);
      audit(ctx, request, "webhook_test", {
        deliveryId: one.id,
        status: attempt.status ?? null,
        error: attempt.error ?? null,
      });
      return { deliveryId: one.id, attempt };
    },
  };
}
