/**
 * The Node header lister (`GatewayContext.listHeaders`): reads the `IncomingMessage`'s raw header
 * pairs behind srvx's Request (`runtime.node.req`) into a record, the way iterating a `Headers`
 * lists them (lower-cased names, repeated ones joined by ", ", HTTP/2 pseudo-headers left out).
 * Iterating srvx's lazy `Headers` instead builds a full Fetch `Headers` per request first.
 * Falls back to the Request's `Headers` when no Node request is behind.
 */
import type { IncomingMessage } from "node:http";

const EDGE_WHITESPACE = /^[\t ]|[\t ]$/;

type NodeBacked = Request & { runtime?: { node?: { req?: IncomingMessage } } };

/** The request's headers as lower-cased name -> value. */
export function listNodeHeaders(request: Request): Record<string, string> {
  const raw = (request as NodeBacked).runtime?.node?.req?.rawHeaders;
  if (!raw) {
    const out: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      out[name] = value;
    });
    return out;
  }
  return listRawHeaders(raw);
}

/** Node's raw header pairs (`IncomingMessage.rawHeaders`) as a `Headers` lists them. */
export function listRawHeaders(raw: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    if (name.charCodeAt(0) === 58) continue;
    const given = raw[i + 1] as string;
    // Fetch's Headers strip surrounding tabs and spaces (HTTP whitespace); so does this.
    const value = EDGE_WHITESPACE.test(given) ? given.replace(/^[\t ]+|[\t ]+$/g, "") : given;
    const earlier = out[name];
    out[name] = earlier === undefined ? value : `${earlier}, ${value}`;
  }
  return out;
}
