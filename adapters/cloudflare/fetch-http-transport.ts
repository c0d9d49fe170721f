/**
 * The HTTP transport of `http` destinations on Workers: the runtime's `fetch`, never following
 * redirects, with the attempt's deadline. Name resolution happens in Cloudflare's network, which
 * does not let a Worker reach private addresses; IP literals in a destination URL are still
 * checked against the destination's address policy before any request (as on Node).
 */
import type { HttpSendResult, HttpTransport } from "../../src/delivery/http/http-sink.ts";
import { type AddressPolicy, checkAddress } from "../../src/ssrf/address-policy.ts";

/** Creates the transport of one destination. */
export function createFetchHttpTransport(policy: AddressPolicy): HttpTransport {
  const literals = new Map<string, string | undefined>();
  const literalRefusal = (url: string) => {
    if (!literals.has(url)) {
      const hostname = new URL(url).hostname.replace(/^\[|\]$/g, "");
      const decision = checkAddress(hostname, policy);
      literals.set(url, decision.class.category !== "invalid" && !decision.allowed ? decision.reason : undefined);
    }
    return literals.get(url);
  };
  return {
    async send(req, { signal, timeoutMs }): Promise<HttpSendResult> {
      const refusal = literalRefusal(req.url);
      if (refusal) return { ok: false, failure: "refused", detail: refusal };
      const controller = new AbortController();
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      const onAbort = () => controller.abort();
      if (signal.aborted) controller.abort();
      else signal.addEventListener("abort", onAbort, { once: true });
      try {
        const response = await fetch(req.url, {
          method: "POST",
          headers: req.headers,
          body: req.body as Uint8Array<ArrayBuffer>,
          redirect: "manual",
          signal: controller.signal,
        });
        await response.body?.cancel().catch(() => {});
        return { ok: true, status: response.status, retryAfter: response.headers.get("retry-after") ?? undefined };
      } catch (error) {
        if (timedOut) return { ok: false, failure: "timeout", detail: `no answer within ${timeoutMs} ms` };
        if (signal.aborted) return { ok: false, failure: "aborted", detail: "aborted" };
        return { ok: false, failure: "network", detail: (error as Error).name };
      } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      }
    },
    close: async () => {},
  };
}
