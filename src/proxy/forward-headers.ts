/**
 * Which headers cross the proxy. Upstream-bound: an allowlist of the headers that matter to the
 * APIs (never the client's `Authorization`, cookies or hop-by-hop headers). Client-bound: every
 * upstream header except hop-by-hop ones, cookies, the upstream's own CORS answer (the gateway
 * decides CORS per client) and encodings the runtime's fetch already decoded.
 */
import { hopByHopFilter } from "../http/hop-by-hop.ts";

const REQUEST_ALLOWLIST = [
  "accept",
  "accept-language",
  "content-type",
  "content-language",
  "idempotency-key",
  "if-match",
  "if-none-match",
  "if-modified-since",
  "if-unmodified-since",
  "if-range",
  "range",
  "prefer",
  // W3C Trace Context: the caller's trace continues upstream (replaced by the gateway's own
  // client span when tracing is on; docs/tracing.md).
  "traceparent",
  "tracestate",
];

/** Encodings `fetch` decodes transparently: the body we pass on is no longer encoded. */
const DECODED_ENCODINGS = /^(?:gzip|x-gzip|deflate|br)$/i;

/** Headers for the upstream call: the allowlist plus the request id (credentials are added per attempt). */
export function buildUpstreamHeaders(incoming: Headers, requestId: string): Headers {
  const headers = new Headers();
  // A header the client names in `Connection` is hop-by-hop for this hop and stops here.
  const isHopByHop = hopByHopFilter(incoming.get("connection"));
  for (const name of REQUEST_ALLOWLIST) {
    if (isHopByHop(name)) continue;
    const value = incoming.get(name);
    if (value !== null) headers.set(name, value);
  }
  headers.set("x-request-id", requestId);
  return headers;
}

/** Headers of the answer to the client, from the upstream's response. */
export function buildClientHeaders(upstream: Headers, requestId: string, extra: Record<string, string>): Headers {
  const isHopByHop = hopByHopFilter(upstream.get("connection"));
  const decoded = DECODED_ENCODINGS.test(upstream.get("content-encoding") ?? "");
  const headers = new Headers();
  upstream.forEach((value, name) => {
    if (isHopByHop(name) || name === "set-cookie") return;
    if (name.startsWith("access-control-") || name === "x-request-id") return;
    if (decoded && (name === "content-encoding" || name === "content-length")) return;
    headers.append(name, value);
  });
  headers.set("x-request-id", requestId);
  for (const [name, value] of Object.entries(extra)) {
    const present = name === "vary" ? headers.get("vary") : null;
    headers.set(name, present ? `${present}, ${value}` : value);
  }
  return headers;
}
