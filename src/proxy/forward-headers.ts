/**
 * Which headers cross the proxy. Upstream-bound: an allowlist of the headers that matter to the
 * APIs (never the client's `Authorization`, cookies or hop-by-hop headers). Client-bound: every
 * upstream header except hop-by-hop ones, cookies, the upstream's own CORS answer (the gateway
 * decides CORS per client) and encodings the runtime's fetch already decoded. Both are plain
 * records (lower-case names), which every runtime's `fetch` and `Response` take as they are.
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

/** Request headers as `Headers` or a record of lower-case names (a runtime's raw header list). */
export type IncomingHeaders = Headers | Readonly<Record<string, string | undefined>>;

/** Upstream answer headers: `Headers`, or a record of lower-case names (repeats joined, `set-cookie` as a list). */
export type UpstreamHeaders = Headers | Readonly<Record<string, string | string[] | undefined>>;

function readHeader(headers: IncomingHeaders, name: string): string | null {
  return headers instanceof Headers ? headers.get(name) : (headers[name] ?? null);
}

/** Headers for the upstream call: the allowlist plus the request id (credentials are added per attempt). */
export function buildUpstreamHeaders(incoming: IncomingHeaders, requestId: string): Record<string, string> {
  const headers: Record<string, string> = {};
  // A header the client names in `Connection` is hop-by-hop for this hop and stops here.
  const isHopByHop = hopByHopFilter(readHeader(incoming, "connection"));
  for (const name of REQUEST_ALLOWLIST) {
    const value = readHeader(incoming, name);
    if (value !== null && !isHopByHop(name)) headers[name] = value;
  }
  headers["x-request-id"] = requestId;
  // The client's own Accept-Encoding is not passed on: the gateway asks for the plain body and
  // decodes one that comes compressed anyway (docs/api-proxy.md#compressed-answers).
  headers["accept-encoding"] = "identity";
  return headers;
}

function forEachHeader(headers: UpstreamHeaders, visit: (value: string, name: string) => void): void {
  if (headers instanceof Headers) {
    headers.forEach(visit);
    return;
  }
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === "string") visit(value, name);
    else if (value) for (const item of value) visit(item, name);
  }
}

/** Headers of the answer to the client, from the upstream's response headers. */
export function buildClientHeaders(
  upstream: UpstreamHeaders,
  requestId: string,
  extra: Record<string, string>,
): Record<string, string> {
  const connection = upstream instanceof Headers ? upstream.get("connection") : upstream.connection;
  const encoding = upstream instanceof Headers ? upstream.get("content-encoding") : upstream["content-encoding"];
  const isHopByHop = hopByHopFilter(typeof connection === "string" ? connection : connection?.join(", "));
  const decoded = typeof encoding === "string" && DECODED_ENCODINGS.test(encoding);
  const headers: Record<string, string> = {};
  forEachHeader(upstream, (value, name) => {
    if (isHopByHop(name) || name === "set-cookie") return;
    if (name.startsWith("access-control-") || name === "x-request-id") return;
    if (decoded && (name === "content-encoding" || name === "content-length")) return;
    const earlier = headers[name];
    headers[name] = earlier === undefined ? value : `${earlier}, ${value}`;
  });
  headers["x-request-id"] = requestId;
  for (const name in extra) {
    const value = extra[name] as string;
    const present = name === "vary" ? headers.vary : undefined;
    headers[name] = present ? `${present}, ${value}` : value;
  }
  return headers;
}
