/**
 * The parts of `cloudflare:workers` the workerd tests use, typed against the DOM lib like the
 * rest of the tree (the full @cloudflare/workers-types globals clash with h3's DOM-based types
 * when the core is checked through them).
 */
declare module "cloudflare:workers" {
  /** The Worker's bindings, as set in vitest.workers.config.ts. */
  export const env: {
    ESIGN_WEBHOOK_SECRET: string;
    STAFFING_WEBHOOK_SECRET: string;
    /** Comma-separated extra staffing secrets (key rotation). */
    STAFFING_WEBHOOK_SECRETS: string;
    GATEWAY_ADMIN_KEY_HASH: string;
    /** The admin key of GATEWAY_ADMIN_KEY_HASH (a test-only binding). */
    WORKERD_TEST_ADMIN_KEY: string;
    /** The http destinations' Standard Webhooks secret (a test-only binding). */
    WORKERD_TEST_WHSEC: string;
    /** The HS256 secret of client JWTs (a test-only binding GATEWAY_CONFIG references). */
    WORKERD_TEST_JWT_SECRET: string;
    GATEWAY_LOG_LEVEL: string;
    /** The http destinations' Standard Webhooks secret (a test-only binding). */
    WORKERD_TEST_WHSEC: string;
    /** The loopback HTTP receiver (test/helpers/http-sink-receiver.ts). */
    TEST_SINK_URL: string;
    /** The gateway's configuration as JSON (vitest.workers.config.ts). */
    GATEWAY_CONFIG: string;
    /** The OTLP/HTTP receiver of the Worker's traces (test/helpers/otlp-receiver.ts). */
    OTEL_EXPORTER_OTLP_ENDPOINT: string;
    GATEWAY_STORE_SHARDS?: string;
    GATEWAY_LIVE: import("../../adapters/cloudflare/cloudflare-types.ts").DurableObjectNamespace<
      import("../../adapters/cloudflare/live-hub-object.ts").LiveHubObject
    >;
    GATEWAY_DELIVERY: import("../../adapters/cloudflare/cloudflare-types.ts").DurableObjectNamespace<
      import("../../adapters/cloudflare/delivery-object.ts").DeliveryObject
    >;
    GATEWAY_STORE: import("../../adapters/cloudflare/cloudflare-types.ts").DurableObjectNamespace<
      import("../../adapters/cloudflare/store-shard-object.ts").StoreShardObject
    >;
  };
  /** Loopback bindings to the main module's exports (adapters/cloudflare/worker.ts). */
  export const exports: {
    default: { fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> };
  };
}

declare module "cloudflare:test" {
  /** Runs `callback` inside the object behind `stub` (@cloudflare/vitest-pool-workers). */
  export function runInDurableObject<R>(
    stub: unknown,
    callback: (
      instance: never,
      state: import("../../adapters/cloudflare/cloudflare-types.ts").DurableObjectState,
    ) => R | Promise<R>,
  ): Promise<R>;
  /** Resets every Durable Object instance (memory and timers), keeping their storage. */
  export function abortAllDurableObjects(): Promise<void>;
  /** Runs the object's alarm now if one is set; true when it ran. */
  export function runDurableObjectAlarm(stub: unknown): Promise<boolean>;
}
