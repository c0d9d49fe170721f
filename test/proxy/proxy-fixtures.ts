/**
 * Fixtures of the proxy tests: client API keys, a configuration with both upstreams pointing at
 * the emulators (credentials passed through the environment, as in production), an in-process
 * gateway on a memory store with an injected clock, and a real gateway process.
 */

import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryStore } from "../../adapters/store/memory.ts";
import type { Gateway } from "../../src/create-gateway.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import type { EsignServer, StaffingServer } from "../helpers/emulators.ts";
import { type GatewayProcess, startGatewayProcess } from "../helpers/gateway-process.ts";
import { buildInProcessGateway } from "../helpers/in-process-gateway.ts";
import { adminKeyHash } from "../helpers/signed-requests.ts";

export const T0 = Date.parse("2026-11-24T12:00:00.000Z");

/** `sha256:<hex>` of a client API key (test/helpers/signed-requests.ts). */
export const hashKey = adminKeyHash;

/** A fresh client API key. */
export function newKey(prefix = "gwk"): string {
  return `${prefix}_${randomBytes(16).toString("hex")}`;
}

export interface ProxyConfigOptions {
  esign?: EsignServer;
  staffing?: StaffingServer;
  /** Merged into every upstream entry (timeouts, retries, replay limit). */
  upstream?: Record<string, unknown>;
  clients?: Record<string, unknown>[];
  auth?: Record<string, unknown>;
  log?: "debug" | "info" | "warn" | "silent";
  store?: Record<string, unknown>;
}

/** The environment holding the upstream credentials referenced by `proxyConfig`. */
export function proxyEnv(options: ProxyConfigOptions): Record<string, string> {
  return {
    ...(options.esign
      ? {
          TEST_ESIGN_CLIENT_ID: options.esign.client.clientId,
          TEST_ESIGN_CLIENT_SECRET: options.esign.client.clientSecret,
        }
      : {}),
    ...(options.staffing ? { TEST_STAFFING_API_KEY: options.staffing.apiKey } : {}),
  };
}

/** A gateway configuration with the proxy's upstreams and clients. */
export function proxyConfig(options: ProxyConfigOptions): Record<string, unknown> {
  const upstreams: Record<string, unknown>[] = [];
  if (options.esign) {
    upstreams.push({
      id: "esign",
      service: "esign",
      baseUrl: options.esign.baseUrl,
      clientId: "${TEST_ESIGN_CLIENT_ID}",
      clientSecret: "${TEST_ESIGN_CLIENT_SECRET}",
      retryDelayMs: 1,
      ...options.upstream,
    });
  }
  if (options.staffing) {
    upstreams.push({
      id: "staffing",
      service: "staffing",
      baseUrl: options.staffing.baseUrl,
      apiKey: "${TEST_STAFFING_API_KEY}",
      retryDelayMs: 1,
      ...options.upstream,
    });
  }
  return {
    server: { host: "127.0.0.1", port: 0 },
    store: options.store ?? { driver: "memory" },
    sources: [],
    upstreams,
    clients: options.clients ?? [],
    ...(options.auth ? { auth: options.auth } : {}),
    log: { level: options.log ?? "warn" },
  };
}

/** A client allowed everything on every upstream. */
export function fullClient(key: string, extra: Record<string, unknown> = {}) {
  return { id: "app", apiKeyHashes: [hashKey(key)], scopes: { proxy: [{ upstream: "*" }] }, ...extra };
}

export interface InProcessGateway {
  gateway: Gateway;
  store: StoreDriver;
  advance(ms: number): void;
  /** `fetch` against the gateway with `Authorization: Bearer <key>` unless given. */
  call(path: string, init?: RequestInit & { key?: string }): Promise<Response>;
}

/** Clock shared by an in-process gateway and its memory store (and optionally the fakes). */
export function createTestClock(start = T0) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

/** An in-process gateway; pass `store` to share one between instances. */
export function startInProcess(
  config: Record<string, unknown>,
  env: Record<string, string>,
  clock = createTestClock(),
  store: StoreDriver = memoryStore({ now: clock.now }),
  defaultKey?: string,
): InProcessGateway {
  const gateway = buildInProcessGateway({ config, env, store, clock: { now: clock.now } });
  return {
    gateway,
    store,
    advance: clock.advance,
    call(path, init = {}) {
      const headers = new Headers(init.headers);
      const key = init.key ?? defaultKey;
      if (key && !headers.has("authorization")) headers.set("authorization", `Bearer ${key}`);
      return gateway.fetch(new Request(`http://gateway.test${path}`, { ...init, headers }));
    },
  };
}

/** A real gateway process with the proxy configuration (credentials through its environment). */
export async function startProxyProcess(options: ProxyConfigOptions): Promise<GatewayProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), "gw-proxy-"));
  return startGatewayProcess({ config: proxyConfig(options), env: proxyEnv(options), dataDir });
}
