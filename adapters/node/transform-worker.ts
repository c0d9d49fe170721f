/**
 * The body of one transform worker thread (transform-pool.ts): compiles each module once (a
 * bounded cache) on the QuickJS module of this thread and runs the calls the pool hands it, one
 * at a time. Before a call starts it writes the start time into the shared `clock` the pool
 * reads for its deadline, and clears it after; compiling and loading QuickJS are not timed.
 */
import { parentPort, workerData } from "node:worker_threads";
import { compileTransform, TransformCompileError } from "../../src/transform/quickjs-sandbox.ts";
import type { CompiledTransform, TransformCall, TransformOutcome } from "../../src/transform/transform-contract.ts";
import { loadQuickJSNode } from "./quickjs-node.ts";

/** What the pool sends: a call, with the module source only when this worker may not have it. */
export type PoolRequest = { id: number; call: Omit<TransformCall, "source"> & { source?: string } };
/** What this worker answers; `needSource` asks the pool to send the call again with its source. */
export type PoolAnswer = { id: number; outcome: TransformOutcome } | { id: number; needSource: true };

/** Compiled modules kept per worker (least recently used goes first). */
const MAX_COMPILED = 64;

const port = parentPort;
if (!port) throw new Error("transform-worker.ts runs as a worker thread of transform-pool.ts");
const clock = new Float64Array((workerData as { clock: SharedArrayBuffer }).clock);
const compiled = new Map<string, CompiledTransform>();

/**
 * Loads QuickJS and runs a small transform a few times before the first call: WebAssembly
 * functions compile lazily on their first use, which must not count against a call's deadline.
 */
const warm = (async () => {
  const quickjs = await loadQuickJSNode();
  const factory = `(function () { "use strict"; return (e, c) => ({ type: e.type, data: e.data, h: c.headers }); })`;
  const transform = compileTransform(quickjs, factory, "warm-up", { timeoutMs: 60_000, memoryLimitMb: 16 });
  const event = { envelope: '{"type":"warm","data":null}', data: '{"a":[1,"b"]}' };
  for (let i = 0; i < 20; i++) transform.run(event, { destination: "warm", attempt: 1, headers: { a: "b" } });
  transform.dispose();
})();

async function handle({ id, call }: PoolRequest): Promise<PoolAnswer> {
  await warm;
  let transform = compiled.get(call.key);
  if (transform) {
    compiled.delete(call.key);
    compiled.set(call.key, transform);
  } else {
    if (call.source === undefined) return { id, needSource: true };
    const quickjs = await loadQuickJSNode();
    try {
      transform = compileTransform(quickjs, call.source, call.version, call.limits);
    } catch (error) {
      const message = error instanceof TransformCompileError ? error.message : String(error);
      return { id, outcome: { ok: false, message, logs: [] } };
    }
    compiled.set(call.key, transform);
    for (const [key, oldest] of compiled) {
      if (compiled.size <= MAX_COMPILED) break;
      oldest.dispose();
      compiled.delete(key);
    }
  }
  clock[0] = Date.now();
  try {
    return { id, outcome: transform.run(call.event, call.context) };
  } finally {
    clock[0] = 0;
  }
}

port.on("message", (request: PoolRequest) => {
  handle(request).then(
    (answer) => port.postMessage(answer),
    (error: unknown) => port.postMessage({ id: request.id, outcome: { ok: false, message: String(error), logs: [] } }),
  );
});
