/**
 * The Worker's bindings (wrangler.toml and secrets) and the store every part of the Workers
 * deployment opens on them: the stateless Worker, the delivery object and the live hub.
 */
import { builtinServices } from "../../src/services/registry.ts";
import type { EventRecord, StoreDriver } from "../../src/store/contract.ts";
import type { TransformExecutor } from "../../src/transform/transform-contract.ts";
import type { DurableObjectNamespace } from "./cloudflare-types.ts";
import { createDurableObjectStore } from "./durable-object-store.ts";
import type { StoreShardObject } from "./store-shard-object.ts";
import { createTransformObjectExecutor, type TransformObjectRpc } from "./transform-object.ts";
import type { WorkerVars } from "./worker-config.ts";

/** The RPC surface of the delivery object (delivery-object.ts). */
export interface DeliveryObjectRpc {
  wake(record: EventRecord): Promise<void>;
  maintain(): Promise<number>;
  /** Erasure's share of the outbox (src/lifecycle/erase-events.ts). */
  eraseDeliveries(eventIds: string[]): Promise<{ cancelled: number; texts: string[] }>;
}

/** The RPC surface of the live hub object (live-hub-object.ts). */
export interface LiveHubObjectRpc {
  publish(record: EventRecord): Promise<void>;
  openSockets(clientId?: string): Promise<number>;
}

/** String vars and secrets (worker-config.ts), Durable Object namespaces, queue producers. */
export interface WorkerEnv extends WorkerVars {
  /** The store shards (`[[durable_objects.bindings]]` GATEWAY_STORE). */
  GATEWAY_STORE: DurableObjectNamespace<StoreShardObject>;
  /** The delivery engine's object (GATEWAY_DELIVERY): outbox, retries, admin API. */
  GATEWAY_DELIVERY: DurableObjectNamespace<DeliveryObjectRpc>;
  /** The live stream hub (GATEWAY_LIVE): `/ws` and `/stream` subscribers. */
  GATEWAY_LIVE: DurableObjectNamespace<LiveHubObjectRpc>;
  /**
   * Where transforms run (GATEWAY_TRANSFORM, transform-object.ts). Optional: without the binding
   * (a wrangler.toml from before it), transforms run inside the object that delivers.
   */
  GATEWAY_TRANSFORM?: DurableObjectNamespace<TransformObjectRpc>;
}

/** The transform executor of a deployment: its transform objects, when bound. */
export function workerTransformExecutor(env: WorkerEnv, slackMs: number): TransformExecutor | undefined {
  return env.GATEWAY_TRANSFORM ? createTransformObjectExecutor(env.GATEWAY_TRANSFORM, { slackMs }) : undefined;
}

/** The Durable Object store of a deployment (GATEWAY_STORE_SHARDS shards, default 1). */
export function openWorkerStore(env: WorkerEnv): StoreDriver {
  return createDurableObjectStore({
    services: builtinServices,
    namespace: env.GATEWAY_STORE,
    shards: env.GATEWAY_STORE_SHARDS ? Number(env.GATEWAY_STORE_SHARDS) : 1,
  });
}
