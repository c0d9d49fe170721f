/**
 * Transforms on Workers, away from the objects that deliver (docs/transformations.md "Where
 * transforms run"): a Durable Object that only runs transform calls, one instance per module and
 * limits (named by the call's key and a generation), so a call that stalls its object — a
 * built-in QuickJS cannot interrupt, a runaway allocation, a loop the frozen clock of a deployed
 * Worker never ends — costs only that call. Callers (`createTransformObjectExecutor`) await each
 * call with a deadline of `timeoutMs` + slack and answer `transform_error` when it passes; the
 * next call of that module then goes to a fresh instance (the next generation), while the
 * platform's CPU limit ends the stuck invocation. The object keeps compiled modules in memory
 * only (no storage).
 */
import { DurableObject } from "cloudflare:workers";
import { createCompiledCache } from "../../src/transform/compiled-cache.ts";
import type { TransformCall, TransformExecutor, TransformOutcome } from "../../src/transform/transform-contract.ts";
import type { DurableObjectNamespace, DurableObjectState } from "./cloudflare-types.ts";
import { loadQuickJSWorker } from "./quickjs-worker.ts";

/** A call's outcome and its run time in ms, measured by the object around the call. */
export interface Ran {
  outcome: TransformOutcome;
  ranMs: number;
}

/** A call without its module source (the object compiled it in `prepare`). */
export type PreparedCall = Omit<TransformCall, "source">;

/** The RPC surface of the transform object. */
export interface TransformObjectRpc {
  /** Compiles the module (QuickJS instantiated first if needed); a failed outcome if it does not compile. */
  prepare(module: Pick<TransformCall, "key" | "source" | "version" | "limits">): Promise<TransformOutcome | null>;
  /**
   * Runs a call of a prepared module: its outcome and how long it ran by this object's clock;
   * `{ unprepared: true }` when this object does not hold the module (reset, evicted). Awaits
   * `started` (a callback into the caller, over RPC) right before the call runs, so the caller's
   * deadline counts the call, not the time it waited to reach the object.
   */
  run(call: PreparedCall, started: () => void | Promise<void>): Promise<Ran | { unprepared: true }>;
}

/** Compiled modules one transform object keeps (it is named for one module; ad-hoc tests share none). */
const MODULES_PER_OBJECT = 8;

export class TransformObject extends DurableObject<unknown> implements TransformObjectRpc {
  private readonly compiled = createCompiledCache(loadQuickJSWorker, MODULES_PER_OBJECT);

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
  }

  async prepare(
    module: Pick<TransformCall, "key" | "source" | "version" | "limits">,
  ): Promise<TransformOutcome | null> {
    const transform = await this.compiled.get(module);
    if (transform === undefined) return { ok: false, message: "the transform module was not sent", logs: [] };
    if (!("run" in transform)) return transform;
    // The first call's runtime is built now, off its deadline.
    transform.prepare();
    return null;
  }

  async run(call: PreparedCall, started: () => void | Promise<void>): Promise<Ran | { unprepared: true }> {
    const transform = await this.compiled.get(call);
    if (transform === undefined) return { unprepared: true };
    if (!("run" in transform)) return { outcome: transform, ranMs: 0 };
    await started();
    // Measured around the synchronous call only. Locally workerd's clock moves while code runs;
    // a deployed Worker's clock stands still until the next I/O, so there this reads 0 and the
    // caller's timer alone decides.
    const startedAt = Date.now();
    const outcome = transform.run(call.event, call.context);
    const ranMs = Date.now() - startedAt;
    // The next call's runtime is built after this answer, off that call's deadline.
    queueMicrotask(() => transform.prepare());
    return { outcome, ranMs };
  }
}

export interface TransformObjectExecutorOptions {
  /** Milliseconds past `timeoutMs` a call may take before its caller gives up. Default 100. */
  slackMs?: number;
  /** Time an object may take to start and compile a module (`prepare`, untimed by the call's deadline), ms. Default 30 s. */
  prepareMs?: number;
}

/** Modules (keys) an executor remembers as prepared, and their generations; the oldest go past it. */
const KEYS_REMEMBERED = 512;

/** How a call to an object ended, seen from the caller. */
type Settled<T> = { value: T } | { late: true } | { failed: string };

/** Rounds a caller waits again when its own timer keeps firing late (its isolate held meanwhile). */
const MAX_HELD_ROUNDS = 100;

/** A timer firing more than this many ms after it was due says its isolate was held. */
const HELD_MS = 20;

/** `promise`, or `late` when a timer of `ms` fires first. */
async function race<T>(promise: Promise<T>, ms: number): Promise<Settled<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Settled<T>>((resolve) => {
    timer = setTimeout(() => resolve({ late: true }), ms);
  });
  const answer = promise.then(
    (value): Settled<T> => ({ value }),
    (error: unknown): Settled<T> => ({ failed: error instanceof Error ? error.message : String(error) }),
  );
  try {
    return await Promise.race([answer, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `promise` awaited with a deadline of `ms`. The caller's timer decides when it fires on time
 * (within `HELD_MS` of the deadline): the object then ran or waited past the deadline, and an
 * answer after that is never taken. A timer that fires later than that says this isolate was
 * held too (Durable Objects sharing an isolate, or local workerd, which runs every isolate on
 * one thread), so the call may only have waited behind other work: the caller waits again, and
 * `judge` (the object's own measure of the call) decides on the answer.
 */
async function within<T>(
  promise: Promise<T>,
  ms: number,
  judge: (value: T) => boolean = () => true,
): Promise<Settled<T>> {
  for (let round = 0; round < MAX_HELD_ROUNDS; round++) {
    const startedAt = Date.now();
    const settled = await race(promise, ms);
    if ("value" in settled) return judge(settled.value) ? settled : { late: true };
    if ("failed" in settled || Date.now() - startedAt <= ms + HELD_MS) return settled;
  }
  return { late: true };
}

/** Inserts `key` as the most recent entry of `map`, dropping the oldest past `KEYS_REMEMBERED`. */
function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= KEYS_REMEMBERED) break;
    map.delete(oldest);
  }
}

/**
 * Runs calls on `TransformObject`s: the module is prepared once per object (compiled, its
 * runtime built, with time to start), then each call is awaited with a deadline of `timeoutMs`
 * + `slackMs`; past it, or when the object fails, the call answers `{ ok: false }` and the next
 * call of that module goes to a fresh object (the stalled one may still be busy).
 */
export function createTransformObjectExecutor(
  namespace: DurableObjectNamespace<TransformObjectRpc>,
  options: TransformObjectExecutorOptions = {},
): TransformExecutor {
  const slackMs = options.slackMs ?? 100;
  const prepareMs = options.prepareMs ?? 30_000;
  /** Object names this isolate has prepared their module on. */
  const prepared = new Map<string, true>();
  /** The current generation of each module's object: bumped when one misses a deadline or fails. */
  const generations = new Map<string, number>();

  const run = async (call: TransformCall, again: boolean): Promise<TransformOutcome> => {
    const generation = generations.get(call.key) ?? 0;
    const name = `${call.key}#${generation}`;
    const abandon = () => {
      prepared.delete(name);
      if ((generations.get(call.key) ?? 0) === generation) remember(generations, call.key, generation + 1);
    };
    const stub = namespace.get(namespace.idFromName(name));
    if (!prepared.has(name)) {
      const { key, source, version, limits } = call;
      const started = await within(stub.prepare({ key, source, version, limits }), prepareMs);
      if ("late" in started) {
        abandon();
        return { ok: false, message: `the transform did not start within ${prepareMs} ms`, logs: [] };
      }
      if ("failed" in started) {
        abandon();
        return { ok: false, message: `the transform's object failed (${started.failed})`, logs: [] };
      }
      // A module that does not compile: the same answer on every object.
      if (started.value) return started.value;
      remember(prepared, name, true);
    }
    const { source: _source, ...withoutSource } = call;
    const deadlineMs = call.limits.timeoutMs + slackMs;
    let onStarted = () => {};
    const started = new Promise<void>((resolve) => {
      onStarted = resolve;
    });
    const answer = stub.run(withoutSource, () => onStarted());
    // Until the object starts the call: the time it may take to reach it (queued behind other
    // work of its isolate), bounded like a start.
    const reached = await within(Promise.race([started.then(() => undefined), answer]), prepareMs);
    if ("late" in reached) {
      abandon();
      return { ok: false, message: `the transform did not start within ${prepareMs} ms`, logs: [] };
    }
    // From the start of the call: its deadline.
    const settled = await within(answer, deadlineMs, (ran) => !("ranMs" in ran) || ran.ranMs <= deadlineMs);
    if ("late" in settled) {
      abandon();
      return { ok: false, message: `the transform ran longer than ${call.limits.timeoutMs} ms`, logs: [] };
    }
    if ("failed" in settled) {
      abandon();
      return { ok: false, message: `the transform's object failed (${settled.failed})`, logs: [] };
    }
    if ("unprepared" in settled.value) {
      prepared.delete(name);
      return again ? { ok: false, message: "the transform's object lost the module", logs: [] } : run(call, true);
    }
    return settled.value.outcome;
  };

  return {
    run: (call) => run(call, false),
    close() {},
  };
}
