/**
 * The body of one transform worker thread (transform-pool.ts): compiles each module once (a
 * bounded cache, src/transform/compiled-cache.ts) on the QuickJS module of this thread and runs the calls the pool hands it, one
 * at a time. It writes into the shared `clock` the pool reads when the call starts, with its
 * module's top level (`clock[0]`, the deadline's origin), and when the program, the default
 * export, is called (`clock[1]`), and clears both after; compiling and loading QuickJS are not timed.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createCompiledCache } from "../../src/transform/compiled-cache.ts";
import { toFactorySource } from "../../src/transform/module-source.ts";
import { compileTransform } from "../../src/transform/quickjs-sandbox.ts";
import { type TransformCall, type TransformOutcome, toTransformEvent } from "../../src/transform/transform-contract.ts";
import { loadQuickJSNode } from "./quickjs-node.ts";

/** What the pool sends: a call, with the module source only when this worker may not have it. */
export type PoolRequest = { id: number; call: Omit<TransformCall, "source"> & { source?: string } };
/** What this worker answers; `needSource` asks the pool to send the call again with its source. */
export type PoolAnswer = { id: number; outcome: TransformOutcome } | { id: number; needSource: true };

const port = parentPort;
if (!port) throw new Error("transform-worker.ts runs as a worker thread of transform-pool.ts");
const data = workerData as { clock: SharedArrayBuffer; warmUpSources?: string[] };
const clock = new Float64Array(data.clock);
const compiled = createCompiledCache(loadQuickJSNode);

/**
 * A transform that goes through what transforms commonly use (regular expressions, string and
 * array methods, spreads, dates, numbers, JSON, a caught throw, an await).
 */
const WARM_UP = `(function () { "use strict";
  const escape = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const read = (value, path) => path.split(".").reduce((v, k) => (v == null ? undefined : v[k]), value);
  return async (e, c) => {
    const facts = Object.entries(e.data ?? {}).slice(0, 10).map(([k, v]) => [k, String(v)]);
    let caught = "";
    try { JSON.parse("{"); } catch (error) { caught = error.name + ": " + error.message; }
    const when = new Date(Date.UTC(2026, 0, 2, 3, 4, 5)).toISOString();
    const words = (e.type + " · " + e.id).toUpperCase().split(/\\s+/).filter(Boolean).join(" ").padEnd(40, ".");
    await Promise.resolve();
    return {
      ...e, h: c.headers, text: escape("<a & b>"), facts, caught, when, words,
      n: (12.5).toFixed(1) + Math.max(1, 2) + Number.parseInt("42", 10),
      keys: Object.keys(e).sort(), has: new Set(["x"]).has("x"), m: new Map([["k", read(e, "data.a.0")]]).get("k"),
      json: JSON.stringify({ list: [1, "b", null] }), found: /b/.test("abc") && "abc".includes("b"),
    };
  };
})`;

/**
 * Loads QuickJS and runs transforms before the first call: the modules the pool was given
 * (`warmUpSources`: the gateway passes the built-ins `slack`, `teams` and `discord`, built from
 * its service registry), then the warm-up above, 20 times each, on a sample event. The engine's first pass
 * through a path costs far more than the next ones (WebAssembly functions compile on first use,
 * among others). Measured on the first `slack` call of a fresh process (load 3-5 on 2 cores, 8-10
 * runs each): a median 7.7 ms (2-10 ms) after a one-line warm-up, 0.55 ms (0.5-2.9 ms) after this
 * one; later calls 0.3 ms. That is start-up, not the program's run: none of it belongs in a
 * call's deadline.
 */
const warm = (async () => {
  const quickjs = await loadQuickJSNode();
  const sources = [
    ...(data.warmUpSources ?? []).map((module, i) => {
      const factory = toFactorySource(module);
      if (!factory.ok) throw new Error(`warm-up module ${i}: ${factory.message}`);
      return factory.source;
    }),
    WARM_UP,
  ];
  const event = toTransformEvent({
    specversion: "1.0",
    id: "evt_warm_up",
    source: "/webhooks/warm-up",
    type: "document.completed",
    subject: "warm-up",
    time: "2026-01-02T03:04:05.000Z",
    data: { document_id: "doc_warm", status: "completed", people: [{ name: "A", email: "a@example.com" }] },
  });
  for (const source of sources) {
    const transform = compileTransform(quickjs, source, "warm-up", { timeoutMs: 60_000, memoryLimitMb: 16 });
    for (let i = 0; i < 20; i++) transform.run(event, { destination: "warm", attempt: 1, headers: { a: "b" } });
    transform.dispose();
  }
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
  clock[0] = Date.now();
  try {
    const outcome = transform.run(call.event, call.context, () => {
      clock[1] = Date.now();
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
