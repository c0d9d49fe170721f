/**
 * The Cloudflare Workers entry: builds the gateway once per isolate from the Worker's bindings
 * (worker-config.ts) around the Durable Object store (durable-object-store.ts), and serves it
 * through h3's Workers adapter. Every isolate shares the same objects, so dedupe holds across
 * isolates and locations, and an event is durable in its shard before the 202 leaves
 * (README "Deploy to Cloudflare Workers").
 */
import { serve } from "h3/cloudflare";
import { createGateway } from "../../src/create-gateway.ts";
import type { DurableObjectNamespace } from "./cloudflare-types.ts";
import { createDurableObjectStore } from "./durable-object-store.ts";
import type { StoreShardObject } from "./store-shard-object.ts";
import { createWorkerConfig, type WorkerVars } from "./worker-config.ts";

export { StoreShardObject } from "./store-shard-object.ts";
export { createWorkerConfig } from "./worker-config.ts";

/** The Worker's bindings: the string vars and secrets of worker-config.ts, and the objects. */
export interface WorkerEnv extends WorkerVars {
  /** The store shards (wrangler.toml `[[durable_objects.bindings]]`). */
  GATEWAY_STORE: DurableObjectNamespace<StoreShardObject>;
}

/** The part of the Workers `ExecutionContext` the server uses, typed structurally so the core's
 * DOM-based typecheck needs no Workers type definitions. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

type Server = ReturnType<typeof serve>;
let server: Server | undefined;

// Bindings reach the Worker only through `fetch`, so the gateway is built on the first request
// and kept for the life of the isolate. A missing or invalid binding throws a ConfigError naming
// the field (never the secret); the runtime logs it and answers 500 until the binding is fixed.
function serverFor(env: WorkerEnv): Server {
  if (!server) {
    const config = createWorkerConfig(env);
    const store = createDurableObjectStore({
      namespace: env.GATEWAY_STORE,
      shards: env.GATEWAY_STORE_SHARDS ? Number(env.GATEWAY_STORE_SHARDS) : 1,
    });
    const gateway = createGateway({ config, store });
    server = serve(gateway.app, { manual: true });
  }
  return server;
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response> {
    return serverFor(env).fetch(request, env, ctx);
  },
};
