/**
 * Live-stream benchmark: one gateway process (disk store), 2,000 WebSocket and 300 SSE
 * subscribers spread over client processes, signed webhooks posted at a steady 200 events/s.
 * Measured: latency from each webhook's 2xx (at the poster) to its receipt at every subscriber
 * (p50, p99, max), deliveries per second fanned out, and the gateway's RSS per idle connection.
 * Targets: p99 <= 50 ms, < 50 KB per idle connection.
 *
 * Client processes (live-subscriber-worker.ts) open the connections and record when each copy
 * arrived, on the wall clock with sub-millisecond precision (`performance.timeOrigin +
 * performance.now()`), which all processes on the machine share.
 */
import { type ChildProcess, fork } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { startBenchGateway } from "./ingress.ts";
import { BUCKET_MS, type FromWorker, now, type ToWorker } from "./live-subscriber-worker.ts";

const WORKER = new URL("./live-subscriber-worker.ts", import.meta.url).pathname;

export interface LiveBenchOptions {
  webSockets?: number;
  sse?: number;
  eventsPerSecond?: number;
  durationSeconds?: number;
  workers?: number;
}

function percentile(histogram: Map<number, number>, total: number, p: number): number {
  const target = Math.ceil(total * p);
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket) ?? 0;
    if (seen >= target) return Number(((bucket + 1) * BUCKET_MS).toFixed(1));
  }
  return Number.NaN;
}

function waitFor<T>(child: ChildProcess, pick: (m: FromWorker) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const on = (message: FromWorker) => {
      const value = pick(message);
      if (value !== undefined) {
        child.off("message", on);
        resolve(value);
      }
    };
    child.on("message", on);
  });
}

/** Posts signed webhooks at a steady rate; resolves with the 2xx time of each gateway event id. */
async function postSteadily(
  baseUrl: string,
  secrets: { esign: string; staffing: string },
  rate: number,
  seconds: number,
) {
  const next = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const acks: Record<string, number> = {};
  let failures = 0;
  const total = rate * seconds;
  const started = now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const request = next();
    inflight.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          `${baseUrl}${request.path}`,
          { method: "POST", headers: request.headers as Record<string, string>, agent },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (c: Buffer) => chunks.push(c));
            response.on("end", () => {
              const at = now();
              if (response.statusCode === 202) acks[JSON.parse(Buffer.concat(chunks).toString()).id] = at;
              else failures++;
              resolve();
            });
          },
        );
        req.on("error", () => {
          failures++;
          resolve();
        });
        req.end(request.body);
      }),
    );
  }
  await Promise.all(inflight);
  agent.destroy();
  return { acks, failures, postedSeconds: (now() - started) / 1000 };
}

/** Runs the live case and returns its figures. */
export async function benchLive(options: LiveBenchOptions = {}): Promise<Record<string, number | string>> {
  const webSockets = options.webSockets ?? 2000;
  const sse = options.sse ?? 300;
  const rate = options.eventsPerSecond ?? 200;
  const seconds = options.durationSeconds ?? 10;
  const workerCount = options.workers ?? 2;
  const key = `live-bench-${randomBytes(8).toString("hex")}`;
  const { gateway, secrets, cleanup } = await startBenchGateway({
    clients: [
      {
        id: "bench",
        apiKeyHashes: [`sha256:${createHash("sha256").update(key).digest("hex")}`],
        scopes: { stream: {} },
      },
    ],
    destinations: [{ id: "live", type: "stream" }],
    routes: [{ destinations: ["live"] }],
    log: { level: "warn" },
  });
  const workers: ChildProcess[] = [];
  try {
    // Warm the gateway's code paths before measuring memory.
    await postSteadily(gateway.url, secrets, 100, 1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const rssBefore = await gateway.rss();

    for (let w = 0; w < workerCount; w++) {
      workers.push(
        fork(WORKER, [], {
          execArgv: ["--import", "tsx"],
          env: { ...process.env, LIVE_BENCH_WORKER: "1" },
          stdio: ["ignore", "inherit", "inherit", "ipc"],
        }),
      );
    }
    const share = (n: number, w: number) => Math.floor(n / workerCount) + (w < n % workerCount ? 1 : 0);
    const readies = workers.map((child) => waitFor(child, (m) => ("ready" in m ? m : undefined)));
    workers.forEach((child, w) => {
      child.send({
        cmd: "connect",
        wsUrl: `${gateway.url.replace(/^http/, "ws")}/ws?token=${key}`,
        sseUrl: `${gateway.url}/stream?token=${key}`,
        webSockets: share(webSockets, w),
        sse: share(sse, w),
      } satisfies ToWorker);
    });
    const connected = await Promise.all(readies);
    const ready = connected.reduce((sum, r) => sum + r.ready, 0);
    const failed = connected.reduce((sum, r) => sum + r.failed, 0);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssIdle = await gateway.rss();
    console.log(
      `connected ${ready} subscribers (${failed} failed); RSS ${(rssBefore / 2 ** 20).toFixed(1)} -> ${(rssIdle / 2 ** 20).toFixed(1)} MiB`,
    );

    const posted = await postSteadily(gateway.url, secrets, rate, seconds);
    const expected = Object.keys(posted.acks).length * ready;
    // Wait (bounded) until every copy arrived or nothing moves any more.
    const counts = new Map<ChildProcess, number>();
    for (const child of workers)
      child.on("message", (m: FromWorker) => "received" in m && counts.set(child, m.received));
    let last = -1;
    for (let i = 0; i < 120; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      if (total >= expected || (total === last && i > 20)) break;
      last = total;
    }
    const reports = await Promise.all(
      workers.map((child) => {
        const report = waitFor(child, (m) => ("histogram" in m ? m : undefined));
        child.send({ cmd: "report", acks: posted.acks } satisfies ToWorker);
        return report;
      }),
    );
    const histogram = new Map<number, number>();
    let deliveries = 0;
    let max = 0;
    let lastReceipt = 0;
    for (const report of reports) {
      for (const [bucket, count] of Object.entries(report.histogram)) {
        histogram.set(Number(bucket), (histogram.get(Number(bucket)) ?? 0) + count);
      }
      deliveries += report.deliveries;
      max = Math.max(max, report.max);
      lastReceipt = Math.max(lastReceipt, report.lastReceipt);
    }
    const firstAck = Math.min(...Object.values(posted.acks));
    const figures = {
      subscribers: ready,
      webSockets,
      sse,
      connectFailures: failed,
      eventsPosted: Object.keys(posted.acks).length,
      postFailures: posted.failures,
      postRatePerSecond: Number((Object.keys(posted.acks).length / posted.postedSeconds).toFixed(1)),
      deliveriesExpected: expected,
      deliveriesReceived: deliveries,
      p50Ms: percentile(histogram, deliveries, 0.5),
      p99Ms: percentile(histogram, deliveries, 0.99),
      maxMs: Number(max.toFixed(1)),
      fanoutPerSecond: Math.round(deliveries / ((lastReceipt - firstAck) / 1000)),
      rssPerIdleConnectionKB: Number(((rssIdle - rssBefore) / Math.max(1, ready) / 1024).toFixed(1)),
      targetP99Ms: 50,
      targetKBPerConnection: 50,
    };
    console.log(
      `latency 2xx -> subscriber: p50 ${figures.p50Ms} ms  p99 ${figures.p99Ms} ms  max ${figures.maxMs} ms; ` +
        `${figures.deliveriesReceived}/${expected} deliveries, ${figures.fanoutPerSecond}/s; ` +
        `${figures.rssPerIdleConnectionKB} KB RSS per idle connection`,
    );
    return figures;
  } finally {
    for (const child of workers) if (child.connected) child.send({ cmd: "exit" } satisfies ToWorker);
    await cleanup();
  }
}
