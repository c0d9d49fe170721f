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

/** The RPC surface of the transform object. */
export interface TransformObjectRpc {
  run(call: TransformCall): Promise<TransformOutcome>;
}

export class TransformObject extends DurableObject<unknown> implements TransformObjectRpc {
  private readonly compiled = createCompiledCache(loadQuickJSWorker, 8);

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
  }

  async run(call: TransformCall): Promise<TransformOutcome> {
    const transform = await this.compiled.get(call);
    if (transform === undefined) return { ok: false, message: "the transform module was not sent", logs: [] };
    if (!("run" in transform)) return transform;
    return transform.run(call.event, call.context);
  }
}

export interface TransformObjectExecutorOptions {
  /** Milliseconds past `timeoutMs` a call may take before its caller gives up. Default 100. */
  slackMs?: number;
  /** Extra time for the object to start (instantiate QuickJS, compile the module), ms. Default 1000. */
  startMs?: number;
}

/**
 * Runs calls on `TransformObject`s: awaits each with a deadline of `timeoutMs` + `slackMs` +
 * `startMs`; past it, or when the object fails, the call answers `{ ok: false }`.
 */
export function createTransformObjectExecutor(
  namespace: DurableObjectNamespace<TransformObjectRpc>,
  options: TransformObjectExecutorOptions = {},
): TransformExecutor {
  const slackMs = options.slackMs ?? 100;
  const startMs = options.startMs ?? 1000;
  return {
    run(call) {
      const stub = namespace.get(namespace.idFromName(call.key));
      const startedAt = Date.now();
      const late: TransformOutcome = {
        ok: false,
        message: `the transform ran longer than ${call.limits.timeoutMs} ms`,
        logs: [],
      };
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<TransformOutcome>((resolve) => {
        timer = setTimeout(() => resolve(late), call.limits.timeoutMs + slackMs + startMs);
      });
      const answer = stub.run(call).then(
        // A stall that held this isolate too (objects sharing it) lets the answer and the timer
        // settle together: an answer after the deadline is never taken, however it arrives.
        (outcome) => (Date.now() - startedAt > call.limits.timeoutMs + slackMs + startMs ? late : outcome),
        (error: unknown): TransformOutcome => ({
          ok: false,
          message: `the transform's object failed (${error instanceof Error ? error.message : String(error)})`,
          logs: [],
        }),
      );
      return Promise.race([answer, deadline]).finally(() => clearTimeout(timer));
    },
    close() {},
  };
}
