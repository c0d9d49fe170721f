/**
 * Transform benchmark, on Node, in this process (CPU time of the whole process, worker threads
 * included; A/B/C in one run):
 *   - per delivery: an `http` sink (signing and building the request, the send a no-op) without a
 *     transform, with a trivial one run in this thread (before issue 30) and with it run in the
 *     worker pool (adapters/node/transform-pool.ts, what `gateway serve` does), in interleaved
 *     rounds; the differences are what the transform adds (target <= 50 us in-thread);
 *   - latency per call, one call at a time: in-thread and through the pool; the difference at
 *     p50 and p99 is what the pool adds (message to the worker and back; target <= 1 ms at p99);
 *   - memory: QuickJS's own count of what one compiled transform holds between calls (its
 *     runtime, frozen context and compiled module), for one and as the mean over 100 compiled ones;
 *   - a hostile module on a one-worker pool (what 2 cores get): calls per second of a trivial
 *     transform while a transform whose top level loops for ever, or sits inside one built-in,
 *     is called back to back beside it (`timeoutMs` 50, the default slack). The loop is ended by
 *     QuickJS's interrupt inside the worker; the built-in only from outside, the worker replaced.
 */
import { randomBytes } from "node:crypto";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { createTransformPool } from "../../adapters/node/transform-pool.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { createHttpSink } from "../../src/delivery/http/http-sink.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import { normalizeEvent } from "../../src/events/normalize-event.ts";
import { builtinServices } from "../../src/services/registry.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { toFactorySource } from "../../src/transform/module-source.ts";
import { compileTransform } from "../../src/transform/quickjs-sandbox.ts";
import { type PreparedTransform, toTransformEvent } from "../../src/transform/transform-contract.ts";
import { createTransformRegistry } from "../../src/transform/transform-registry.ts";
import { redactHeaders, withTransform } from "../../src/transform/transforming-sink.ts";

const TRIVIAL = "export default (event) => ({ type: event.type, id: event.id, subject: event.subject });";
const WHSEC = `whsec_${randomBytes(32).toString("base64")}`;

/** A recorded e-sign `agreement.completed` (the documented sample, ~1 KB of JSON). */
async function sampleRecord(): Promise<EventRecord> {
  const crypto = createWebCrypto();
  const esign = builtinServices.get("esign");
  if (!esign) throw new Error("no esign service");
  const sample = await esign.buildSample(
    "agreement.completed",
    "bench-secret-0123456789",
    { uniqueId: "b", now: Date.now() },
    crypto,
  );
  const rawBody = new TextEncoder().encode(sample.body);
  const result = await normalizeEvent(
    {
      source: { id: "esign", service: "esign", secrets: ["bench-secret-0123456789"] } as Parameters<
        typeof normalizeEvent
      >[0]["source"],
      headers: new Headers(sample.headers),
      rawBody,
      text: sample.body,
      receivedAt: Date.now(),
    },
    crypto,
  );
  if (!result.ok) throw new Error(result.message);
  return {
    id: result.event.id,
    seq: 1,
    sourceId: "esign",
    identity: "b",
    receivedAt: Date.now(),
    event: result.event,
    rawBody: sample.body,
    rawBodyEncoding: "utf8",
    headers: { "content-type": "application/json", "x-svc-signature": "[redacted]" },
    marks: [],
  };
}

/** CPU microseconds per `deliver` over `count` calls. */
async function cpuPerDelivery(sink: Sink, record: EventRecord, count: number): Promise<number> {
  const signal = new AbortController().signal;
  const started = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const result = await sink.deliver(record, signal, { attempt: 1 });
    if (!result.ok) throw new Error(result.error);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / count;
}

/** Milliseconds per call, one call at a time. */
async function latencies(transform: PreparedTransform, record: EventRecord, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const outcome = await transform.run(toTransformEvent(record.event), {
      destination: "bench",
      attempt: 1,
      headers: redactHeaders(record.headers),
    });
    out.push(performance.now() - started);
    if (!outcome.ok) throw new Error(outcome.message);
  }
  return out.sort((x, y) => x - y);
}

/** Top levels no call gets past: an endless loop, and one `indexOf` that runs for minutes. */
const HOSTILE_TOP_LEVELS = {
  loop: "for (;;) {}\nexport default () => ({ never: true });",
  "stuck built-in": "const i = 'a'.repeat(1e6).indexOf('a'.repeat(5e5) + 'b');\nexport default () => ({ i });",
} as const;

/**
 * Calls per second of the trivial transform, and of the hostile one, over `seconds` on a fresh
 * one-worker pool, each called back to back (both queue for the one worker).
 */
async function beside(hostile: string | undefined, record: EventRecord, seconds: number) {
  const registry = createTransformRegistry({
    destinations: [],
    services: builtinServices,
    loadQuickJS: loadQuickJSNode,
    executor: createTransformPool({ size: 1 }),
  });
  const event = toTransformEvent(record.event);
  const context = { destination: "bench", attempt: 1, headers: {} };
  const good = await registry.compile({ code: TRIVIAL, timeoutMs: 50, memoryLimitMb: 16 });
  const bad =
    hostile === undefined ? undefined : await registry.compile({ code: hostile, timeoutMs: 50, memoryLimitMb: 16 });
  for (let i = 0; i < 20; i++) await good.run(event, context); // the worker started and warm
  let stop = false;
  const loop = async (transform: PreparedTransform, ok: boolean) => {
    let calls = 0;
    while (!stop) {
      const outcome = await transform.run(event, context);
      if (outcome.ok !== ok) throw new Error(`unexpected outcome: ${JSON.stringify(outcome)}`);
      calls++;
    }
    return calls;
  };
  const running = [loop(good, true), bad ? loop(bad, false) : Promise.resolve(0)];
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  stop = true;
  const [goodCalls, badCalls] = await Promise.all(running);
  registry.close();
  const perSecond = (n: number) => Math.round(((n as number) / seconds) * 10) / 10;
  return { good: perSecond(goodCalls as number), bad: perSecond(badCalls as number) };
}

export async function benchTransform(options: { durationSeconds?: number } = {}) {
  const rounds = Math.max(3, Math.round((options.durationSeconds ?? 10) / 3));
  const perRound = 2000;
  const record = await sampleRecord();
  const destination = {
    id: "bench",
    type: "http" as const,
    url: "http://127.0.0.1:9/hook",
    mode: "cloudevent" as const,
    secrets: [WHSEC],
    timeoutSeconds: 15,
    allowPrivateNetworks: true,
  };
  const transport = {
    send: async () => ({ ok: true as const, status: 204 }),
    close: async () => {},
  };
  const plain = createHttpSink(destination as Parameters<typeof createHttpSink>[0], { transport });
  const destinations = [{ id: "bench", transform: { code: TRIVIAL, timeoutMs: 50, memoryLimitMb: 16 } }];
  const inThread = createTransformRegistry({ destinations, services: builtinServices, loadQuickJS: loadQuickJSNode });
  const pooled = createTransformRegistry({
    destinations,
    services: builtinServices,
    loadQuickJS: loadQuickJSNode,
    executor: createTransformPool({ size: 1 }),
  });
  const before = withTransform(plain, inThread);
  const after = withTransform(plain, pooled);

  // Warm every path (JIT, the QuickJS module, the compile, the worker), then interleave rounds.
  await cpuPerDelivery(plain, record, 1000);
  await cpuPerDelivery(before, record, 1000);
  await cpuPerDelivery(after, record, 1000);
  const a: number[] = [];
  const b: number[] = [];
  const c: number[] = [];
  for (let i = 0; i < rounds; i++) {
    a.push(await cpuPerDelivery(plain, record, perRound));
    b.push(await cpuPerDelivery(before, record, perRound));
    c.push(await cpuPerDelivery(after, record, perRound));
  }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
  const without = median(a);
  const withBefore = median(b);
  const withAfter = median(c);

  // Latency per call, one at a time: in this thread, then through the pool.
  const calls = rounds * perRound;
  const inThreadTransform = await inThread.forDestination("bench");
  const pooledTransform = await pooled.forDestination("bench");
  if (!inThreadTransform || !pooledTransform) throw new Error("the bench transform did not compile");
  const local = await latencies(inThreadTransform, record, calls);
  const remote = await latencies(pooledTransform, record, calls);
  const at = (sorted: number[], q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] as number;
  const us = (ms: number) => Math.round(ms * 10_000) / 10;

  // Memory: one compiled transform, and 100 distinct ones (QuickJS's own count).
  const quickjs = await loadQuickJSNode();
  const compileOne = (code: string) => {
    const factory = toFactorySource(code);
    if (!factory.ok) throw new Error(factory.message);
    return compileTransform(quickjs, factory.source, "bench", { timeoutMs: 50, memoryLimitMb: 16 });
  };
  const one = compileOne(TRIVIAL);
  one.run(toTransformEvent(record.event), { destination: "bench", attempt: 1, headers: {} });
  const perTransformBytes = one.memoryBytes();
  one.dispose();
  const many = [];
  for (let i = 0; i < 100; i++) {
    const t = compileOne(`${TRIVIAL}\n// ${i}`);
    t.run(toTransformEvent(record.event), { destination: "bench", attempt: 1, headers: {} });
    many.push(t);
  }
  const quickjsBytes = many.reduce((sum, t) => sum + t.memoryBytes(), 0);
  for (const t of many) t.dispose();
  inThread.close();
  pooled.close();

  const out = {
    "cpu us per delivery, no transform (median of rounds)": Math.round(without * 10) / 10,
    "cpu us per delivery, trivial transform in-thread (before)": Math.round(withBefore * 10) / 10,
    "cpu us per delivery, trivial transform in the worker pool (after)": Math.round(withAfter * 10) / 10,
    "cpu us added by the transform, in-thread (target <= 50)": Math.round((withBefore - without) * 10) / 10,
    "cpu us added by the transform, worker pool": Math.round((withAfter - without) * 10) / 10,
    "latency us per call in-thread p50 / p99": `${us(at(local, 0.5))} / ${us(at(local, 0.99))}`,
    "latency us per call via the pool p50 / p99": `${us(at(remote, 0.5))} / ${us(at(remote, 0.99))}`,
    "latency us added by the pool p50": us(at(remote, 0.5) - at(local, 0.5)),
    "latency us added by the pool p99 (target <= 1000)": us(at(remote, 0.99) - at(local, 0.99)),
    "calls timed per path": calls,
    rounds,
    "deliveries per round": perRound,
    "event JSON bytes": JSON.stringify(record.event).length,
    "KiB per compiled transform (QuickJS memory_used_size)": Math.round(perTransformBytes / 102.4) / 10,
    "KiB per compiled transform (mean over 100, QuickJS count)": Math.round(quickjsBytes / 100 / 102.4) / 10,
  };
  // A hostile module beside a trivial one on a one-worker pool.
  const window = Math.max(3, Math.min(10, options.durationSeconds ?? 10));
  const alone = await beside(undefined, record, window);
  Object.assign(out, {
    "hostile: trivial calls/s on a one-worker pool, alone": alone.good,
    "hostile window, seconds": window,
  });
  for (const [name, code] of Object.entries(HOSTILE_TOP_LEVELS)) {
    const figures = await beside(code, record, window);
    Object.assign(out, {
      [`hostile: trivial calls/s beside a top level that never ends (${name})`]: figures.good,
      [`hostile: calls/s of the top level that never ends (${name})`]: figures.bad,
    });
  }
  for (const [key, value] of Object.entries(out)) console.log(`${key}: ${value}`);
  return out;
}
