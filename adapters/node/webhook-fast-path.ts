/**
 * The Node fast path of `POST /webhooks/{sourceId}`: the request goes from Node's
 * `IncomingMessage` straight to the gateway's ingress policy (`Gateway.receiveWebhook`, the same
 * `receiveWebhook` the h3 route calls) and the plain answer is written on the `ServerResponse`,
 * without building a Fetch Request, a Response or srvx/h3's wrappers around them. h3 keeps
 * everything else: other methods and paths, source ids with characters a URL parser could
 * rewrite, and every request while the fast path is off.
 *
 * Same semantics by construction: the policy (guards, limiter, verification, normalization,
 * store, logs, metrics, error envelope) is one code path in src/ingress; this file only reads
 * the headers (as a `Headers` would answer), the body (readIncomingBody: caps enforced while
 * reading, the deadline) and the peer address, and writes the answer. The server's own limits
 * (connection caps, header and request timeouts) are on the Node server and apply to both.
 *
 * Behind a trusted proxy (`server.trustProxy`) the client address and the per-client cap are the
 * ones h3's requests get (connection-limits.ts: `nodeClientAddress`, `createForwardedClientCap`).
 * Off (h3 answers webhooks too) when `GATEWAY_WEBHOOK_FAST_PATH=off` and while tracing is on (the
 * traced route keeps the Fetch Request for its span).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { GatewayConfig } from "../../src/config/schema.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import { toErrorAnswer } from "../../src/errors.ts";
import type { HeaderReader } from "../../src/http/header-reader.ts";
import type { BodyLease } from "../../src/ingress/body-budget.ts";
import type { WebhookInput } from "../../src/ingress/webhook-exchange.ts";
import type { Logger } from "../../src/ops/logger.ts";
import { CliFailure } from "./cli-errors.ts";
import { type ForwardedClientCap, nodeClientAddress, TOO_MANY_FROM_CLIENT } from "./connection-limits.ts";
import { listRawHeaders } from "./list-node-headers.ts";
import { readIncomingBody } from "./read-node-body.ts";

const PREFIX = "/webhooks/";
/** Source ids the fast path takes as they are (config ids are `[a-z0-9][a-z0-9_-]*`); others go to h3. */
const PLAIN_ID = /^[A-Za-z0-9_-]{1,256}$/;

/** The source id of a request the fast path answers, or undefined when h3 should route it. */
export function fastWebhookSourceId(req: IncomingMessage): string | undefined {
  if (req.method !== "POST") return undefined;
  const url = req.url;
  if (url === undefined || !url.startsWith(PREFIX)) return undefined;
  const query = url.indexOf("?", PREFIX.length);
  const id = query === -1 ? url.slice(PREFIX.length) : url.slice(PREFIX.length, query);
  return PLAIN_ID.test(id) ? id : undefined;
}

/** `GATEWAY_WEBHOOK_FAST_PATH`: `on` (default, also unset or empty) or `off`; anything else throws. */
export function readWebhookFastPathSetting(env: NodeJS.ProcessEnv): boolean {
  const setting = env.GATEWAY_WEBHOOK_FAST_PATH;
  if (setting === undefined || setting === "" || setting === "on") return true;
  if (setting === "off") return false;
  throw new CliFailure(`GATEWAY_WEBHOOK_FAST_PATH: expected on or off, received ${setting}`);
}

/** Whether the fast path may answer webhooks: switched on and tracing off (the gateway has no `receiveWebhook` then). */
export function webhookFastPathEnabled(gateway: Pick<Gateway, "receiveWebhook">, switchedOn: boolean): boolean {
  return switchedOn && gateway.receiveWebhook !== undefined;
}

/**
 * A request's headers read the way a Fetch `Headers` answers `get` (lower-cased names, repeated
 * ones joined by ", ", surrounding whitespace stripped), from Node's raw header list, built once.
 */
class NodeHeaderReader implements HeaderReader {
  #raw: readonly string[];
  #list: Record<string, string> | undefined;
  constructor(raw: readonly string[]) {
    this.#raw = raw;
  }
  get(name: string): string | null {
    this.#list ??= listRawHeaders(this.#raw);
    return this.#list[name.toLowerCase()] ?? null;
  }
  /** The list for the event record, which redacts it in place: handed over, not shared. */
  take(): Record<string, string> {
    const list = this.#list ?? listRawHeaders(this.#raw);
    this.#list = undefined;
    return list;
  }
}

/**
 * The `WebhookInput` of one `IncomingMessage`. A class, not an object literal of closures: the
 * methods live on the prototype, so a request allocates no function objects (under tsx every
 * named closure also costs a `__name` call per request).
 */
class NodeWebhookInput implements WebhookInput {
  readonly headers: NodeHeaderReader;
  readonly clientAddress: string | undefined;
  #req: IncomingMessage;
  constructor(req: IncomingMessage, clientAddress: string | undefined) {
    this.#req = req;
    this.headers = new NodeHeaderReader(req.rawHeaders);
    this.clientAddress = clientAddress;
  }
  readBody(limit: number, deadlineMs?: number, lease?: BodyLease) {
    return readIncomingBody(this.#req, limit, deadlineMs, lease);
  }
  listHeaders() {
    return this.headers.take();
  }
}

/**
 * Puts the fast path in front of the request handler srvx gave the server; returns whether it
 * did (the server must have exactly that one `request` listener). `serverConfig` and `perClient`:
 * the client-address policy and the per-client cap h3's middleware applies (connection-limits.ts).
 */
export function installWebhookFastPath(
  server: Server,
  gateway: Pick<Gateway, "receiveWebhook">,
  logger: Logger,
  serverConfig: GatewayConfig["server"],
  perClient?: ForwardedClientCap,
): boolean {
  const receive = gateway.receiveWebhook;
  const listeners = server.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const routed = listeners[0];
  if (!receive) return false;
  if (listeners.length !== 1 || !routed) {
    logger.warn("webhook fast path not installed: the server has other request handlers", {
      handlers: listeners.length,
    });
    return false;
  }
  const answer = async (req: IncomingMessage, res: ServerResponse, sourceId: string) => {
    const clientAddress = nodeClientAddress(serverConfig, req);
    if (perClient && !perClient.admit(req, res, clientAddress)) {
      // As h3's middleware answers it (no request id: it comes before the route).
      res.writeHead(TOO_MANY_FROM_CLIENT.status, {
        ...TOO_MANY_FROM_CLIENT.headers,
        "content-length": String(Buffer.byteLength(TOO_MANY_FROM_CLIENT.body)),
      });
      res.end(TOO_MANY_FROM_CLIENT.body);
      return;
    }
    const input = new NodeWebhookInput(req, clientAddress);
    const url = req.url as string;
    const query = url.indexOf("?");
    const reply = await receive(sourceId, input, query === -1 ? url : url.slice(0, query));
    reply.headers["content-length"] = String(Buffer.byteLength(reply.body));
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  };
  server.removeListener("request", routed);
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const sourceId = fastWebhookSourceId(req);
    if (sourceId === undefined) {
      routed.call(server, req, res);
      return;
    }
    answer(req, res, sourceId).catch((error: unknown) => {
      // Only writing the answer can throw here (receiveWebhook renders its own errors).
      logger.error("unhandled error", { path: PREFIX, error: String(error) });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const failed = toErrorAnswer(error);
      res.writeHead(failed.status, failed.headers);
      res.end(failed.body);
    });
  });
  logger.debug("webhooks answered by the Node fast path (GATEWAY_WEBHOOK_FAST_PATH)");
  return true;
}
