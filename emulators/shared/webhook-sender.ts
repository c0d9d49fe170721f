/**
 * Outgoing webhooks of the emulators: each delivery is POSTed with `fetch`, signed afresh on every
 * attempt (the staffing signature covers the attempt's timestamp), and retried on a network error
 * or a non-2xx answer after the service's documented delays, on the scheduler (so retries follow
 * the emulated clock and its time scale). After the last retry fails it is `given_up`. Every
 * delivery and attempt is kept (bounded) for `GET /_emulator/webhook-deliveries`.
 */
import { pushBounded } from "./bounded-map.ts";
import type { Scheduler } from "./scheduler.ts";

export interface WebhookAttempt {
  at: string;
  /** The receiver's HTTP status, when it answered. */
  status?: number;
  /** Why the attempt failed without an answer. */
  error?: string;
}

export type WebhookState = "pending" | "delivered" | "retrying" | "given_up";

export interface WebhookDelivery {
  id: string;
  url: string;
  event: string;
  /** The resource the event is about (agreement or staffing request id). */
  subject?: string;
  state: WebhookState;
  attempts: WebhookAttempt[];
  /** Emulated epoch ms of the next attempt while retrying. */
  nextAttemptAt?: number;
  body: string;
}

export interface SendInput {
  id: string;
  url: string;
  event: string;
  subject?: string;
  body: string;
  /** Headers of one attempt (signature included), computed at the attempt's emulated time. */
  sign(body: string, nowMs: number): Promise<Record<string, string>>;
}

export interface WebhookSenderOptions {
  scheduler: Scheduler;
  /** Delays (emulated ms) before each retry; their count is the number of retries. */
  retryDelaysMs: readonly number[];
  /** Default `globalThis.fetch`. */
  fetch?: typeof fetch;
  /** Per attempt. Default 10 s (real time). */
  timeoutMs?: number;
  /** Deliveries kept for inspection. Default 1000. */
  maxKept?: number;
  /** Sees every attempt as it ends. */
  onAttempt?: (delivery: WebhookDelivery, attempt: WebhookAttempt) => void;
}

export interface WebhookSender {
  /** Queues a delivery; its first attempt runs on the scheduler at once. */
  send(input: SendInput): WebhookDelivery;
  /** Runs one attempt now, outside the retry schedule (`test-webhook`). */
  attemptOnce(input: SendInput): Promise<WebhookAttempt>;
  deliveries(): readonly WebhookDelivery[];
}

/** Creates a sender; see the module comment. */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const { scheduler } = options;
  const doFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const kept: WebhookDelivery[] = [];
  const maxKept = options.maxKept ?? 1000;

  const attempt = async (input: SendInput): Promise<WebhookAttempt> => {
    const now = scheduler.now();
    const at = new Date(now).toISOString();
    try {
      const headers = await input.sign(input.body, now);
      const answer = await doFetch(input.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: input.body,
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      await answer.body?.cancel();
      return { at, status: answer.status };
    } catch (error) {
      return { at, error: error instanceof Error ? error.message : String(error) };
    }
  };

  const run = async (delivery: WebhookDelivery, input: SendInput) => {
    const result = await attempt(input);
    delivery.attempts.push(result);
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const retryIndex = delivery.attempts.length - 1;
    const delay = options.retryDelaysMs[retryIndex];
    if (ok) {
      delivery.state = "delivered";
      delivery.nextAttemptAt = undefined;
    } else if (delay === undefined) {
      delivery.state = "given_up";
      delivery.nextAttemptAt = undefined;
    } else {
      delivery.state = "retrying";
      delivery.nextAttemptAt = scheduler.now() + delay * scheduler.timeScale;
      scheduler.after(delay, `webhook retry ${delivery.id}`, () => run(delivery, input));
    }
    options.onAttempt?.(delivery, result);
  };

  return {
    send(input) {
      const delivery: WebhookDelivery = {
        id: input.id,
        url: input.url,
        event: input.event,
        subject: input.subject,
        state: "pending",
        attempts: [],
        body: input.body,
      };
      pushBounded(kept, delivery, maxKept);
      scheduler.after(0, `webhook ${delivery.id}`, () => run(delivery, input));
      return delivery;
    },
    attemptOnce: attempt,
    deliveries: () => kept,
  };
}
