/**
 * Control calls both emulators share, under `{mountPath}/_emulator`:
 * `POST /advance {"ms"}` moves the emulated clock (due signings, calls and webhook retries run),
 * `GET /scheduled` lists what waits, `GET /requests` what the API saw (bounded),
 * `POST /faults` injects a fault into the next matching requests,
 * `GET /webhook-deliveries` lists outgoing webhooks with their attempts.
 */
import * as v from "valibot";
import { answer, type EmulatorFrame } from "./emulator-frame.ts";
import { json, readJsonObject } from "./http-answers.ts";
import type { Scheduler } from "./scheduler.ts";
import { parseOrFail } from "./validation.ts";
import type { WebhookSender } from "./webhook-sender.ts";

const AdvanceBody = v.object({ ms: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(366 * 86_400_000)) });

const FaultBody = v.object({
  method: v.optional(v.pipe(v.string(), v.toUpperCase())),
  /** Exact path relative to the API root. */
  path: v.optional(v.string()),
  /** A regular expression matched against the relative path instead. */
  pathPattern: v.optional(v.pipe(v.string(), v.maxLength(200))),
  times: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000))),
  fault: v.union([
    v.object({
      status: v.pipe(v.number(), v.integer(), v.minValue(200), v.maxValue(599)),
      body: v.optional(v.unknown()),
      headers: v.optional(v.record(v.string(), v.string())),
    }),
    v.object({ destroy: v.literal(true) }),
    v.object({ hang: v.literal(true) }),
  ]),
});

/** Adds the shared control routes. */
export function addCommonControl(frame: EmulatorFrame, scheduler: Scheduler, webhooks: WebhookSender): void {
  const { app, control, log } = frame;
  app.post(
    `${control}/advance`,
    answer(async (event) => {
      const { ms } = parseOrFail(AdvanceBody, await readJsonObject(event.req), "advance");
      const ran = await scheduler.advance(ms);
      return json(200, { now: new Date(scheduler.now()).toISOString(), ran });
    }),
  );
  app.get(`${control}/scheduled`, () =>
    json(200, {
      now: new Date(scheduler.now()).toISOString(),
      tasks: scheduler.pending().map((t) => ({ label: t.label, due_at: new Date(t.dueAt).toISOString() })),
    }),
  );
  app.get(`${control}/requests`, () => json(200, { requests: log.seen }));
  app.post(
    `${control}/faults`,
    answer(async (event) => {
      const rule = parseOrFail(FaultBody, await readJsonObject(event.req), "fault");
      log.inject({
        method: rule.method,
        path: rule.pathPattern ? new RegExp(rule.pathPattern) : rule.path,
        times: rule.times,
        fault: rule.fault,
      });
      return json(201, { ok: true });
    }),
  );
  app.get(`${control}/webhook-deliveries`, () =>
    json(200, {
      deliveries: webhooks.deliveries().map((d) => ({
        id: d.id,
        url: d.url,
        event: d.event,
        subject: d.subject ?? null,
        state: d.state,
        attempts: d.attempts,
        next_attempt_at: d.nextAttemptAt === undefined ? null : new Date(d.nextAttemptAt).toISOString(),
      })),
    }),
  );
}
