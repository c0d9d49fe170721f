/**
 * The one reader of JSON request bodies of the gateway's own API (replay, erase, retention,
 * filter and transform tests, test events, stream tokens): the bytes are read through the
 * runtime's body reader (`GatewayContext.readBody`, the same one ingress uses), which stops as
 * soon as the body passes its cap, whether it declared a `Content-Length` or came chunked. A body
 * past the cap is answered 413 `payload_too_large` with `Connection: close` (docs/configuration.md#request-body-limits);
 * memory never holds more than the cap, and the Node reader discards the rest in a bounded
 * staged close. Nesting is bounded as everywhere else (json-depth.ts).
 */
import { parseBoundedJson } from "../encoding/json-depth.ts";
import { createGatewayError } from "../errors.ts";

/** The cap on a JSON body of the gateway's API, bytes (docs/configuration.md#request-body-limits). */
export const API_BODY_LIMIT_BYTES = 1024 * 1024;

/** How a body is read: `GatewayContext.readBody` (src/ingress/read-raw-body.ts is the Web-streams one). */
export type BodyReader = (
  request: Request,
  limit: number,
) => Promise<{ ok: true; bytes: Uint8Array } | { ok: false; reason?: string }>;

/** Options of one read. */
export interface ReadJsonBodyOptions {
  /** Bytes accepted. Default `API_BODY_LIMIT_BYTES`. */
  limit?: number;
  /** What an empty (or blank) body stands for. Default: an empty body is not JSON (400). */
  empty?: unknown;
  /** The message of the 400 when the body is not JSON. Default "the body is not JSON". */
  notJsonMessage?: string;
}

/** The 413 of a body past `limit`, closing the connection (the rest of the body stays unread). */
export function payloadTooLarge(limit: number) {
  return createGatewayError(413, "payload_too_large", `the request body is larger than ${limit} bytes`, {
    details: { limit },
    headers: { connection: "close" },
  });
}

/** Reads `request`'s body (at most `options.limit` bytes) and parses it as JSON. */
export async function readJsonBody(
  readBody: BodyReader,
  request: Request,
  options: ReadJsonBodyOptions = {},
): Promise<unknown> {
  const limit = options.limit ?? API_BODY_LIMIT_BYTES;
  const body = await readBody(request, limit);
  if (!body.ok) throw payloadTooLarge(limit);
  const text = new TextDecoder().decode(body.bytes);
  if (options.empty !== undefined && text.trim() === "") return options.empty;
  try {
    return parseBoundedJson(text);
  } catch {
    throw createGatewayError(400, "invalid_request", options.notJsonMessage ?? "the body is not JSON");
  }
}
