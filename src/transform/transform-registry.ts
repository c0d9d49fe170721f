/**
 * The gateway's transforms: each destination's module, prepared once per version on first use,
 * shared by destinations with the same source and limits, plus ad-hoc ones for
 * `POST /transforms/test`. With an executor (the Node worker pool, the Workers transform object)
 * every call runs there, away from this event loop, and a stalled call is ended from outside;
 * without one, calls run here on the QuickJS module (`loadQuickJS`), yielding between slow ones.
 */
import { toHex } from "../crypto/crypto-port.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import { builtinTransformSource } from "./builtin-transforms.ts";
import { toFactorySource } from "./module-source.ts";
import { compileTransform, TransformCompileError } from "./quickjs-sandbox.ts";
import type {
  CompiledTransform,
  LoadQuickJS,
  PreparedTransform,
  TransformExecutor,
  TransformLimits,
} from "./transform-contract.ts";
import type { BuiltinTransformName, TransformConfig } from "./transform-schema.ts";

/** What to compile: module source or a built-in, with limits. */
export type TransformSpec = Pick<TransformConfig, "timeoutMs" | "memoryLimitMb"> &
  ({ code: string } | { builtin: BuiltinTransformName });

/** Resolves on a later macrotask (timers run after pending I/O), unlike a resolved promise. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export interface TransformRegistry {
  /** The destination's transform; undefined when it has none. Throws TransformCompileError. */
  forDestination(destinationId: string): Promise<PreparedTransform | undefined>;
  /** Prepares `spec` apart from the cache (the caller disposes it). Throws TransformCompileError. */
  compile(spec: TransformSpec): Promise<PreparedTransform>;
  /** The spec configured on a destination, if any. */
  specOf(destinationId: string): TransformSpec | undefined;
  /** The destination's transform when it is prepared already (the hot path skips a promise). */
  compiledFor(destinationId: string): PreparedTransform | undefined;
  /**
   * Takes the destinations of a reloaded configuration (SIGHUP). Transforms whose spec did not
   * change stay prepared; returns a function disposing those no destination uses any more, to
   * call once the attempts that could still run them have finished.
   */
  reconfigure(destinations: TransformRegistryOptions["destinations"]): () => void;
  close(): void;
}

export interface TransformRegistryOptions {
  destinations: readonly { id: string; transform?: TransformConfig }[];
  services: ServiceRegistry;
  loadQuickJS: LoadQuickJS;
  /** Runs the calls off this event loop (adapters); without it they run in this thread. */
  executor?: TransformExecutor;
}

/** The module source of a spec. */
export function sourceOf(spec: TransformSpec, services: ServiceRegistry): string {
  return "builtin" in spec ? builtinTransformSource(spec.builtin, services) : spec.code;
}

/** `sha256:` and the first 16 hex digits of the SHA-256 of the module source. */
export async function versionOf(source: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(source));
  return `sha256:${toHex(new Uint8Array(digest)).slice(0, 16)}`;
}

function toSpec(transform: TransformConfig): TransformSpec | undefined {
  const limits = { timeoutMs: transform.timeoutMs, memoryLimitMb: transform.memoryLimitMb };
  if (transform.builtin) return { ...limits, builtin: transform.builtin };
  if (transform.code !== undefined) return { ...limits, code: transform.code };
  return undefined;
}

/** Creates the registry; nothing is loaded or compiled until a transform is first used. */
export function createTransformRegistry(options: TransformRegistryOptions): TransformRegistry {
  const specsOf = (destinations: TransformRegistryOptions["destinations"]) => {
    const found = new Map<string, TransformSpec>();
    for (const destination of destinations) {
      const spec = destination.transform && toSpec(destination.transform);
      if (spec) found.set(destination.id, spec);
    }
    return found;
  };
  let specs = specsOf(options.destinations);
  const prepared = new Map<string, Promise<PreparedTransform>>();
  const ready = new Map<string, PreparedTransform>();
  const { executor } = options;
  // In-thread calls: milliseconds of transform run time since the last yield to the event loop.
  let busyMs = 0;

  /** In this thread: runs synchronously, yielding to the event loop after 10 ms of transforms. */
  const inThread = (compiled: CompiledTransform): PreparedTransform => ({
    version: compiled.version,
    async run(event, context) {
      if (busyMs > 10) {
        busyMs = 0;
        await yieldToEventLoop();
      }
      const started = performance.now();
      try {
        return compiled.run(event, context);
      } finally {
        busyMs += performance.now() - started;
      }
    },
    dispose: () => compiled.dispose(),
  });

  const compile = async (spec: TransformSpec): Promise<PreparedTransform> => {
    const source = sourceOf(spec, options.services);
    const factory = toFactorySource(source);
    if (!factory.ok) throw new TransformCompileError(factory.message);
    const limits: TransformLimits = { timeoutMs: spec.timeoutMs, memoryLimitMb: spec.memoryLimitMb };
    if (executor) {
      const version = await versionOf(source);
      const key = `${version}:${limits.timeoutMs}:${limits.memoryLimitMb}`;
      return {
        version,
        run: (event, context) => executor.run({ key, source: factory.source, version, limits, event, context }),
        // The executor's workers keep a bounded cache of compiled modules; nothing to free here.
        dispose: () => {},
      };
    }
    const [quickjs, version] = await Promise.all([options.loadQuickJS(), versionOf(source)]);
    // Compiles of several destinations resolve together: one per macrotask, so requests interleave.
    await yieldToEventLoop();
    return inThread(compileTransform(quickjs, factory.source, version, limits));
  };

  return {
    specOf: (id) => specs.get(id),
    compiledFor: (destinationId) => ready.get(destinationId),
    compile,
    forDestination(destinationId) {
      const spec = specs.get(destinationId);
      if (!spec) return Promise.resolve(undefined);
      const key = `${JSON.stringify(spec)}`;
      let entry = prepared.get(key);
      if (!entry) {
        entry = compile(spec);
        prepared.set(key, entry);
        entry.then((transform) => ready.set(destinationId, transform)).catch(() => {});
        // A module that does not compile is reported on every attempt, not cached as a rejection forever.
        entry.catch(() => prepared.delete(key));
      } else if (!ready.has(destinationId)) {
        entry.then((transform) => ready.set(destinationId, transform)).catch(() => {});
      }
      return entry;
    },
    reconfigure(destinations) {
      const next = specsOf(destinations);
      for (const id of ready.keys()) {
        if (JSON.stringify(next.get(id)) !== JSON.stringify(specs.get(id))) ready.delete(id);
      }
      specs = next;
      const used = new Set([...next.values()].map((spec) => JSON.stringify(spec)));
      const unused = [...prepared.entries()].filter(([key]) => !used.has(key));
      for (const [key] of unused) prepared.delete(key);
      return () => {
        for (const [, entry] of unused) entry.then((t) => t.dispose()).catch(() => {});
      };
    },
    close() {
      for (const entry of prepared.values()) entry.then((t) => t.dispose()).catch(() => {});
      prepared.clear();
      ready.clear();
      executor?.close();
    },
  };
}
