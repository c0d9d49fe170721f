/**
 * The staffing emulator: an h3 app speaking the staffing API v1 (staffing reference) from memory,
 * with simulated calling and signed, retried webhooks on an injectable clock. Control calls
 * under `/_emulator`: the shared ones (common-control.ts), plus `POST /scripts`
 * `{candidateId, answers: [{intent, confidence?, partial?}]}` to script a candidate's answers,
 * `POST /staffing-requests/{id}/review {approve}` for the manual decision of `requires_review`,
 * and `GET /state`.
 */
import type { H3 } from "h3";
import * as v from "valibot";
import { addCommonControl } from "../shared/common-control.ts";
import { answer, createEmulatorFrame, type EmulatorFrame, param } from "../shared/emulator-frame.ts";
import { randomSecret } from "../shared/hmac.ts";
import { fail, json, readJsonObject } from "../shared/http-answers.ts";
import { createScheduler, type Scheduler } from "../shared/scheduler.ts";
import { parseOrFail } from "../shared/validation.ts";
import { createWebhookSender, type WebhookSender } from "../shared/webhook-sender.ts";
import { installApiKeys, SANDBOX_PREFIX } from "./api-keys.ts";
import { addCalling } from "./calling.ts";
import { audit, createStaffingContext, INTENTS, isoNow, type StaffingEmulatorOptions } from "./staffing-context.ts";
import { addStaffingRoutes, presentRequest } from "./staffing-requests.ts";
import { addStaffingWebhooks, STAFFING_RETRY_DELAYS_MS } from "./staffing-webhooks.ts";

export type { StaffingEmulatorOptions };

export interface StaffingEmulator {
  app: H3;
  apiPath: string;
  /** Route prefix of the control calls (`{mountPath}/_emulator`). */
  controlPath: string;
  /** The first API key. */
  apiKey: string;
  /** The organization's webhook signing secret. */
  webhookSecret: string;
  scheduler: Scheduler;
  log: EmulatorFrame["log"];
  webhooks: WebhookSender;
  /** Points requests without `webhookUrl` at `url` (the sandbox wires the gateway). */
  setDefaultWebhookUrl(url: string): void;
  close(): void;
}

const Script = v.object({
  candidateId: v.pipe(v.string(), v.minLength(1)),
  answers: v.pipe(
    v.array(
      v.object({
        intent: v.picklist([...INTENTS, "no_answer"]),
        confidence: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(1))),
        partial: v.optional(v.boolean()),
      }),
    ),
    v.maxLength(50),
  ),
});
const Review = v.object({ approve: v.boolean() });

/** Creates the staffing emulator; see the module comment and `StaffingEmulatorOptions`. */
export function createStaffingEmulator(options: StaffingEmulatorOptions = {}): StaffingEmulator {
  const frame = createEmulatorFrame({ mountPath: options.mountPath, serverErrorCode: "internal_error" });
  const scheduler = createScheduler({ now: options.now, timeScale: options.timeScale, autoRun: options.autoRun });
  const resolved: StaffingEmulatorOptions = { ...options };
  const ctx = createStaffingContext(frame, scheduler, resolved);
  const apiKeys = options.apiKeys ?? [randomSecret(SANDBOX_PREFIX)];
  const secret = options.webhookSecret ?? randomSecret("whsec_");
  const sender = createWebhookSender({
    scheduler,
    retryDelaysMs: STAFFING_RETRY_DELAYS_MS,
    fetch: options.fetch,
    onAttempt(delivery, attempt) {
      const request = delivery.subject ? ctx.requests.get(delivery.subject) : undefined;
      if (request) {
        audit(ctx, request, "webhook_delivery", {
          event: delivery.event,
          deliveryId: delivery.id,
          state: delivery.state,
          status: attempt.status ?? null,
          error: attempt.error ?? null,
        });
      }
    },
  });
  installApiKeys(ctx, apiKeys);
  const { ping } = addStaffingWebhooks(ctx, sender, secret);
  const calling = addCalling(ctx);
  addStaffingRoutes(ctx, ping);
  addCommonControl(frame, scheduler, sender);

  const { app, control } = frame;
  app.post(
    `${control}/scripts`,
    answer(async (event) => {
      const script = parseOrFail(Script, await readJsonObject(event.req), "script");
      calling.answers.setScript(script.candidateId, script.answers);
      return json(201, { ok: true });
    }),
  );
  app.post(
    `${control}/staffing-requests/:id/review`,
    answer(async (event) => {
      const request = ctx.requests.get(param(event, "id"));
      if (!request) fail(404, "not_found", "the staffing request does not exist");
      const { approve } = parseOrFail(Review, await readJsonObject(event.req), "review");
      if (request.status !== "requires_review")
        fail(409, "conflict", `the request is ${request.status}, not requires_review`);
      calling.review(request, approve);
      return json(200, presentRequest(request));
    }),
  );
  app.get(`${control}/state`, () =>
    json(200, {
      service: "staffing",
      now: isoNow(ctx),
      requests: ctx.requests.size,
      webhook_deliveries: sender.deliveries().length,
    }),
  );

  return {
    app,
    apiPath: frame.api,
    controlPath: control,
    apiKey: apiKeys[0] as string,
    webhookSecret: secret,
    scheduler,
    log: frame.log,
    webhooks: sender,
    setDefaultWebhookUrl(url) {
      resolved.defaultWebhookUrl = url;
    },
    close() {
      scheduler.close();
      frame.close();
    },
  };
}
