/**
 * Transforms on Workers, away from the delivery object (docs/transformations.md "Where transforms
 * run"): a Durable Object that only runs transform calls, one instance per module and limits
 * (named by the call's key), so a call that stalls its object — a built-in QuickJS cannot
 * interrupt, a runaway allocation — costs only the calls of that same module. Callers
 * (`createTransformObjectExecutor`) await each call with a deadline and answer
 * `transform_error` when it passes; the platform's CPU limit ends the stalled invocation and
 * resets the object. The object keeps compiled modules in memory only (no storage).
 */
import { DurableObject } from "cloudflare:workers";
import { createCompiledCache } from "../../src/transform/compiled-cache.ts";
import type { TransformCall, TransformExecutor, TransformOutcome } from "../../src/transform/transform-contract.ts";
import type { DurableObjectNamespace, DurableObjectState } from "./cloudflare-types.ts";
import { loadQuickJSWorker } from "./quickjs-worker.ts";

/** A call without its module source (the object compiled it in `prepare`). */
export type PreparedCall = Omit<TransformCall, "source">;

/** The RPC surface of the transform object. */
export interface TransformObjectRpc {
  /** Compiles the module (QuickJS instantiated first if needed); a failed outcome if it does not compile. */
  prepare(module: Pick<TransformCall, "key" | "source" | "version" | "limits">): Promise<TransformOutcome | null>;
  /** Runs a call of a prepared module; `{ unprepared: true }` when this object does not hold it (reset, evicted). */
  run(call: PreparedCall): Promise<TransformOutcome | { unprepared: true }>;
}

export class TransformObject extends DurableObject<unknown> implements TransformObjectRpc {
  private readonly compiled = createCompiledCache(loadQuickJSWorker, 8);

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
  }

  async prepare(
    module: Pick<TransformCall, "key" | "source" | "version" | "limits">,
  ): Promise<TransformOutcome | null> {
    const transform = await this.compiled.get(module);
    if (transform === undefined) return { ok: false, message: "the transform module was not sent", logs: [] };
    return "run" in transform ? null : transform;
  }

  async run(call: PreparedCall): Promise<TransformOutcome | { unprepared: true }> {
    const transform = await this.compiled.get(call);
    if (transform === undefined) return { unprepared: true };
    if (!("run" in transform)) return transform;
    transform.prepare();
    return transform.run(call.event, call.context);
  }
}

export interface TransformObjectExecutorOptions {
  /** Milliseconds past `timeoutMs` a call may take before its caller gives up. Default 100. */
  slackMs?: number;
  /** Time an object may take to start and compile a module (`prepare`, untimed by the call's deadline), ms. Default 30 s. */
  prepareMs?: number;
}

/** `promise`, or `late` once `ms` have passed (an answer after that is never taken). */
async function within<T>(promise: Promise<T>, ms: number, late: TransformOutcome): Promise<T | TransformOutcome> {
  const startedAt = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<TransformOutcome>((resolve) => {
    timer = setTimeout(() => resolve(late), ms);
  });
  const answer = promise.then(
    // A stall that held this isolate too (objects sharing it) lets the answer and the timer
    // settle together: an answer after the deadline is never taken, however it arrives.
    (value) => (Date.now() - startedAt > ms ? late : value),
    (error: unknown): TransformOutcome => ({
      ok: false,
      message: `the transform's object failed (${error instanceof Error ? error.message : String(error)})`,
      logs: [],
    }),
  );
  try {
    return await Promise.race([answer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs calls on `TransformObject`s: the module is prepared once per object (compiled, with time
 * to start), then each call is awaited with a deadline of `timeoutMs` + `slackMs`; past it, or
 * when the object fails, the call answers `{ ok: false }`.
 */
export function createTransformObjectExecutor(
  namespace: DurableObjectNamespace<TransformObjectRpc>,
  options: TransformObjectExecutorOptions = {},
): TransformExecutor {
  const slackMs = options.slackMs ?? 100;
  const prepareMs = options.prepareMs ?? 30_000;
  /** Modules this isolate has prepared on their object. */
  const prepared = new Set<string>();

  const run = async (call: TransformCall, again: boolean): Promise<TransformOutcome> => {
    const stub = namespace.get(namespace.idFromName(call.key));
    if (!prepared.has(call.key)) {
      const { key, source, version, limits } = call;
      const failed = await within(stub.prepare({ key, source, version, limits }), prepareMs, {
        ok: false,
        message: `the transform did not start within ${prepareMs} ms`,
        logs: [],
      });
      if (failed) return failed;
      prepared.add(call.key);
    }
    const { source: _source, ...withoutSource } = call;
    const late: TransformOutcome = {
      ok: false,
      message: `the transform ran longer than ${call.limits.timeoutMs} ms`,
      logs: [],
    };
    const answer = await within(stub.run(withoutSource), call.limits.timeoutMs + slackMs, late);
    if ("unprepared" in answer) {
      prepared.delete(call.key);
      return again ? { ok: false, message: "the transform's object lost the module", logs: [] } : run(call, true);
    }
    return answer;
  };

  return {
    run: (call) => run(call, false),
    close() {},
  };
}
