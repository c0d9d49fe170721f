/**
 * The runtime-neutral shape of one `POST /webhooks/{sourceId}` exchange: what `receiveWebhook`
 * reads of the request and what it answers. The h3 route builds the input from a Fetch `Request`
 * and renders the answer as an h3 response (webhookInputOfRequest below); the Node fast path
 * (adapters/node/webhook-fast-path.ts) builds it from an `IncomingMessage` and writes the answer
 * on the `ServerResponse`. Same policy, same answers, whichever runtime object carried them.
 */
import { clientAddressOf } from "../http/client-address.ts";
import type { HeaderReader } from "../http/header-reader.ts";
import type { BodyLease } from "./body-budget.ts";
import type { RawBodyResult } from "./read-raw-body.ts";

export interface WebhookInput {
  headers: HeaderReader;
  /** The client address as the runtime reports it (after `server.trustProxy`), if known. */
  clientAddress: string | undefined;
  /**
   * Reads the body as exact bytes, refusing past `limit` while reading, giving up at the deadline,
   * and taking each chunk from `lease` (the process's body budget) when given.
   */
  readBody(limit: number, deadlineMs?: number, lease?: BodyLease): Promise<RawBodyResult>;
  /** The headers as lower-cased name -> value, repeated ones joined by ", " (what the record keeps). */
  listHeaders(): Headers | Record<string, string>;
}

/** An answer to render as it is: status, lower-cased headers, body text. */
export interface WebhookAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The input of a Fetch `Request`, read with the runtime's body reader and header lister. */
export function webhookInputOfRequest(
  request: Request,
  readBody: (request: Request, limit: number, deadlineMs?: number, lease?: BodyLease) => Promise<RawBodyResult>,
  listHeaders: ((request: Request) => Record<string, string>) | undefined,
): WebhookInput {
  return {
    headers: request.headers,
    clientAddress: clientAddressOf(request),
    readBody: (limit, deadlineMs, lease) => readBody(request, limit, deadlineMs, lease),
    listHeaders: () => (listHeaders ? listHeaders(request) : request.headers),
  };
}
