/**
 * Tracing cost on the ingress path: the same signed-webhook load (autocannon, both schemes,
 * unique ids) against gateway processes with tracing off and with `always_on` exporting
 * OTLP/protobuf to a local receiver (this process; it drains and counts), alternating A/B/A/B in
 * one run. The figure that matters on a shared machine is the gateway's CPU time per request
 * (from /proc, during the load plus one second of trailing exports), not req/s.
 * `BENCH_BASELINE_BIN=<path to another checkout's bin/gateway.js>` adds that build (e.g. the
 * commit before tracing) as a third variant. Targets: off within noise of before; on <= 15 %.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runLoad } from "../lib/autocannon-run.ts";
import { cpuSecondsOf } from "../lib/cpu-meter.ts";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { spawnAndWait } from "../lib/spawn-process.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;

interface Variant {
  name: string;
  bin: string;
  env: Record<string, string>;
}

interface Sample {
  rps: number;
  p99Ms: number;
  requests: number;
  cpuMicrosPerRequest: number;
}

async function startDrain() {
  let requests = 0;
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on("end", () => {
      requests++;
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats: () => ({ requests, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function runVariant(
  variant: Variant,
  secrets: { esign: string; staffing: string },
  load: { connections: number; durationSeconds: number },
): Promise<Sample> {
  const dir = await mkdtemp(join(tmpdir(), "gw-bench-tracing-"));
  const config = {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "disk", dir: join(dir, "data") },
    sources: [
      { id: "esign", service: "esign", secrets: ["${BENCH_ESIGN_SECRET}"] },
      { id: "staffing", service: "staffing", secrets: ["${BENCH_STAFFING_SECRET}"] },
    ],
    admin: { apiKeyHashes: [`sha256:${createHash("sha256").update("bench-admin").digest("hex")}`] },
  };
  await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
  const gateway = await spawnAndWait(
    [variant.bin, "serve", "--config", join(dir, "gateway.json")],
    (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).url : undefined),
    { BENCH_ESIGN_SECRET: secrets.esign, BENCH_STAFFING_SECRET: secrets.staffing, ...variant.env },
  );
  try {
    const generate = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
    await runLoad(gateway.url, generate, { connections: load.connections, durationSeconds: 2 });
    const pid = gateway.child.pid as number;
    const before = await cpuSecondsOf(pid);
    const figures = await runLoad(gateway.url, generate, load);
    // Spans of the last requests leave within the batch delay: count their export too.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const cpu = (await cpuSecondsOf(pid)) - before;
    return {
      rps: figures.requestsPerSecond,
      p99Ms: figures.p99Ms,
      requests: figures.total,
      cpuMicrosPerRequest: Math.round((cpu / Math.max(1, figures.total)) * 1e6),
    };
  } finally {
    await gateway.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Runs the tracing case and returns its figures. */
export async function benchTracing(
  options: { durationSeconds?: number } = {},
): Promise<Record<string, number | string>> {
  const load = { connections: 100, durationSeconds: options.durationSeconds ?? 10 };
  const drain = await startDrain();
  const secrets = { esign: randomBytes(24).toString("hex"), staffing: randomBytes(24).toString("hex") };
  const variants: Variant[] = [
    { name: "tracing off", bin: BIN, env: {} },
    {
      name: "always_on",
      bin: BIN,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: drain.url, OTEL_TRACES_SAMPLER: "always_on" },
    },
  ];
  if (process.env.BENCH_BASELINE_BIN)
    variants.unshift({ name: "before", bin: process.env.BENCH_BASELINE_BIN, env: {} });
  const rounds = Number(process.env.BENCH_TRACING_ROUNDS) || 2;
  const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      for (const variant of variants) samples.get(variant.name)?.push(await runVariant(variant, secrets, load));
    }
  } finally {
    await drain.close();
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  const figures: Record<string, number | string> = {};
  console.log(`\ntracing: ${load.connections} connections, ${load.durationSeconds} s per run, ${rounds} rounds A/B`);
  for (const [name, list] of samples) {
    const cpu = median(list.map((s) => s.cpuMicrosPerRequest));
    const rps = median(list.map((s) => s.rps));
    const key = name.replace(/\W+/g, "_");
    figures[`${key}_cpu_us_per_request`] = cpu;
    figures[`${key}_rps`] = rps;
    console.log(
      `${name.padEnd(12)} cpu ${String(cpu).padStart(5)} µs/request (runs: ${list.map((s) => s.cpuMicrosPerRequest).join(", ")})   ${String(rps).padStart(6)} req/s   p99 ${median(list.map((s) => s.p99Ms))} ms`,
    );
  }
  const off = figures.tracing_off_cpu_us_per_request as number;
  const on = figures.always_on_cpu_us_per_request as number;
  figures.always_on_cpu_ratio = Math.round((on / off) * 100) / 100;
  const before = figures.before_cpu_us_per_request as number | undefined;
  if (before) figures.off_to_before_cpu_ratio = Math.round((off / before) * 100) / 100;
  console.log(
    `always_on/off CPU per request ${figures.always_on_cpu_ratio} (target <= 1.15)` +
      (before ? `   off/before ${figures.off_to_before_cpu_ratio} (target: within noise)` : "") +
      `   OTLP exports received ${drain.stats().requests} (${Math.round(drain.stats().bytes / 1024)} KiB)`,
  );
  return figures;
}
