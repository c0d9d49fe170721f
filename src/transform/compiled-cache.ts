/**
 * The compiled transforms of one executor (a Node worker thread, a Workers transform object):
 * each module compiled once per key on first use, the least recently used dropped past a bound,
 * so a long-lived executor that tests many ad-hoc modules keeps its memory bounded.
 */
import { compileTransform, TransformCompileError } from "./quickjs-sandbox.ts";
import type { CompiledTransform, LoadQuickJS, TransformCall, TransformOutcome } from "./transform-contract.ts";

/** Compiled modules kept by default. */
export const MAX_COMPILED = 64;

export interface CompiledCache {
  /**
   * The compiled transform of `call.key`, compiling `call.source` on a miss; `undefined` when it
   * is not cached and the call carries no source; a failed outcome when the module does not compile.
   */
  get(
    call: Pick<TransformCall, "key" | "version" | "limits"> & { source?: string },
  ): Promise<CompiledTransform | TransformOutcome | undefined>;
  close(): void;
}

export function createCompiledCache(loadQuickJS: LoadQuickJS, max = MAX_COMPILED): CompiledCache {
  const compiled = new Map<string, CompiledTransform>();
  return {
    async get(call) {
      const hit = compiled.get(call.key);
      if (hit) {
        compiled.delete(call.key);
        compiled.set(call.key, hit);
        return hit;
      }
      if (call.source === undefined) return undefined;
      const quickjs = await loadQuickJS();
      let transform: CompiledTransform;
      try {
        transform = compileTransform(quickjs, call.source, call.version, call.limits);
      } catch (error) {
        const message = error instanceof TransformCompileError ? error.message : String(error);
        return { ok: false, message, logs: [] };
      }
      compiled.set(call.key, transform);
      for (const [key, oldest] of compiled) {
        if (compiled.size <= max) break;
        oldest.dispose();
        compiled.delete(key);
      }
      return transform;
    },
    close() {
      for (const transform of compiled.values()) transform.dispose();
      compiled.clear();
    },
  };
}
