/**
 * The Cloudflare Workers entry: builds the gateway once per isolate from the Worker's bindings
 * (secrets `ESIGN_WEBHOOK_SECRET`, `STAFFING_WEBHOOK_SECRET`, optional `GATEWAY_ADMIN_KEY_HASH`
 * and `GATEWAY_LOG_LEVEL`) and serves it through h3's Workers adapter. The store is the memory
 * one for now, so dedupe spans one isolate only; durable storage on Workers (Durable Objects)
 * comes with the full Workers deployment.
 */
import { serve } from "h3/cloudflare";
import { resolveConfig } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { createGateway } from "../../src/create-gateway.ts";
import { inProcessHub } from "../hub/in-process.ts";
import { memoryStore } from "../store/memory.ts";

/** The bindings this Worker reads (vars or secrets, all strings). */
export interface WorkerEnv {
  ESIGN_WEBHOOK_SECRET?: string;
  STAFFING_WEBHOOK_SECRET?: string;
  /** `sha256:<hex>` of the admin API key (`gateway hash-key <key>`). Default: no admin key. */
  GATEWAY_ADMIN_KEY_HASH?: string;
  /** `debug`, `info`, `warn`, `error` or `silent`. Default `info`. */
  GATEWAY_LOG_LEVEL?: string;
}

/** The part of the Workers `ExecutionContext` the server uses, typed structurally so the core's
 * DOM-based typecheck needs no Workers type definitions. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

/** The Workers configuration: both sources with secrets from the bindings, memory store. */
export function createWorkerConfig(env: WorkerEnv): GatewayConfig {
  const raw = {
    store: { driver: "memory" },
    sources: [
      { id: "esign", service: "esign", secrets: ["${ESIGN_WEBHOOK_SECRET}"] },
      { id: "staffing", service: "staffing", secrets: ["${STAFFING_WEBHOOK_SECRET}"] },
    ],
    admin: { apiKeyHashes: env.GATEWAY_ADMIN_KEY_HASH ? ["${GATEWAY_ADMIN_KEY_HASH}"] : [] },
    log: { level: env.GATEWAY_LOG_LEVEL ?? "info" },
  };
  return resolveConfig(raw, { ...env });
}

type Server = ReturnType<typeof serve>;
let server: Server | undefined;

// Bindings reach the Worker only through `fetch`, so the gateway is built on the first request
// and kept for the life of the isolate. A missing or invalid binding throws a ConfigError naming
// the field (never the secret); the runtime logs it and answers 500 until the binding is fixed.
function serverFor(env: WorkerEnv): Server {
  if (!server) {
    const gateway = createGateway({
      config: createWorkerConfig(env),
      store: memoryStore(),
      hub: inProcessHub(undefined),
    });
    server = serve(gateway.app, { manual: true });
  }
  return server;
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response> {
    return serverFor(env).fetch(request, env, ctx);
  },
};
