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
    GATEWAY_ADMIN_KEY_HASH: string;
    /** The admin key of GATEWAY_ADMIN_KEY_HASH (a test-only binding). */
    WORKERD_TEST_ADMIN_KEY: string;
    GATEWAY_LOG_LEVEL: string;
  };
  /** Loopback bindings to the main module's exports (adapters/cloudflare/worker.ts). */
  export const exports: {
    default: { fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> };
  };
}
