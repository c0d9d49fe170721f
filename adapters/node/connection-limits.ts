/**
 * Connection hygiene of the Node server (README "Security"): header, keep-alive and request
 * timeouts, a cap on open connections that fits the process's file-descriptor limit, and a cap
 * per client address, so one address holding thousands of idle sockets cannot starve health
 * checks and genuine webhooks from others. Connections from trusted proxies
 * (`server.trustProxy`) are exempt from the per-address cap: every client arrives through them.
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { normalizeAddress } from "../../src/http/client-address.ts";
import type { Logger } from "../../src/ops/logger.ts";

type ServerConfig = GatewayConfig["server"];

/** File descriptors kept for the store, upstream calls, sinks and logs. */
const RESERVED_DESCRIPTORS = 256;

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

function isTrustedProxy(trustProxy: ServerConfig["trustProxy"], address: string): boolean {
  if (trustProxy === false) return false;
  if (trustProxy === "loopback") return address === "::1" || address.startsWith("127.");
  return trustProxy.some((proxy) => normalizeAddress(proxy) === address);
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

  const perAddress = new Map<string, number>();
  const cap = config.maxConnectionsPerAddress;
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
