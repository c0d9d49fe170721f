/**
 * Connection hygiene of the Node server (docs/behind-a-load-balancer.md): header, keep-alive and
 * request timeouts, a cap on open connections that fits the process's file-descriptor limit, and
 * a cap per client address. Behind a proxy every client shares the proxy's address, so the
 * per-address cap is off unless `server.trustProxy` names the proxy (or the cap is set): then it
 * counts the requests in flight per forwarded client address, and the connections of other peers.
 * `X-Forwarded-For` entries that are not IP addresses are dropped; the header arriving while
 * `trustProxy` is off is logged once.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { GatewayConfig } from "../../src/config/schema.ts";
import {
  isIpAddress,
  isTrustedProxy,
  keepIpEntries,
  normalizeAddress,
  resolveClientAddress,
} from "../../src/http/client-address.ts";
import type { Logger } from "../../src/ops/logger.ts";

type ServerConfig = GatewayConfig["server"];

/** File descriptors kept for the store, upstream calls, sinks and logs. */
const RESERVED_DESCRIPTORS = 256;

/** The per-address cap when `trustProxy` names the proxies and `maxConnectionsPerAddress` is unset. */
export const DEFAULT_PER_ADDRESS_BEHIND_PROXY = 256;

/**
 * The effective per-address cap: as configured, else off without `trustProxy` (one address may be
 * a whole load balancer) and `DEFAULT_PER_ADDRESS_BEHIND_PROXY` with it.
 */
export function perAddressCap(config: ServerConfig): number | undefined {
  if (config.maxConnectionsPerAddress !== undefined) return config.maxConnectionsPerAddress;
  return config.trustProxy === false ? undefined : DEFAULT_PER_ADDRESS_BEHIND_PROXY;
}

/** Options for `http.createServer` (srvx passes `node` options through). */
export function nodeServerOptions(config: ServerConfig) {
  return {
    headersTimeout: config.headersTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    // How often Node looks for connections past their header or request timeout (default 30 s,
    // which would let an idle socket live 40 s past a 10 s header timeout).
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(config.headersTimeoutMs / 4))),
  };
}

/** The soft limit on open files of this process (Linux `/proc/self/limits`), if known. */
export function readOpenFileLimit(): number | undefined {
  try {
    const line = readFileSync("/proc/self/limits", "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"));
    const soft = line?.split(/\s{2,}/)[1];
    return soft && /^\d+$/.test(soft) ? Number(soft) : undefined;
  } catch {
    return undefined;
  }
}

const FORWARDED_WARNING =
  "X-Forwarded-For arrived but server.trustProxy is off: the peer address counts as the client. " +
  'Behind a proxy or load balancer set server.trustProxy to "loopback" or the proxy addresses ' +
  "(docs/behind-a-load-balancer.md); never for a port the internet reaches directly.";

/**
 * Watches `X-Forwarded-For` before srvx reads it: without `trustProxy`, warns once (and stops
 * looking); with it, drops the entries that are not IP addresses, so `unknown` or a host name is
 * never taken for the client. A spoofed header from an untrusted peer is ignored by srvx itself.
 */
function watchForwardedFor(server: Server, config: ServerConfig, logger: Logger): void {
  if (config.trustProxy === false) {
    const warnOnce = (req: IncomingMessage) => {
      if (req.headers["x-forwarded-for"] === undefined) return;
      server.off("request", warnOnce);
      logger.warn(FORWARDED_WARNING, { peer: req.socket.remoteAddress });
    };
    server.prependListener("request", warnOnce);
    return;
  }
  server.prependListener("request", (req: IncomingMessage) => {
    const forwarded = req.headers["x-forwarded-for"];
    if (forwarded === undefined) return;
    const kept = keepIpEntries(Array.isArray(forwarded) ? forwarded.join(",") : forwarded);
    if (kept === "") delete req.headers["x-forwarded-for"];
    else req.headers["x-forwarded-for"] = kept;
  });
}

/** The answer to a request over its forwarded client's cap (both webhook paths and h3 send it). */
export const TOO_MANY_FROM_CLIENT = {
  status: 429,
  headers: { "content-type": "application/json; charset=utf-8", "retry-after": "1" },
  body: JSON.stringify({ error: { code: "rate_limited", message: "too many open requests from this client address" } }),
} as const;

type NodeRuntimeRequest = Request & { ip?: string; runtime?: { node?: { req: IncomingMessage; res: ServerResponse } } };

/** The client address of a Node request under `server.trustProxy` (resolveClientAddress). */
export function nodeClientAddress(config: ServerConfig, req: IncomingMessage): string | undefined {
  return resolveClientAddress(config.trustProxy, req.socket.remoteAddress, req.headers["x-forwarded-for"]);
}

/**
 * The srvx middleware that gives every request the client address of `nodeClientAddress` as its
 * `ip` (srvx's own forwarded-address reading is replaced, so h3 and the webhook fast path read
 * one policy); undefined when `trustProxy` is off (srvx's `ip` is then the peer address, as
 * `nodeClientAddress` says too).
 */
export function trustedClientAddress(config: ServerConfig) {
  if (config.trustProxy === false) return undefined;
  return (request: NodeRuntimeRequest, next: () => Response | Promise<Response>) => {
    const req = request.runtime?.node?.req;
    if (req) {
      Object.defineProperty(request, "ip", {
        value: nodeClientAddress(config, req),
        enumerable: true,
        configurable: true,
      });
    }
    return next();
  };
}

/**
 * The per-address cap on forwarded client addresses (requests in flight through a trusted
 * proxy): `admit` counts the request until its answer closes, or says no when the address is at
 * its cap. Undefined when `trustProxy` is off or no cap applies.
 */
export function createForwardedClientCap(config: ServerConfig) {
  const cap = perAddressCap(config);
  if (config.trustProxy === false || cap === undefined) return undefined;
  const inFlight = new Map<string, number>();
  return {
    /** `ip`: the request's client address (nodeClientAddress). */
    admit(req: IncomingMessage, res: ServerResponse, ip: string | undefined): boolean {
      if (!isTrustedProxy(config.trustProxy, req.socket.remoteAddress)) return true;
      if (ip === undefined || !isIpAddress(normalizeAddress(ip))) return true;
      const address = normalizeAddress(ip);
      const open = inFlight.get(address) ?? 0;
      if (open >= cap) return false;
      inFlight.set(address, open + 1);
      res.once("close", () => {
        const left = (inFlight.get(address) ?? 1) - 1;
        if (left <= 0) inFlight.delete(address);
        else inFlight.set(address, left);
      });
      return true;
    },
  };
}

export type ForwardedClientCap = NonNullable<ReturnType<typeof createForwardedClientCap>>;

/** The srvx middleware that applies `cap` to the requests h3 answers. */
export function forwardedClientLimit(cap: ForwardedClientCap) {
  return (request: NodeRuntimeRequest, next: () => Response | Promise<Response>) => {
    const node = request.runtime?.node;
    if (!node || cap.admit(node.req, node.res, request.ip)) return next();
    return new Response(TOO_MANY_FROM_CLIENT.body, {
      status: TOO_MANY_FROM_CLIENT.status,
      headers: TOO_MANY_FROM_CLIENT.headers,
    });
  };
}

/** Applies the caps to a created (not necessarily listening) server; returns the effective maximum. */
export function applyConnectionLimits(server: Server, config: ServerConfig, logger: Logger): number {
  const fileLimit = readOpenFileLimit();
  const fitting = fileLimit === undefined ? config.maxConnections : Math.max(1, fileLimit - RESERVED_DESCRIPTORS);
  const maxConnections = Math.min(config.maxConnections, fitting);
  if (maxConnections < config.maxConnections) {
    logger.warn("maxConnections lowered to fit the open-file limit", {
      configured: config.maxConnections,
      effective: maxConnections,
      openFileLimit: fileLimit,
    });
  }
  // Node closes connections beyond this at once, before they cost a parser or a file past the limit.
  server.maxConnections = maxConnections;

  watchForwardedFor(server, config, logger);
  const cap = perAddressCap(config);
  if (cap === undefined) return maxConnections;
  const perAddress = new Map<string, number>();
  server.prependListener("connection", (socket: Socket) => {
    const raw = socket.remoteAddress;
    if (raw === undefined) return;
    const address = normalizeAddress(raw);
    if (isTrustedProxy(config.trustProxy, address)) return;
    const open = perAddress.get(address) ?? 0;
    if (open >= cap) {
      socket.destroy();
      return;
    }
    perAddress.set(address, open + 1);
    socket.once("close", () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
  return maxConnections;
}
