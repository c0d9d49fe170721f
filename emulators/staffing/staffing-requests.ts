/**
 * Staffing endpoints (staffing reference, Endpoints): `healthz`, `me`, create (idempotent by
 * `externalId`, and by `Idempotency-Key` for 24 h with `Idempotent-Replayed: true` and 409
 * `idempotency_conflict`), get, cancel, retry, calls, events and `test-webhook`. Bodies the
 * reference does not show: cancel and retry answer `{id, status}`, calls `{calls}`, events
 * `{events}`, test-webhook `{ok, deliveryId, status}`; a cancel or retry in a state that does
 * not allow it answers 409 `conflict`.
 */
import { answer, param } from "../shared/emulator-frame.ts";
import { fail, json, parseJsonObject, readBytes } from "../shared/http-answers.ts";
import { createIdempotencyCache } from "../shared/idempotency.ts";
import { parseOrFail } from "../shared/validation.ts";
import { apiKeyOf } from "./api-keys.ts";
import { CreateStaffingRequest, normalizeKeys } from "./request-schema.ts";
import {
  audit,
  findRequest,
  isoNow,
  type StaffingContext,
  type StaffingRequest,
  transition,
} from "./staffing-context.ts";

const CANCELLABLE = new Set([
  "queued",
  "calling",
  "candidate_accepted",
  "candidate_declined",
  "no_answer",
  "requires_review",
]);

/** The request as `GET /staffing-requests/{id}` shows it. */
export function presentRequest(r: StaffingRequest) {
  return {
    id: r.id,
    status: r.status,
    shiftId: r.shift.id ?? null,
    externalId: r.externalId,
    mode: r.mode,
    result: r.result,
    calls: r.calls,
    createdAt: r.createdAt,
  };
}

/** Adds the API routes; `ping` sends the test webhook. */
export function addStaffingRoutes(
  ctx: StaffingContext,
  ping: (r: StaffingRequest) => Promise<{ deliveryId: string; attempt: { status?: number; error?: string } }>,
) {
  const { app, api } = ctx.frame;
  const idempotency = createIdempotencyCache(() => ctx.scheduler.now());

  app.get(`${api}/healthz`, () => json(200, { ok: true, service: "staffing", emulator: true, time: isoNow(ctx) }));
  app.get(`${api}/me`, (event) =>
    json(200, {
      organizationId: "org_emulator",
      organizationName: "Emulator organization",
      environment: "sandbox",
      keyPrefix: apiKeyOf(event).slice(0, 12),
      permissions: ["staffing-requests:read", "staffing-requests:write"],
      rateLimit: { limit: ctx.options.limitPerMinute ?? 60, windowSeconds: 60 },
    }),
  );

  app.post(
    `${api}/staffing-requests`,
    answer(async (event) => {
      const key = apiKeyOf(event);
      const raw = await readBytes(event.req, 1024 * 1024);
      const idemKey = event.req.headers.get("idempotency-key");
      if (idemKey !== null && (idemKey.length < 1 || idemKey.length > 255)) {
        fail(400, "invalid_request", "Idempotency-Key must be 1 to 255 characters");
      }
      const lookup = idemKey === null ? undefined : await idempotency.lookup(key, idemKey, raw);
      if (lookup?.kind === "conflict")
        fail(409, "idempotency_conflict", "Idempotency-Key reused with a different body");
      if (lookup?.kind === "replay") return json(lookup.status, lookup.body, { "idempotent-replayed": "true" });
      const input = parseOrFail(CreateStaffingRequest, normalizeKeys(parseJsonObject(raw)), "staffing request");
      const webhookUrl = input.webhookUrl ?? ctx.options.defaultWebhookUrl;
      if (!webhookUrl)
        fail(400, "invalid_request", "invalid staffing request: webhookUrl: required", {
          issues: [{ path: "webhookUrl", message: "required" }],
        });
      const existingId = ctx.byExternalId.get(`${key}\n${input.externalId}`);
      const existing = existingId ? ctx.requests.get(existingId) : undefined;
      if (existing) {
        const body = {
          staffingRequestId: existing.id,
          status: existing.status,
          message: "A staffing request with this externalId exists",
        };
        lookup?.kind === "new" && lookup.remember(200, body);
        return json(200, body);
      }
      const request: StaffingRequest = {
        id: crypto.randomUUID(),
        apiKey: key,
        externalId: input.externalId,
        organizationId: input.organizationId ?? null,
        mode: input.mode,
        shift: input.shift,
        candidates: [...input.candidates].sort((a, b) => a.priority - b.priority),
        rules: {
          requireManagerApproval: input.rules.requireManagerApproval,
          minConfidenceForAutoBook: input.rules.minConfidenceForAutoBook,
          stopWhenAccepted: input.rules.stopWhenAccepted,
          maxAcceptedWorkers: input.rules.maxAcceptedWorkers,
          maxAttemptsPerCandidate: input.rules.maxAttemptsPerCandidate,
          callTimeoutSeconds: input.rules.callTimeoutSeconds,
          allowPartial: input.rules.allowPartial,
        },
        webhookUrl,
        status: "queued",
        result: null,
        calls: [],
        events: [],
        attempts: new Map(),
        settled: new Set(),
        accepted: [],
        generation: 0,
        createdAt: isoNow(ctx),
      };
      ctx.requests.set(request.id, request);
      ctx.byExternalId.set(`${key}\n${request.externalId}`, request.id);
      audit(ctx, request, "created");
      ctx.emit(request, "staffing.queued");
      ctx.startCalling(request);
      const body = {
        staffingRequestId: request.id,
        status: "queued",
        message: "Staffing request queued; calling begins shortly",
      };
      if (lookup?.kind === "new") lookup.remember(201, body);
      return json(201, body);
    }),
  );

  const item = `${api}/staffing-requests/:id`;
  const found = (event: Parameters<typeof apiKeyOf>[0]) => findRequest(ctx, apiKeyOf(event), param(event, "id"));
  app.get(
    item,
    answer((event) => json(200, presentRequest(found(event)))),
  );
  app.get(
    `${item}/calls`,
    answer((event) => json(200, { calls: found(event).calls })),
  );
  app.get(
    `${item}/events`,
    answer((event) => json(200, { events: found(event).events })),
  );
  app.post(
    `${item}/cancel`,
    answer((event) => {
      const r = found(event);
      if (!CANCELLABLE.has(r.status))
        fail(409, "conflict", `the staffing request is ${r.status} and cannot be cancelled`);
      r.generation++;
      transition(ctx, r, "cancelled", "staffing.cancelled");
      return json(200, { id: r.id, status: r.status });
    }),
  );
  app.post(
    `${item}/retry`,
    answer((event) => {
      const r = found(event);
      if (r.status !== "failed" && r.status !== "no_answer") {
        fail(409, "conflict", `retry needs status failed or no_answer, not ${r.status}`);
      }
      // Candidates who answered stay settled; those never reached get a fresh round of attempts.
      r.generation++;
      const answered = new Set(r.calls.filter((c) => c.intent !== null).map((c) => c.candidateId));
      r.settled = new Set([...r.settled].filter((id) => answered.has(id)));
      for (const c of r.candidates) if (!answered.has(c.id)) r.attempts.set(c.id, 0);
      r.status = "queued";
      audit(ctx, r, "retry");
      ctx.startCalling(r);
      return json(200, { id: r.id, status: "calling" });
    }),
  );
  app.post(
    `${item}/test-webhook`,
    answer(async (event) => {
      const r = found(event);
      const { deliveryId, attempt } = await ping(r);
      const ok = attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300;
      return json(200, {
        ok,
        deliveryId,
        status: attempt.status ?? null,
        ...(attempt.error ? { error: attempt.error } : {}),
      });
    }),
  );
  app.all(`${api}/**`, () => json(404, { error: { code: "not_found", message: "no such endpoint" } }));
}
