/**
 * The body of one transform worker thread (transform-pool.ts): compiles each module once (a
 * bounded cache, src/transform/compiled-cache.ts) on the QuickJS module of this thread and runs the calls the pool hands it, one
 * at a time. It writes into the shared `clock` the pool reads for its deadlines when the
 * module's top level starts (`clock[1]`) and when the program, the default export, is called
 * (`clock[0]`), and clears both after; compiling and loading QuickJS are not timed.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createCompiledCache } from "../../src/transform/compiled-cache.ts";
import { compileTransform } from "../../src/transform/quickjs-sandbox.ts";
import type { TransformCall, TransformOutcome } from "../../src/transform/transform-contract.ts";
import { loadQuickJSNode } from "./quickjs-node.ts";

/** What the pool sends: a call, with the module source only when this worker may not have it. */
export type PoolRequest = { id: number; call: Omit<TransformCall, "source"> & { source?: string } };
/** What this worker answers; `needSource` asks the pool to send the call again with its source. */
export type PoolAnswer = { id: number; outcome: TransformOutcome } | { id: number; needSource: true };

const port = parentPort;
if (!port) throw new Error("transform-worker.ts runs as a worker thread of transform-pool.ts");
const clock = new Float64Array((workerData as { clock: SharedArrayBuffer }).clock);
const compiled = createCompiledCache(loadQuickJSNode);

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
warm.then(
  () => port.postMessage({ ready: true }),
  (error: unknown) => {
    throw error;
  },
);

async function handle({ id, call }: PoolRequest): Promise<PoolAnswer> {
  await warm;
  const transform = await compiled.get(call);
  if (transform === undefined) return { id, needSource: true };
  if (!("run" in transform)) return { id, outcome: transform };
  // A runtime discarded by the last call is rebuilt before the clock starts.
  transform.prepare();
  clock[1] = Date.now();
  try {
    const outcome = transform.run(call.event, call.context, () => {
      clock[0] = Date.now();
    });
    return { id, outcome };
  } finally {
    clock[0] = 0;
    clock[1] = 0;
  }
}

port.on("message", (request: PoolRequest) => {
  handle(request).then(
    (answer) => port.postMessage(answer),
    (error: unknown) => port.postMessage({ id: request.id, outcome: { ok: false, message: String(error), logs: [] } }),
  );
});
