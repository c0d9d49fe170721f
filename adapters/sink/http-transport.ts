/**
 * The Node HTTP transport of one `http` destination: undici with one keep-alive Agent whose
 * `connect.lookup` runs the SSRF guard (guarded-lookup.ts) on every address the resolver returns,
 * right before the socket connects to it (no DNS-rebinding bypass); IP literals in the URL never
 * reach a resolver, so they are checked before the request. Redirects are never followed (a bare
 * dispatch does not follow them); the body of every answer is drained and dropped. It runs on the
 * send thread (http-send-worker.ts) by default, in the main thread when http.ts is told to.
 *
 * One attempt is one `dispatch` with a small callback handler (http-attempt-handler.ts), one
 * timer, and the lane's shutdown signal listened to once per transport rather than per attempt.
 */
import { Agent } from "undici";
import type { HttpSendResult, HttpTransport } from "../../src/delivery/http/http-sink.ts";
import type { AddressPolicy } from "../../src/ssrf/address-policy.ts";
import { createLiteralRefusal } from "../../src/ssrf/refuse-ip-literal.ts";
import { createGuardedLookup, type ResolveAll } from "./guarded-lookup.ts";
import { AttemptHandler } from "./http-attempt-handler.ts";

export interface HttpTransportOptions {
  policy: AddressPolicy;
  /** Default: the system resolver (`dns.lookup` with `all: true`). */
  resolve?: ResolveAll;
  /** Connections kept per origin. Default 16. */
  connections?: number;
}

/** The origin and path of a URL, split once per URL. */
function splitUrl(url: string): { origin: string; path: string } {
  const parsed = new URL(url);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

/** Creates the transport of one destination. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const agent = new Agent({
    connections: options.connections ?? 16,
    keepAliveTimeout: 4_000,
    connect: { lookup: createGuardedLookup(options.policy, options.resolve) },
  });
  /** IP literals in a URL never reach the resolver: judged before any connection. */
  const literalRefusal = createLiteralRefusal(options.policy);
  const targets = new Map<string, { origin: string; path: string }>();
  /** Attempts in flight per shutdown signal (the lane's, shared by all its attempts): one listener each. */
  const watched = new WeakMap<AbortSignal, Set<AttemptHandler>>();
  const attemptsOf = (signal: AbortSignal) => {
    let attempts = watched.get(signal);
    if (!attempts) {
      const set = new Set<AttemptHandler>();
      attempts = set;
      watched.set(signal, set);
      signal.addEventListener(
        "abort",
        () => {
          for (const handler of set) handler.abort(new Error("attempt aborted"));
        },
        { once: true },
      );
    }
    return attempts;
  };
  const sendOnce = (
    req: Parameters<HttpTransport["send"]>[0],
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<HttpSendResult> =>
    new Promise((resolve) => {
      let target = targets.get(req.url);
      if (!target) {
        target = splitUrl(req.url);
        targets.set(req.url, target);
      }
      // The handler holds the attempt's state, its timer and its way out: no closure per attempt.
      const handler = new AttemptHandler(resolve, signal, timeoutMs, attemptsOf(signal));
      try {
        agent.dispatch(
          {
            origin: target.origin,
            path: target.path,
            method: "POST",
            headers: req.headers,
            body: req.body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          handler,
        );
      } catch (error) {
        handler.onError(error as Error);
      }
    });
  return {
    async send(req, { signal, timeoutMs }): Promise<HttpSendResult> {
      const refusal = literalRefusal(req.url);
      if (refusal) return { ok: false, failure: "refused", detail: refusal };
      if (signal.aborted) return { ok: false, failure: "aborted", detail: "aborted" };
      return sendOnce(req, signal, timeoutMs);
    },
    close: () => agent.close(),
  };
}
