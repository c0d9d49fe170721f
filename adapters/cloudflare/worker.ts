/**
 * The Cloudflare Workers entry: builds the gateway once per isolate from the Worker's bindings
 * (worker-config.ts) around the Durable Object store (durable-object-store.ts), and serves it
 * through h3's Workers adapter. Every isolate shares the same objects, so dedupe holds across
 * isolates and locations, and an event is durable in its shard before the 202 leaves.
 * The delivery admin API is answered by the delivery object and the live stream (`/ws`,
 * `/stream`) by the live hub object; both hear of every recorded event right after its append
 * (docs/cloudflare-workers.md).
 */
import { waitUntil } from "cloudflare:workers";
import { serve } from "h3/cloudflare";
import { ConfigError } from "../../src/config/resolve-config.ts";
import type { GatewayConfig } from "../../src/config/schema.ts";
import { createGateway } from "../../src/create-gateway.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { durableObjectHub } from "./durable-object-hub.ts";
import { loadQuickJSWorker } from "./quickjs-worker.ts";
import { createWorkerConfig } from "./worker-config.ts";
import { openWorkerStore, type WorkerEnv, workerTransformExecutor } from "./worker-env.ts";
import { createWorkerTracing } from "./worker-tracing.ts";
import { workerUpstreamFetch } from "./worker-upstream-fetch.ts";

export { DeliveryObject } from "./delivery-object.ts";
export { LiveHubObject } from "./live-hub-object.ts";
export { StoreShardObject } from "./store-shard-object.ts";
export { TransformObject } from "./transform-object.ts";
export { createWorkerConfig } from "./worker-config.ts";
export type { WorkerEnv } from "./worker-env.ts";

/** The part of the Workers `ExecutionContext` the server uses, typed structurally so the core's
 * DOM-based typecheck needs no Workers type definitions. */
export interface WorkerContext {
  waitUntil(promise: Promise<unknown>): void;
  passThroughOnException(): void;
}

/** Paths of the delivery admin API (src/delivery/delivery-admin-api.ts), served by the delivery object. */
const DELIVERY_PATH = /^\/(destinations(\/|$)|events\/[^/]+\/replay$)/;

/** Paths of the live stream, served by the live hub object. */
const LIVE_PATH = /^\/(ws|stream)$/;

/** True when the config routes events to a destination the delivery engine serves. */
function deliversAnything(config: GatewayConfig): boolean {
  return config.destinations.some((d) => d.type !== "stream") && config.routes.length > 0;
}

const live = (env: WorkerEnv) => env.GATEWAY_LIVE.get(env.GATEWAY_LIVE.idFromName("live"));
const delivery = (env: WorkerEnv) => env.GATEWAY_DELIVERY.get(env.GATEWAY_DELIVERY.idFromName("delivery"));

type Server = ReturnType<typeof serve>;
let server: Server | undefined;
let gatewayOfIsolate: ReturnType<typeof createGateway> | undefined;

// Bindings reach the Worker only through `fetch`, so the gateway is built on the first request
// and kept for the life of the isolate. A missing or invalid binding throws a ConfigError naming
// the field (never the secret): nothing is generated in its place (fail closed, like `gateway
// serve --config`); the Worker logs one error line per problem and answers every request 500
// until a deploy fixes the binding (`misconfigured` below).
function serverFor(env: WorkerEnv): Server {
  if (!server) {
    const config = createWorkerConfig(env);
    const forwards: ((record: EventRecord) => Promise<unknown>)[] = [];
    // Both objects hear of each record right after its durable append, inside the webhook's request.
    if (deliversAnything(config)) forwards.push((record) => delivery(env).wake(record));
    if (config.destinations.some((d) => d.type === "stream")) forwards.push((record) => live(env).publish(record));
    const hub = durableObjectHub({
      forwards,
      waitUntil,
      onForwardError: (error) =>
        console.error(JSON.stringify({ level: "error", msg: "hub forward failed", error: String(error) })),
    });
    const gateway = createGateway({
      config,
      store: openWorkerStore(env),
      hub,
      loadQuickJS: loadQuickJSWorker,
      tracing: createWorkerTracing(env),
      upstreamFetch: workerUpstreamFetch,
      // The outbox lives in the delivery object: erasure scrubs its records there.
      eraseDeliveries: deliversAnything(config) ? (ids) => delivery(env).eraseDeliveries([...ids]) : undefined,
      transformExecutor: workerTransformExecutor(env, config.transforms.deadlineSlackMs),
    });
    gatewayOfIsolate = gateway;
    server = serve(gateway.app, { manual: true });
  }
  return server;
}

/**
 * The answer of a Worker whose bindings do not make a valid config: 500 `internal_error` in the
 * error envelope, the problems only in the Worker's log (they name fields and variables, which
 * are not the caller's business). An upstream's webhook is then retried later, never accepted.
 */
function misconfigured(error: ConfigError): Response {
  for (const problem of error.problems) {
    console.error(JSON.stringify({ level: "error", msg: "invalid configuration", problem }));
  }
  return new Response(
    JSON.stringify({
      error: { code: "internal_error", message: "the gateway's configuration is invalid; see the Worker's logs" },
    }),
    { status: 500, headers: { "content-type": "application/json; charset=utf-8" } },
  );
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: WorkerContext): Promise<Response> {
    let served: Server;
    try {
      served = serverFor(env);
    } catch (error) {
      if (error instanceof ConfigError) return misconfigured(error);
      throw error;
    }
    const { pathname } = new URL(request.url);
    if (DELIVERY_PATH.test(pathname)) {
      return delivery(env).fetch(request);
    }
    if (LIVE_PATH.test(pathname)) return live(env).fetch(request);
    const response = await served.fetch(request, env, ctx);
    // The request's spans (server, verify, record) leave after the answer, within its lifetime.
    const tracing = gatewayOfIsolate?.ctx.tracing;
    if (tracing) ctx.waitUntil(tracing.flush());
    return response;
  },

  /** The cron trigger (wrangler.toml `[triggers]`): retention of the event log and the outbox, interrupted erasures. */
  async scheduled(_controller: unknown, env: WorkerEnv, ctx: WorkerContext): Promise<void> {
    serverFor(env);
    const gateway = gatewayOfIsolate as NonNullable<typeof gatewayOfIsolate>;
    ctx.waitUntil(Promise.all([gateway.runMaintenance(), delivery(env).maintain(), gateway.resumeErasures()]));
  },
};
