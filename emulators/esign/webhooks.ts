/**
 * e-sign webhooks (esign reference, Endpoints > Webhooks and Events): registration (`GET`,
 * `POST`, `DELETE /webhooks`; the secret is shown once, `secret_preview` keeps its first 8
 * characters), self-registration at `POST /webhooks/register` (the reference does not show the
 * path), and delivery: one body per event with the documented fields, `X-Svc-Event`,
 * `X-Svc-Delivery`, `X-Svc-Signature: sha256=<hex of HMAC-SHA256(raw body)>`, retried with
 * exponential backoff for up to 24 hours. An agreement with `webhook_url` sends all its events
 * there instead, signed with the client signing key.
 */
import * as v from "valibot";
import { ESIGN_EVENT_TYPES } from "../../src/services/esign/esign-webhook-schema.ts";
import { pushBounded } from "../shared/bounded-map.ts";
import { answer, param } from "../shared/emulator-frame.ts";
import { randomSecret } from "../shared/hmac.ts";
import { fail, json, readJsonObject } from "../shared/http-answers.ts";
import { serviceSigner } from "../shared/service-signer.ts";
import { parseOrFail } from "../shared/validation.ts";
import type { WebhookSender } from "../shared/webhook-sender.ts";
import { type EmitExtra, type EsignContext, isoNow } from "./esign-context.ts";
import type { Agreement } from "./esign-types.ts";
import { presentParticipant } from "./present-agreement.ts";
import type { Guard } from "./tokens.ts";

/** The default set of self-registration (reference, Webhooks, rule 3). */
const DEFAULT_EVENTS = [
  "agreement.sent",
  "agreement.viewed",
  "agreement.signed",
  "agreement.declined",
  "agreement.completed",
  "agreement.cancelled",
  "agreement.expired",
];

/** 1 min doubling to 512 min: ten retries, the last about 17 h after the first attempt (< 24 h). */
export const ESIGN_RETRY_DELAYS_MS = Array.from({ length: 10 }, (_, i) => 60_000 * 2 ** i);

interface Registration {
  id: string;
  url: string;
  events: string[];
  secret: string;
  created_at: string;
  active: boolean;
}

const EventName = v.picklist([...ESIGN_EVENT_TYPES, "*"]);
const RegisterBody = v.object({
  url: v.pipe(v.string(), v.maxLength(500), v.url()),
  events: v.pipe(v.array(EventName), v.minLength(1), v.maxLength(20)),
  client_id: v.optional(v.string()),
});
const SelfRegisterBody = v.object({
  url: v.pipe(v.string(), v.maxLength(500), v.url()),
  events: v.optional(v.pipe(v.array(EventName), v.minLength(1), v.maxLength(20))),
  rotate_secret: v.optional(v.boolean()),
});

const present = (r: Registration) => ({
  id: r.id,
  url: r.url,
  events: r.events,
  secret_preview: r.secret.slice(0, 8),
  created_at: r.created_at,
});

/** Adds the webhook endpoints and wires `ctx.emit` to deliver through `sender`. */
export function addWebhooks(ctx: EsignContext, guard: Guard, sender: WebhookSender) {
  const registrations: Registration[] = [];
  const signingSecret = ctx.options.signingSecret ?? randomSecret("whsec_");
  const sign = serviceSigner("esign");
  const recent: Record<string, unknown>[] = [];
  const register = (url: string, events: string[], secret = randomSecret("whsec_")): Registration => {
    const registration = { id: crypto.randomUUID(), url, events, secret, created_at: isoNow(ctx), active: true };
    registrations.push(registration);
    if (registrations.length > 100) registrations.shift();
    return registration;
  };
  for (const w of ctx.options.webhooks ?? []) register(w.url, w.events ?? ["*"], w.secret);

  const { app, api } = ctx.frame;
  app.get(
    `${api}/webhooks`,
    answer(async (event) => {
      await guard(event);
      return json(200, { webhooks: registrations.filter((r) => r.active).map(present) });
    }),
  );
  app.post(
    `${api}/webhooks`,
    answer(async (event) => {
      await guard(event);
      const body = parseOrFail(RegisterBody, await readJsonObject(event.req), "webhook");
      const registration = register(body.url, [...new Set(body.events)]);
      return json(201, { ...present(registration), secret: registration.secret });
    }),
  );
  app.post(
    `${api}/webhooks/register`,
    answer(async (event) => {
      await guard(event);
      const body = parseOrFail(SelfRegisterBody, await readJsonObject(event.req), "webhook");
      const existing = registrations.find((r) => r.url === body.url);
      if (!existing) {
        const registration = register(body.url, body.events ?? DEFAULT_EVENTS);
        return json(201, { created: true, webhook: present(registration), signing_secret: registration.secret });
      }
      existing.active = true;
      existing.events = [...new Set([...existing.events, ...(body.events ?? [])])];
      if (body.rotate_secret) existing.secret = randomSecret("whsec_");
      return json(200, {
        created: false,
        webhook: present(existing),
        ...(body.rotate_secret ? { signing_secret: existing.secret } : {}),
      });
    }),
  );
  app.delete(
    `${api}/webhooks/:id`,
    answer(async (event) => {
      await guard(event);
      const index = registrations.findIndex((r) => r.id === param(event, "id") && r.active);
      if (index < 0) fail(404, "not_found", "webhook not found");
      registrations.splice(index, 1);
      return new Response(null, { status: 204 });
    }),
  );
  // Client-level event listing, named by the reference as an alternative to webhooks; its
  // parameters are not shown: `limit` (1-200, default 50), newest first.
  app.get(
    `${api}/events`,
    answer(async (event) => {
      await guard(event, "agreements:read");
      const limit = Number(event.url.searchParams.get("limit") ?? "50");
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) fail(400, "invalid_request", "limit: 1 to 200");
      return json(200, { events: recent.slice(-limit).reverse() });
    }),
  );

  ctx.emit = (agreement, event, extra = {}) => {
    const eventId = `evt_${crypto.randomUUID()}`;
    const targets = agreement.webhook_url
      ? [{ url: agreement.webhook_url, secret: signingSecret }]
      : registrations.filter((r) => r.active && (r.events.includes("*") || r.events.includes(event)));
    pushBounded(recent, buildBody(ctx, agreement, event, eventId, "", extra), 1000);
    for (const target of targets) {
      const deliveryId = `dlv_${crypto.randomUUID()}`;
      const body = JSON.stringify(buildBody(ctx, agreement, event, eventId, deliveryId, extra));
      sender.send({
        id: deliveryId,
        url: target.url,
        event,
        subject: agreement.id,
        body,
        sign: async (raw, nowMs) => ({
          "x-svc-event": event,
          "x-svc-delivery": deliveryId,
          ...(await sign(target.secret, raw, { nowMs, deliveryId })),
        }),
      });
    }
  };

  return {
    /** Registers a webhook with a known secret (the sandbox registers the gateway). */
    register: (url: string, secret: string, events: string[] = ["*"]) => present(register(url, events, secret)),
    signingSecret,
  };
}

/** The documented body of one event about `agreement`. */
function buildBody(
  ctx: EsignContext,
  agreement: Agreement,
  event: string,
  eventId: string,
  deliveryId: string,
  extra: EmitExtra,
): Record<string, unknown> {
  const linked = agreement.external_id !== null || agreement.external_source !== null;
  const external = linked ? { external_id: agreement.external_id, external_source: agreement.external_source } : {};
  const participant = extra.participant ?? null;
  const body: Record<string, unknown> = {
    event,
    event_type: event,
    event_id: eventId,
    delivery_id: deliveryId,
    created_at: isoNow(ctx),
    agreement_id: agreement.id,
    status: agreement.status,
    ...external,
    participant,
    data: { agreement_id: agreement.id, status: agreement.status, participant, ...external },
  };
  if (extra.signature) body.signature = extra.signature;
  if (extra.identification) body.identification = extra.identification;
  if (event === "agreement.completed") {
    body.participants = agreement.participants.map((p) => {
      const { id, email, name, status, role, signed_at } = presentParticipant(p);
      return { id, email, name, status, role, signed_at };
    });
    body.document = {
      signed_pdf_url: agreement.completed_delivery === "secure_link" ? null : agreement.signed_pdf_url,
    };
  }
  return body;
}
