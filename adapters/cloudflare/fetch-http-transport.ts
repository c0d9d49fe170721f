/**
 * The HTTP transport of `http` destinations on Workers: the runtime's `fetch`, never following
 * redirects, with the attempt's deadline. Name resolution happens in Cloudflare's network, which
 * does not let a Worker reach private addresses; IP literals in a destination URL are still
 * checked against the destination's address policy before any request (as on Node).
 */
import type { HttpSendResult, HttpTransport } from "../../src/delivery/http/http-sink.ts";
import { toTransportFailure } from "../../src/delivery/http/transport-failure.ts";
import { fetchWithDeadline } from "../../src/http/fetch-with-deadline.ts";
import type { AddressPolicy } from "../../src/ssrf/address-policy.ts";
import { createLiteralRefusal } from "../../src/ssrf/refuse-ip-literal.ts";

/** Creates the transport of one destination. */
export function createFetchHttpTransport(policy: AddressPolicy): HttpTransport {
  const literalRefusal = createLiteralRefusal(policy);
  return {
    async send(req, { signal, timeoutMs }): Promise<HttpSendResult> {
      const refusal = literalRefusal(req.url);
      if (refusal) return toTransportFailure({ refusal, timedOut: false, aborted: false, detail: "" }, timeoutMs);
      const outcome = await fetchWithDeadline(
        req.url,
        { method: "POST", headers: req.headers, body: req.body as Uint8Array<ArrayBuffer>, redirect: "manual" },
        { signal, timeoutMs },
      );
      if (!outcome.ok) {
        const detail = outcome.error instanceof Error ? outcome.error.name : "Error";
        return toTransportFailure(
          { timedOut: outcome.failure === "timeout", aborted: outcome.failure === "aborted", detail },
          timeoutMs,
        );
      }
      const { response } = outcome;
      await response.body?.cancel().catch(() => {});
      return { ok: true, status: response.status, retryAfter: response.headers.get("retry-after") ?? undefined };
    },
    close: async () => {},
  };
}
