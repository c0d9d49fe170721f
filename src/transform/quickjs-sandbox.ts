/**
 * The transform sandbox on QuickJS compiled to WebAssembly: one QuickJS runtime per transform
 * version (its own memory limit), one context whose intrinsics are frozen before the module is
 * compiled, and the module compiled once into a factory (module-source.ts). Each call runs the
 * factory, so nothing persists from one call to the next; a call that leaves promise jobs queued
 * discards its runtime, so they never run in a later call; the interrupt handler ends a call at
 * its deadline, and a runtime that hit a limit is thrown away and rebuilt for the next call.
 * A call's deadline is `timeoutMs` from the start of the module's top level (which runs before
 * every call): the top level, the default export, the promise it returns and its reads of the
 * event's data share that one budget. Building the runtime and compiling the module are not
 * timed here (callers bound them).
 * The sandbox has no network, file system, timers or host objects: only the JSON it is given.
 */
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime, QuickJSWASMModule } from "quickjs-emscripten-core";
import { SANDBOX_PRELUDE } from "./sandbox-prelude.ts";
import type {
  CompiledTransform,
  TransformContext,
  TransformEvent,
  TransformLimits,
  TransformOutcome,
} from "./transform-contract.ts";

interface Instance {
  runtime: QuickJSRuntime;
  context: QuickJSContext;
  begin: QuickJSHandle;
  run: QuickJSHandle;
  collect: QuickJSHandle;
  factory: QuickJSHandle;
}

/** Thrown by `compileTransform` when the module does not compile. */
export class TransformCompileError extends Error {
  override readonly name = "TransformCompileError";
}

/**
 * Compiles a factory source (module-source.ts) in a fresh runtime with `limits`. `version` names
 * this source in attempt logs. Throws `TransformCompileError` when QuickJS refuses the source.
 */
export function compileTransform(
  quickjs: QuickJSWASMModule,
  factorySource: string,
  version: string,
  limits: TransformLimits,
): CompiledTransform {
  let deadline = Number.POSITIVE_INFINITY;
  let instance: Instance | undefined = createInstance(quickjs, factorySource, limits, () => Date.now() > deadline);

  const reset = () => {
    if (!instance) return;
    disposeInstance(instance);
    instance = undefined;
  };

  return {
    version,
    run(event: TransformEvent, context: TransformContext, programStarted?: () => void): TransformOutcome {
      instance ??= createInstance(quickjs, factorySource, limits, () => Date.now() > deadline);
      const { context: vm, runtime } = instance;
      // One budget from here: the module's top level, then the program. The phase only names,
      // in the answer, the part that was running when the budget ran out.
      let phase: "top level" | "program" = "top level";
      deadline = Date.now() + limits.timeoutMs;
      try {
        const begun = callForString(vm, instance.begin, [instance.factory]);
        let answer = begun;
        if (begun === "") {
          phase = "program";
          programStarted?.();
          answer = callForString(vm, instance.run, [], [vm.newString(toPayload(event, context))]);
        }
        if (answer === "pending") {
          // An async transform: run its jobs within the same deadline, then read the settled value.
          const jobs = runtime.executePendingJobs();
          if (jobs.error) throw takeError(vm, jobs.error);
          answer = callForString(vm, instance.collect, []);
        }
        const outcome = readAnswer(answer);
        // Jobs the call queued and left behind (a synchronous answer with promises still pending)
        // would run inside the next call, with its logs: they are discarded with the runtime.
        if (runtime.hasPendingJob()) reset();
        if (!outcome.ok && /out of memory/i.test(outcome.message)) {
          // Caught inside the sandbox, but the runtime is at its limit: start the next call afresh.
          reset();
          return { ...outcome, message: describeLimit(outcome.message, limits) };
        }
        return outcome;
      } catch (error) {
        // Interrupted, out of memory or a stack overflow: nothing of this runtime is trusted again.
        const message = error instanceof SandboxFailure ? error.message : String(error);
        const timedOut = Date.now() > deadline || /interrupted/.test(message);
        deadline = Number.POSITIVE_INFINITY;
        const logs = instance ? readLogsAfterFailure(instance) : [];
        // A stack overflow is an ordinary exception that left the runtime sound (and QuickJS
        // cannot free a runtime right after one): keep it. Limits and interrupts reset it.
        if (!/stack size exceeded|stack overflow/i.test(message)) reset();
        return {
          ok: false,
          message: timedOut ? timeoutMessage(phase, limits) : describeLimit(message, limits),
          logs,
        };
      } finally {
        deadline = Number.POSITIVE_INFINITY;
      }
    },
    prepare() {
      instance ??= createInstance(quickjs, factorySource, limits, () => Date.now() > deadline);
    },
    memoryBytes() {
      instance ??= createInstance(quickjs, factorySource, limits, () => Date.now() > deadline);
      return usedBytes(instance);
    },
    dispose: reset,
  };
}

class SandboxFailure extends Error {}

/** The one string `run` takes (sandbox-prelude.ts): JSON texts, one a line, the attempt first. */
function toPayload(event: TransformEvent, context: TransformContext): string {
  const destination = JSON.stringify(context.destination);
  const headers = JSON.stringify(context.headers);
  return `${context.attempt}\n${destination}\n${headers}\n${event.envelope}\n${event.data ?? ""}`;
}

/**
 * What a call that used up its `timeoutMs` answers, named for the part that was running then: the
 * module's top level (the default export never called), or the program.
 */
export function timeoutMessage(phase: "top level" | "program", limits: TransformLimits): string {
  return phase === "program"
    ? `the transform ran longer than ${limits.timeoutMs} ms`
    : `the transform module's top level ran longer than ${limits.timeoutMs} ms`;
}

function describeLimit(message: string, limits: TransformLimits): string {
  if (/out of memory/i.test(message)) return `the transform used more than ${limits.memoryLimitMb} MiB`;
  if (/stack overflow/i.test(message)) return "the transform overflowed its stack (too deep a recursion)";
  return message;
}

function createInstance(
  quickjs: QuickJSWASMModule,
  factorySource: string,
  limits: TransformLimits,
  shouldInterrupt: () => boolean,
): Instance {
  const runtime = quickjs.newRuntime();
  try {
    runtime.setMemoryLimit(limits.memoryLimitMb * 1024 * 1024);
    runtime.setMaxStackSize(512 * 1024);
    runtime.setInterruptHandler(shouldInterrupt);
    const context = runtime.newContext();
    const prelude = unwrap(context, context.evalCode(SANDBOX_PRELUDE, "gateway-prelude.js"));
    const begin = context.getProp(prelude, "begin");
    const run = context.getProp(prelude, "run");
    const collect = context.getProp(prelude, "collect");
    prelude.dispose();
    const compiled = context.evalCode(factorySource, "transform.js");
    if (compiled.error) {
      const message = context.dump(compiled.error);
      compiled.error.dispose();
      throw new TransformCompileError(describeError(message));
    }
    return { runtime, context, begin, run, collect, factory: compiled.value };
  } catch (error) {
    runtime.dispose();
    throw error;
  }
}

function disposeInstance(instance: Instance): void {
  try {
    for (const handle of [instance.begin, instance.run, instance.collect, instance.factory])
      if (handle.alive) handle.dispose();
    instance.context.dispose();
    instance.runtime.dispose();
  } catch {
    // A runtime that died mid-call may refuse an orderly teardown; its memory is the module's to reuse.
  }
}

function usedBytes(instance: Instance): number {
  const usage = instance.runtime.computeMemoryUsage();
  try {
    const value = instance.context.dump(usage) as { memory_used_size?: number };
    return value.memory_used_size ?? 0;
  } finally {
    usage.dispose();
  }
}

/** Calls `fn` with `borrowed` then `owned` (disposed after) and returns its string result. */
function callForString(
  vm: QuickJSContext,
  fn: QuickJSHandle,
  borrowed: QuickJSHandle[],
  owned: QuickJSHandle[] = [],
): string {
  try {
    const result = vm.callFunction(fn, vm.undefined, ...borrowed, ...owned);
    if (result.error) throw takeError(vm, result.error);
    const text = vm.getString(result.value);
    result.value.dispose();
    return text;
  } finally {
    for (const handle of owned) handle.dispose();
  }
}

function takeError(vm: QuickJSContext, handle: QuickJSHandle): SandboxFailure {
  const dumped = vm.dump(handle);
  handle.dispose();
  return new SandboxFailure(describeError(dumped));
}

function describeError(dumped: unknown): string {
  if (dumped && typeof dumped === "object") {
    const { name, message } = dumped as { name?: unknown; message?: unknown };
    if (typeof message === "string") return typeof name === "string" ? `${name}: ${message}` : message;
  }
  return String(dumped);
}

function readLogsAfterFailure(instance: Instance): string[] {
  try {
    const result = instance.context.callFunction(instance.collect, instance.context.undefined);
    if (result.error) {
      result.error.dispose();
      return [];
    }
    const text = instance.context.getString(result.value);
    result.value.dispose();
    return (JSON.parse(text.slice(1)) as { logs?: string[] }).logs ?? [];
  } catch {
    return [];
  }
}

/** Reads the prelude's answer (sandbox-prelude.ts): "J" + JSON, "S", or "A" + fields and logs. */
function readAnswer(answer: string): TransformOutcome {
  if (answer.startsWith("J")) return { ok: true, skip: false, json: answer.slice(1), logs: [] };
  if (answer === "S") return { ok: true, skip: true, logs: [] };
  const parsed = JSON.parse(answer.slice(1)) as { error?: string; json?: string; skip?: boolean; logs: string[] };
  if (parsed.error !== undefined) return { ok: false, message: parsed.error, logs: parsed.logs };
  if (parsed.skip) return { ok: true, skip: true, logs: parsed.logs };
  return { ok: true, skip: false, json: parsed.json as string, logs: parsed.logs };
}

function unwrap(context: QuickJSContext, result: ReturnType<QuickJSContext["evalCode"]>): QuickJSHandle {
  if (result.error) {
    const message = context.dump(result.error);
    result.error.dispose();
    throw new Error(`the sandbox prelude failed: ${describeError(message)}`);
  }
  return result.value;
}
