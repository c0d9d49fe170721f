/**
 * The parts of the Workers runtime API the Cloudflare adapter uses, typed structurally against
 * the DOM lib like the rest of the tree (the full @cloudflare/workers-types globals clash with
 * h3's DOM-based types). Only what adapters/cloudflare calls is declared here.
 */
declare module "cloudflare:workers" {
  /** Base class of RPC-capable Durable Objects. */
  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: import("./cloudflare-types.ts").DurableObjectState;
    protected readonly env: Env;
    constructor(ctx: import("./cloudflare-types.ts").DurableObjectState, env: Env);
  }
  /** Keeps the current request's isolate alive until `promise` settles (like ctx.waitUntil). */
  export function waitUntil(promise: Promise<unknown>): void;
}

/** The QuickJS release build's WebAssembly, bundled by wrangler as a compiled module (quickjs-worker.ts). */
declare module "*/quickjs-wasmfile-release-sync/dist/emscripten-module.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
