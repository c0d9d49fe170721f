/**
 * The staffing service: webhooks signed `t=<unix>,v1=<hex>` over `<t>.<raw body>` within a
 * tolerance, identified by `X-Svc-Delivery-Id` (or the body's SHA-256), about staffing
 * requests; its API is called with a bearer API key.
 */
import * as v from "valibot";
import { toHex } from "../../crypto/crypto-port.ts";
import { marksOf, stringField } from "../schema-marks.ts";
import { MAX_IDENTITY_LENGTH, type UpstreamService } from "../service-contract.ts";
import { signStaffingWebhook } from "./sign-staffing-webhook.ts";
import { STAFFING_CHAT_MESSAGES } from "./staffing-chat-messages.ts";
import { staffingEnrichment } from "./staffing-enrichment.ts";
import { buildStaffingSample } from "./staffing-samples.ts";
import { STAFFING_TEMPLATES } from "./staffing-templates.ts";
import { STAFFING_EVENT_TYPES, staffingSchemaFor } from "./staffing-webhook-schema.ts";
import {
  checkStaffingSignatureForm,
  type ParsedStaffingSignature,
  verifyStaffingSignature,
} from "./verify-staffing-signature.ts";

const knownTypes = new Set<string>(STAFFING_EVENT_TYPES);

export const staffingService: UpstreamService = {
  name: "staffing",
  searchFields: { externalId: ["externalId"] },
  eventTypes: STAFFING_EVENT_TYPES,
  verifyWebhook: ({ source, headers, rawBody, nowMs, signatureForm }, crypto) =>
    verifyStaffingSignature(
      {
        signature: headers.get("x-svc-signature"),
        timestamp: headers.get("x-svc-timestamp"),
        rawBody,
        secrets: source.secrets,
        toleranceSeconds: source.toleranceSeconds,
        nowSeconds: Math.floor(nowMs / 1000),
        // Only ever this service's own `checkSignatureForm` result for the same headers.
        parsed: signatureForm as ParsedStaffingSignature | undefined,
      },
      crypto,
    ),
  checkSignatureForm: (headers) =>
    checkStaffingSignatureForm(headers.get("x-svc-signature"), headers.get("x-svc-timestamp")),
  async describeEvent(body, { source, headers, rawBody }, crypto) {
    const deliveryId = stringField(headers.get("x-svc-delivery-id"));
    const byDeliveryId =
      source.identity === "delivery-id" && deliveryId !== undefined && deliveryId.length <= MAX_IDENTITY_LENGTH;
    const type = stringField(body.event);
    const requestId = stringField(body.staffingRequestId);
    const marks = type ? marksOf(v.safeParse(staffingSchemaFor(type), body).issues) : ["schema_mismatch"];
    if (!type || !knownTypes.has(type)) marks.push("unknown_type");
    return {
      ok: true,
      identity: byDeliveryId ? deliveryId : toHex(await crypto.sha256(rawBody)),
      identityKind: byDeliveryId ? "delivery-id" : "body-sha256",
      type,
      subject: requestId && `staffing-requests/${requestId}`,
      time: body.answeredAt,
      marks,
    };
  },
  async signDelivery(secret, rawBody, { nowMs, deliveryId }, crypto) {
    const t = Math.floor(nowMs / 1000);
    return {
      "x-svc-signature": await signStaffingWebhook(crypto, secret, rawBody, t),
      "x-svc-timestamp": String(t),
      "x-svc-delivery-id": deliveryId,
    };
  },
  buildSample: buildStaffingSample,
  proxyCredentials: { kind: "api-key" },
  mailTemplates: STAFFING_TEMPLATES,
  chatMessages: STAFFING_CHAT_MESSAGES,
  enrichment: staffingEnrichment,
};
