/**
 * The gateway's transforms: each destination's module, compiled once per version on first use
 * (the QuickJS module itself loads on the first compile), shared by destinations with the same
 * source and limits, plus ad-hoc compiles for `POST /transforms/test`.
 */
import { toHex } from "../crypto/crypto-port.ts";
import type { ServiceRegistry } from "../services/service-contract.ts";
import { builtinTransformSource } from "./builtin-transforms.ts";
import { toFactorySource } from "./module-source.ts";
import { compileTransform, TransformCompileError } from "./quickjs-sandbox.ts";
import type { CompiledTransform, LoadQuickJS, TransformLimits } from "./transform-contract.ts";
import type { BuiltinTransformName, TransformConfig } from "./transform-schema.ts";

/** What to compile: module source or a built-in, with limits. */
export type TransformSpec = Pick<TransformConfig, "timeoutMs" | "memoryLimitMb"> &
  ({ code: string } | { builtin: BuiltinTransformName });

/** Resolves on a later macrotask (timers run after pending I/O), unlike a resolved promise. */
export const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));

export interface TransformRegistry {
  /** The destination's compiled transform; undefined when it has none. Throws TransformCompileError. */
  forDestination(destinationId: string): Promise<CompiledTransform | undefined>;
  /** Compiles `spec` apart from the cache (the caller disposes it). Throws TransformCompileError. */
  compile(spec: TransformSpec): Promise<CompiledTransform>;
  /** The spec configured on a destination, if any. */
  specOf(destinationId: string): TransformSpec | undefined;
  /**
   * Resolves once the gateway may run another transform: at once, unless transforms ran for
   * more than 10 ms since the last yield, then on the next macrotask. A transform runs
   * synchronously; this lets requests (e.g. `/healthz`) in between slow ones.
   */
  turn(): Promise<void> | undefined;
  /** The destination's transform when it is compiled already (the hot path skips a promise). */
  compiledFor(destinationId: string): CompiledTransform | undefined;
  /** Counts `ms` of transform run time towards the next `turn`. */
  spent(ms: number): void;
  /**
   * Takes the destinations of a reloaded configuration (SIGHUP). Transforms whose spec did not
   * change stay compiled; returns a function disposing those no destination uses any more, to
   * call once the attempts that could still run them have finished.
   */
  reconfigure(destinations: TransformRegistryOptions["destinations"]): () => void;
  close(): void;
}

export interface TransformRegistryOptions {
  destinations: readonly { id: string; transform?: TransformConfig }[];
  services: ServiceRegistry;
  loadQuickJS: LoadQuickJS;
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
  const compiled = new Map<string, Promise<CompiledTransform>>();
  let busyMs = 0;
  const ready = new Map<string, CompiledTransform>();

  const compile = async (spec: TransformSpec): Promise<CompiledTransform> => {
    const source = sourceOf(spec, options.services);
    const factory = toFactorySource(source);
    if (!factory.ok) throw new TransformCompileError(factory.message);
    const [quickjs, version] = await Promise.all([options.loadQuickJS(), versionOf(source)]);
    // Compiles of several destinations resolve together: one per macrotask, so requests interleave.
    await yieldToEventLoop();
    const limits: TransformLimits = { timeoutMs: spec.timeoutMs, memoryLimitMb: spec.memoryLimitMb };
    return compileTransform(quickjs, factory.source, version, limits);
  };

  return {
    specOf: (id) => specs.get(id),
    turn() {
      if (busyMs <= 10) return undefined;
      busyMs = 0;
      return yieldToEventLoop();
    },
    compiledFor: (destinationId) => ready.get(destinationId),
    spent(ms) {
      busyMs += ms;
    },
    compile,
    forDestination(destinationId) {
      const spec = specs.get(destinationId);
      if (!spec) return Promise.resolve(undefined);
      const key = `${JSON.stringify(spec)}`;
      let entry = compiled.get(key);
      if (!entry) {
        entry = compile(spec);
        compiled.set(key, entry);
        entry.then((transform) => ready.set(destinationId, transform)).catch(() => {});
        // A module that does not compile is reported on every attempt, not cached as a rejection forever.
        entry.catch(() => compiled.delete(key));
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
      const unused = [...compiled.entries()].filter(([key]) => !used.has(key));
      for (const [key] of unused) compiled.delete(key);
      return () => {
        for (const [, entry] of unused) entry.then((t) => t.dispose()).catch(() => {});
      };
    },
    close() {
      for (const entry of compiled.values()) entry.then((t) => t.dispose()).catch(() => {});
      compiled.clear();
      ready.clear();
    },
  };
}
