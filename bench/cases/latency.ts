/**
 * Delivery latency under an open-loop load: signed e-sign webhooks at fixed rates (50, 200, 500,
 * 800, 1000/s), one `http` destination with default settings on loopback, latency from the sender
 * seeing its 202 to the destination receiving the signed delivery (p50/p95/p99/max per rate),
 * on the embedded (sqlite) store and, when redis-server is here, on the Redis store. Plus, per
 * store, the sustained rate delivered to that one destination (closed loop, 32 in flight) as a
 * ratio of the same store's ingress alone (a gateway without routes).
 * Targets (issue 35): 200/s p99 <= 25 ms; 800/s p95 <= 50 ms and p99 <= 100 ms; delivered /
 * ingress only >= 0.8. Every loop is bounded (seconds per rate, a receipt deadline).
 * `BENCH_LATENCY_RATES=200,800` picks the rates; `BENCH_LATENCY_STORES=sqlite,redis,postgres` the
 * stores (default sqlite,redis; postgres starts a server as the tests do, test/helpers/postgres-server.ts);
 * `BENCH_LATENCY_CONCURRENCY=4` gives the destination that `concurrency` instead of the default.
 * The destination runs in its own process (bench/peers/latency-destination.ts).
 */

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import { buildEsignBody } from "../../src/services/esign/esign-samples.ts";
import { type PostgresServer, startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { startRedisServer } from "../../test/helpers/redis-server.ts";
import type { LoadRequest } from "../lib/autocannon-run.ts";
import { signedEsignWebhook, WEBHOOK_MARK } from "../lib/signed-webhooks.ts";
import { checkTarget } from "../lib/targets.ts";
import { awaitReceipts, drive } from "./fanout.ts";
import { startBenchGateway } from "./ingress.ts";

export interface LatencyOptions {
  /** Seconds per rate and per closed-loop phase. Default 10. */
  durationSeconds?: number;
}

const DEFAULT_RATES = [50, 200, 500, 800, 1000];
/** Requests the open-loop sender may hold in flight (never the limit at these rates). */
const SENDER_CONNECTIONS = 64;
/** How long a run's deliveries may take to arrive (an overloaded machine drains slowly). */
const RECEIPT_DEADLINE_MS = 600_000;
const WHSEC = `whsec_${randomBytes(32).toString("base64")}`;

/** Signed e-sign webhooks with unique ids, as the upstream signs them. */
export function esignWebhooks(secret: string, runId: string): () => LoadRequest {
  const template = JSON.stringify(buildEsignBody("agreement.signed", { uniqueId: WEBHOOK_MARK }));
  let n = 0;
  return () => signedEsignWebhook(secret, template, `${runId}-${n++}`);
}

const DESTINATION = new URL("../peers/latency-destination.ts", import.meta.url).pathname;

/**
 * The loopback HTTP destination, in its own process (bench/peers/latency-destination.ts): when it
 * shared this process, every delivery also waited for the load generator's event loop (a burst
 * of sends or 202s held the destination's answers, and the gateway's lane of 4 with them).
 * Receipts come back on the monotonic clock and are turned into this process's `performance.now()`.
 */
export async function receiver() {
  const receipts = new Map<string, number>();
  // process.hrtime and performance.now() are both monotonic here: a constant offset apart.
  const offset = Number(process.hrtime.bigint()) / 1e6 - performance.now();
  let connections = 0;
  const child = spawn(process.execPath, ["--import", "tsx", DESTINATION], {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  child.on("message", (message: { receipts: [string, number][]; connections: number }) => {
    for (const [id, at] of message.receipts) receipts.set(id, at - offset);
    connections = message.connections;
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NonNullable<typeof child.stdout> });
    lines.on("line", (line) => {
      if (line.startsWith("PORT ")) resolve(Number(line.slice(5)));
    });
    child.once("exit", (code) => reject(new Error(`the destination process exited (${code}) before listening`)));
  });
  const url = `http://127.0.0.1:${port}/hook`;
  return {
    id: "http-1",
    receipts,
    /** The destination process (its CPU is read by bench/lib/delivery-cpu-ab.ts). */
    pid: child.pid as number,
    /** Connections the destination accepted so far (a reconnecting gateway shows here). */
    connections: () => connections,
    // Default settings (concurrency, retries, breaker): only what an http destination requires;
    // BENCH_LATENCY_CONCURRENCY sets `concurrency` (an A/B of the lane's width).
    config: {
      id: "http-1",
      type: "http",
      url,
      secrets: [WHSEC],
      allowCidrs: ["127.0.0.1/32"],
      ...(process.env.BENCH_LATENCY_CONCURRENCY ? { concurrency: Number(process.env.BENCH_LATENCY_CONCURRENCY) } : {}),
    },
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.disconnect();
      child.kill("SIGTERM");
      await exited;
    },
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : Math.round((sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number) * 10) / 10;

interface RateRow {
  rate: number;
  sent: number;
  failed: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** Deliveries that took longer than 500 ms (the slow path's signature). */
  over500: number;
  /** Connections the destination accepted during the rate's run. */
  connections: number;
}

/** Runs every rate against one store; `storeConfig` is the gateway's `store` section. */
async function measureStore(
  label: string,
  storeConfig: Record<string, unknown> | undefined,
  rates: number[],
  seconds: number,
  runId: string,
) {
  const sink = await receiver();
  const gateway = await startBenchGateway({
    log: { level: "warn" },
    ...(storeConfig ? { store: storeConfig } : {}),
    destinations: [sink.config],
    routes: [{ destinations: [sink.id] }],
  });
  const rows: RateRow[] = [];
  let delivered = 0;
  try {
    const next = esignWebhooks(gateway.secrets.esign, `${runId}-${label}`);
    const warm = await drive(gateway.gateway.url, next, { seconds: 2, concurrency: 8, rate: 200 });
    await awaitReceipts([sink as never], warm.accepted.keys());
    for (const rate of rates) {
      const connectionsBefore = sink.connections();
      const run = await drive(gateway.gateway.url, next, { seconds, concurrency: SENDER_CONNECTIONS, rate });
      await awaitReceipts([sink as never], run.accepted.keys(), RECEIPT_DEADLINE_MS);
      const latencies = [...run.accepted]
        .map(([id, at]) => Math.max(0, (sink.receipts.get(id) as number) - at))
        .sort((a, b) => a - b);
      rows.push({
        rate,
        sent: run.accepted.size,
        failed: run.failed,
        p50: percentile(latencies, 50),
        p95: percentile(latencies, 95),
        p99: percentile(latencies, 99),
        max: percentile(latencies, 100),
        over500: latencies.filter((l) => l > 500).length,
        connections: sink.connections() - connectionsBefore,
      });
    }
    // Sustained delivery to the one destination, closed loop.
    const loaded = await drive(gateway.gateway.url, next, { seconds, concurrency: 32 });
    const last = await awaitReceipts([sink as never], loaded.accepted.keys(), RECEIPT_DEADLINE_MS);
    delivered = Math.round(loaded.accepted.size / ((last - loaded.started) / 1000));
  } finally {
    await gateway.cleanup();
    await sink.close();
  }
  // Ingress alone on the same store: the same gateway without destinations or routes.
  const alone = await startBenchGateway({ log: { level: "warn" }, ...(storeConfig ? { store: storeConfig } : {}) });
  let ingressOnly: number;
  try {
    const next = esignWebhooks(alone.secrets.esign, `${runId}-${label}-alone`);
    await drive(alone.gateway.url, next, { seconds: 2, concurrency: 32 });
    const run = await drive(alone.gateway.url, next, { seconds, concurrency: 32 });
    ingressOnly = Math.round(run.accepted.size / ((run.ended - run.started) / 1000));
  } finally {
    await alone.cleanup();
  }
  return { rows, delivered, ingressOnly };
}

/** Runs the latency case and returns its figures. */
export async function benchLatency(options: LatencyOptions = {}): Promise<Record<string, number | string>> {
  const seconds = options.durationSeconds ?? 10;
  const rates = process.env.BENCH_LATENCY_RATES
    ? process.env.BENCH_LATENCY_RATES.split(",").map(Number)
    : DEFAULT_RATES;
  const stores = (process.env.BENCH_LATENCY_STORES ?? "sqlite,redis").split(",");
  const runId = randomBytes(4).toString("hex");
  const out: Record<string, number | string> = { seconds_per_rate: seconds };

  for (const store of stores) {
    let redis: Awaited<ReturnType<typeof startRedisServer>> | undefined;
    let postgres: PostgresServer | undefined;
    let storeConfig: Record<string, unknown> | undefined;
    if (store === "postgres") {
      // The test harness's server (initdb in a temp dir, a free loopback port), fsync on.
      postgres = await startPostgresServer({ fsync: true }).catch((error: Error) => {
        console.log(`\npostgres store: skipped (${error.message.split("\n")[0]})`);
        return undefined;
      });
      if (!postgres) {
        out.postgres = "skipped: no PostgreSQL here";
        continue;
      }
      storeConfig = { driver: "postgres", url: postgres.url, schema: `gwlat_${runId}` };
    } else if (store === "redis") {
      redis = await startRedisServer().catch(() => undefined);
      if (!redis) {
        console.log("\nredis store: skipped (no redis-server here)");
        out.redis = "skipped: no redis-server";
        continue;
      }
      storeConfig = { driver: "redis", url: redis.url, prefix: `gwlat-${runId}` };
    }
    try {
      const { rows, delivered, ingressOnly } = await measureStore(store, storeConfig, rates, seconds, runId);
      console.log(
        `\n${store} store: one http destination (default settings), open loop, ${seconds} s per rate; 202 seen -> delivery received`,
      );
      console.log("  rate      sent   p50 ms   p95 ms   p99 ms   max ms   >500 ms   failed   connections");
      for (const r of rows) {
        console.log(
          `  ${`${r.rate}/s`.padEnd(7)} ${String(r.sent).padStart(6)} ${String(r.p50).padStart(8)} ${String(r.p95).padStart(8)} ` +
            `${String(r.p99).padStart(8)} ${String(r.max).padStart(8)} ${String(r.over500).padStart(9)} ${String(r.failed).padStart(8)} ${String(r.connections).padStart(13)}`,
        );
        for (const [k, v] of Object.entries({ p50: r.p50, p95: r.p95, p99: r.p99, max: r.max, over500: r.over500 })) {
          out[`${store}_${r.rate}_${k}${k === "over500" ? "" : "_ms"}`] = v;
        }
        if (r.rate === 200) checkTarget("latency", `${store}: 200/s p99`, r.p99, "<=", 25, " ms");
        if (r.rate === 800) {
          checkTarget("latency", `${store}: 800/s p95`, r.p95, "<=", 50, " ms");
          checkTarget("latency", `${store}: 800/s p99`, r.p99, "<=", 100, " ms");
        }
      }
      const ratio = Math.round((delivered / ingressOnly) * 100) / 100;
      console.log(
        `  closed loop, 32 in flight: ingress only ${ingressOnly}/s, delivered to the destination ${delivered}/s`,
      );
      checkTarget("latency", `${store}: one HTTP destination, delivered / ingress only`, ratio, ">=", 0.8);
      out[`${store}_ingress_only_eps`] = ingressOnly;
      out[`${store}_delivered_eps`] = delivered;
      out[`${store}_delivered_ratio`] = ratio;
    } finally {
      await redis?.stop();
      await postgres?.stop();
    }
  }
  return out;
}
