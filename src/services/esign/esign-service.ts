/**
 * The e-sign service: webhooks signed `sha256=<hex>` over the raw body, identified by the body's
 * `event_id`, about agreements; its API is called with OAuth 2.0 client credentials.
 */
import * as v from "valibot";
import { marksOf, stringField } from "../schema-marks.ts";
import { MAX_IDENTITY_LENGTH, type UpstreamService } from "../service-contract.ts";
import { ESIGN_CHAT_MESSAGES } from "./esign-chat-messages.ts";
import { esignEnrichment } from "./esign-enrichment.ts";
import { buildEsignSample } from "./esign-samples.ts";
import { ESIGN_TEMPLATES } from "./esign-templates.ts";
import { ESIGN_EVENT_TYPES, EsignWebhookBody } from "./esign-webhook-schema.ts";
import { signEsignWebhook } from "./sign-esign-webhook.ts";
import { checkEsignSignatureForm, verifyEsignSignature } from "./verify-esign-signature.ts";

const knownTypes = new Set<string>(ESIGN_EVENT_TYPES);

export const esignService: UpstreamService = {
  name: "esign",
  eventTypes: ESIGN_EVENT_TYPES,
  // The CRM reference: top level in current payloads, only under `data` in some older ones.
  searchFields: { externalId: ["external_id", "data.external_id"] },
  verifyWebhook: ({ source, headers, rawBody, signatureForm }, crypto) =>
    verifyEsignSignature(
      {
        signature: headers.get("x-svc-signature"),
        rawBody,
        secrets: source.secrets,
        mac: signatureForm instanceof Uint8Array ? signatureForm : undefined,
      },
      crypto,
    ),
  checkSignatureForm: (headers) => checkEsignSignatureForm(headers.get("x-svc-signature")),
  async describeEvent(body, { headers }) {
    const eventId = stringField(body.event_id);
    if (!eventId || eventId.length > MAX_IDENTITY_LENGTH) {
      return { ok: false, message: "the body has no usable `event_id`" };
    }
    const type = stringField(body.event) ?? stringField(body.event_type) ?? stringField(headers.get("x-svc-event"));
    const data = body.data as Record<string, unknown> | undefined;
    const agreementId = stringField(body.agreement_id) ?? stringField(data?.agreement_id);
    const marks = marksOf(v.safeParse(EsignWebhookBody, body).issues);
    if (!type || !knownTypes.has(type)) marks.push("unknown_type");
    return {
      ok: true,
      identity: eventId,
      identityKind: "event_id",
      type,
      subject: agreementId && `agreements/${agreementId}`,
      time: body.created_at,
      marks,
    };
  },
  signDelivery: async (secret, rawBody, _options, crypto) => ({
    "x-svc-signature": await signEsignWebhook(crypto, secret, rawBody),
  }),
  buildSample: buildEsignSample,
  proxyCredentials: { kind: "oauth-client-credentials", tokenPath: "/oauth/access-token" },
  mailTemplates: ESIGN_TEMPLATES,
  chatMessages: ESIGN_CHAT_MESSAGES,
  enrichment: esignEnrichment,
};
