/**
 * `POST /webhooks/{sourceId}` without Request/Response objects (Gateway.receiveWebhook): what the
 * h3 route answers (src/gateway-routes.ts), with errors rendered and logged as the app's `onError`
 * does (src/gateway-request-hooks.ts). The Node fast path's entry (adapters/node/webhook-fast-path.ts).
 */
import { HTTPError } from "h3";
import { toErrorAnswer } from "./errors.ts";
import { logAnsweredError, requestIdOf } from "./gateway-request-hooks.ts";
import type { IngressDeps } from "./ingress/ingress-deps.ts";
import { receiveWebhook } from "./ingress/receive-webhook.ts";
import type { WebhookAnswer, WebhookInput } from "./ingress/webhook-exchange.ts";

export type WebhookEntry = (sourceId: string, input: WebhookInput, path: string) => Promise<WebhookAnswer>;

/** The webhook route's answer from a runtime-neutral input. */
export function createWebhookEntry(ctx: IngressDeps): WebhookEntry {
  return async (sourceId, input, path) => {
    const requestId = requestIdOf(input);
    try {
      return await receiveWebhook(ctx, sourceId, input, requestId);
    } catch (thrown) {
      // As h3 wraps what a handler throws: anything but an HTTPError is unhandled (no message leaks).
      const error = HTTPError.isError(thrown)
        ? thrown
        : Object.assign(new HTTPError(thrown as Error), { unhandled: true });
      const answer = toErrorAnswer(error);
      logAnsweredError(ctx.logger, error, answer.status, path);
      answer.headers["x-request-id"] ??= requestId;
      return answer;
    }
  };
}
