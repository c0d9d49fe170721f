/**
 * Transform benchmark, on Node, in this process (CPU time, A/B in one run):
 *   - per delivery: an `http` sink (signing and building the request, the send a no-op) with and
 *     without a trivial transform in front (`withTransform`, the path the delivery engine takes),
 *     in interleaved rounds; the difference is what the transform adds (target <= 50 us);
 *   - memory: QuickJS's own count of what one compiled transform holds between calls (its
 *     runtime, frozen context and compiled module), for one and as the mean over 100 compiled ones.
 */
import { randomBytes } from "node:crypto";
import { loadQuickJSNode } from "../../adapters/node/quickjs-node.ts";
import { createWebCrypto } from "../../src/crypto/crypto-port.ts";
import { createHttpSink } from "../../src/delivery/http/http-sink.ts";
import type { Sink } from "../../src/delivery/sink-contract.ts";
import { normalizeEvent } from "../../src/events/normalize-event.ts";
import { builtinServices } from "../../src/services/registry.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { toTransformEvent } from "../../src/transform/transform-contract.ts";
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

export async function benchTransform(options: { durationSeconds?: number } = {}) {
  const rounds = Math.max(3, Math.round((options.durationSeconds ?? 10) / 2));
  const perRound = 4000;
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
  const registry = createTransformRegistry({
    destinations: [{ id: "bench", transform: { code: TRIVIAL, timeoutMs: 50, memoryLimitMb: 16 } }],
    services: builtinServices,
    loadQuickJS: loadQuickJSNode,
  });
  const transformed = withTransform(plain, registry);

  // Warm both paths (JIT, the QuickJS module, the compile), then interleave A and B rounds.
  await cpuPerDelivery(plain, record, 2000);
  await cpuPerDelivery(transformed, record, 2000);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i++) {
    a.push(await cpuPerDelivery(plain, record, perRound));
    b.push(await cpuPerDelivery(transformed, record, perRound));
  }
  // The transform step alone, as the wrapper runs it (split the event, redact headers, run).
  const compiledForStep = await registry.forDestination("bench");
  if (!compiledForStep) throw new Error("the bench transform did not compile");
  const step: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = process.cpuUsage();
    for (let n = 0; n < perRound; n++) {
      compiledForStep.run(toTransformEvent(record.event), {
        destination: "bench",
        attempt: 1,
        headers: redactHeaders(record.headers),
      });
    }
    const used = process.cpuUsage(started);
    step.push((used.user + used.system) / perRound);
  }
  const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] as number;
  const without = median(a);
  const withT = median(b);

  // Memory: one compiled transform, and 100 distinct ones.
  const compiled = await registry.forDestination("bench");
  const perTransformBytes = compiled?.memoryBytes() ?? 0;
  const many = [];
  for (let i = 0; i < 100; i++) {
    const t = await registry.compile({ code: `${TRIVIAL}\n// ${i}`, timeoutMs: 50, memoryLimitMb: 16 });
    t.run(toTransformEvent(record.event), { destination: "bench", attempt: 1, headers: {} });
    many.push(t);
  }
  const quickjsBytes = many.reduce((sum, t) => sum + t.memoryBytes(), 0);
  for (const t of many) t.dispose();
  registry.close();

  const out = {
    "cpu us per delivery, no transform (median of rounds)": Math.round(without * 10) / 10,
    "cpu us per delivery, trivial transform": Math.round(withT * 10) / 10,
    "cpu us added by the transform (target <= 50)": Math.round((withT - without) * 10) / 10,
    "cpu us of the transform step alone (split, redact, run; median)": Math.round(median(step) * 10) / 10,
    rounds,
    "deliveries per round": perRound,
    "event JSON bytes": JSON.stringify(record.event).length,
    "KiB per compiled transform (QuickJS memory_used_size)": Math.round(perTransformBytes / 102.4) / 10,
    "KiB per compiled transform (mean over 100, QuickJS count)": Math.round(quickjsBytes / 100 / 102.4) / 10,
  };
  for (const [key, value] of Object.entries(out)) console.log(`${key}: ${value}`);
  return out;
}
