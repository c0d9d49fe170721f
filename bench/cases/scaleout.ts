/**
 * Scale-out benchmark (`npm run bench -- scaleout`), in one run: ingress req/s and p99 for one
 * instance on the embedded disk store, one instance on Redis, and three instances on one Redis
 * behind a round-robin client (the connections split evenly over the instances, one load
 * generator each, run together); then the webhook 2xx -> subscriber latency when the WebSocket
 * subscriber is on another instance than the one accepting, at a steady 100 events/s; and the
 * Redis commands per accepted event (INFO stats, commands inside scripts included).
 * Targets: one instance on Redis >= 0.7x the embedded store; cross-instance live p99 <= 20 ms.
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { Redis } from "ioredis";
import WebSocket from "ws";
import { startDurableRedis } from "../../test/helpers/durable-redis.ts";
import { type LoadFigures, runLoad } from "../lib/autocannon-run.ts";
import { createWebhookGenerator, type WebhookSecrets } from "../lib/signed-webhooks.ts";
import { checkTarget } from "../lib/targets.ts";
import { startBenchGateway } from "./ingress.ts";

export interface ScaleoutOptions {
  connections?: number;
  durationSeconds?: number;
  eventsPerSecond?: number;
  liveSeconds?: number;
}

const STREAM_KEY = `scaleout-${randomBytes(8).toString("hex")}`;

const row = (name: string, f: LoadFigures) =>
  `${name.padEnd(30)} ${String(f.requestsPerSecond).padStart(8)} req/s   p99 ${String(f.p99Ms).padStart(4)} ms   non-2xx ${f.non2xx}   errors ${f.errors}`;

/** Config of an instance on Redis with a live stream destination and a stream client. */
function redisConfig(url: string, prefix: string) {
  return {
    store: { driver: "redis", url, prefix },
    clients: [
      {
        id: "bench",
        apiKeyHashes: [`sha256:${createHash("sha256").update(STREAM_KEY).digest("hex")}`],
        scopes: { stream: {} },
      },
    ],
    destinations: [{ id: "live", type: "stream" }],
    routes: [{ destinations: ["live"] }],
    log: { level: "warn" },
  };
}

/** Load over several instances at once, the connections split evenly; figures summed / worst. */
async function runSpread(urls: string[], secrets: WebhookSecrets, connections: number, durationSeconds: number) {
  const runs = await Promise.all(
    urls.map((url, i) =>
      runLoad(url, createWebhookGenerator(secrets, `${randomBytes(4).toString("hex")}-${i}`), {
        connections: Math.ceil(connections / urls.length),
        durationSeconds,
      }),
    ),
  );
  return {
    requestsPerSecond: runs.reduce((s, r) => s + r.requestsPerSecond, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    total: runs.reduce((s, r) => s + r.total, 0),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors, 0),
  } satisfies LoadFigures;
}

/** Posts at `rate`/s to `urls` in turn while a subscriber on `subscriberUrl` records arrivals. */
async function measureCrossInstanceLive(
  subscriberUrl: string,
  urls: string[],
  secrets: WebhookSecrets,
  rate: number,
  seconds: number,
) {
  const arrivals = new Map<string, number>();
  const ws = new WebSocket(`${subscriberUrl.replace(/^http/, "ws")}/ws?token=${STREAM_KEY}`);
  await new Promise<void>((resolve, reject) => {
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; event?: { id: string } };
      if (frame.type === "ready") resolve();
      if (frame.type === "event" && frame.event) arrivals.set(frame.event.id, performance.now());
    });
    ws.once("error", reject);
  });
  const next = createWebhookGenerator(secrets, randomBytes(4).toString("hex"));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  const acks = new Map<string, number>();
  const started = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < rate * seconds; i++) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const request = next();
    const base = urls[i % urls.length] as string;
    inflight.push(
      new Promise<void>((resolve) => {
        const req = http.request(
          `${base}${request.path}`,
          { method: "POST", headers: request.headers, agent },
          (response) => {
            const chunks: Buffer[] = [];
            response.on("data", (c: Buffer) => chunks.push(c));
            response.on("end", () => {
              if (response.statusCode === 202)
                acks.set(JSON.parse(Buffer.concat(chunks).toString()).id, performance.now());
              resolve();
            });
          },
        );
        req.on("error", () => resolve());
        req.end(request.body);
      }),
    );
  }
  await Promise.all(inflight);
  // Bounded wait for the last arrivals.
  for (let i = 0; i < 100 && [...acks.keys()].some((id) => !arrivals.has(id)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  ws.close();
  agent.destroy();
  const latencies = [...acks]
    .filter(([id]) => arrivals.has(id))
    .map(([id, at]) => Math.max(0, (arrivals.get(id) as number) - at))
    .sort((a, b) => a - b);
  const pick = (p: number) =>
    Number((latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * p) - 1)] ?? Number.NaN).toFixed(1));
  return { accepted: acks.size, received: latencies.length, p50: pick(0.5), p99: pick(0.99), max: pick(1) };
}

async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0);
}

/** Runs the scale-out case and returns its figures. */
export async function benchScaleout(options: ScaleoutOptions = {}): Promise<Record<string, number | string>> {
  const connections = options.connections ?? 100;
  const durationSeconds = options.durationSeconds ?? Number(process.env.SCALEOUT_SECONDS ?? 10);
  const rate = options.eventsPerSecond ?? 100;
  const liveSeconds = options.liveSeconds ?? Math.max(2, Math.min(durationSeconds, 10));
  const warm = { connections, durationSeconds: Math.min(2, durationSeconds) };
  const redis = await startDurableRedis();
  const stats = new Redis(redis.url);
  const started: { cleanup(): Promise<void> }[] = [];
  try {
    const embedded = await startBenchGateway({ log: { level: "warn" } });
    started.push(embedded);
    await runLoad(embedded.gateway.url, createWebhookGenerator(embedded.secrets, "warm"), warm);
    const embeddedFigures = await runLoad(embedded.gateway.url, createWebhookGenerator(embedded.secrets, "e"), {
      connections,
      durationSeconds,
    });
    await embedded.cleanup();
    started.pop();

    const single = await startBenchGateway(redisConfig(redis.url, "one"));
    started.push(single);
    await runLoad(single.gateway.url, createWebhookGenerator(single.secrets, "warm"), warm);
    const before = await commandsProcessed(stats);
    const singleFigures = await runLoad(single.gateway.url, createWebhookGenerator(single.secrets, "s"), {
      connections,
      durationSeconds,
    });
    const perEvent = ((await commandsProcessed(stats)) - before) / Math.max(1, singleFigures.total);
    await single.cleanup();
    started.pop();

    // Three instances sharing one prefix need the same webhook secrets.
    const first = await startBenchGateway(redisConfig(redis.url, "three"));
    started.push(first);
    const rest = await Promise.all([0, 1].map(() => startBenchGateway(redisConfig(redis.url, "three"), first.secrets)));
    started.push(...rest);
    const urls = [first.gateway.url, ...rest.map((r) => r.gateway.url)];
    await runSpread(urls, first.secrets, connections, warm.durationSeconds);
    const threeFigures = await runSpread(urls, first.secrets, connections, durationSeconds);
    const live = await measureCrossInstanceLive(urls[0] as string, urls.slice(1), first.secrets, rate, liveSeconds);

    const ratio = Number((singleFigures.requestsPerSecond / embeddedFigures.requestsPerSecond).toFixed(2));
    const ratioThree = Number((threeFigures.requestsPerSecond / singleFigures.requestsPerSecond).toFixed(2));
    console.log(`\nscaleout: ${connections} connections, ${durationSeconds} s per run, signed webhooks, unique ids`);
    console.log(row("1 instance, disk store", embeddedFigures));
    console.log(row("1 instance, Redis", singleFigures));
    console.log(row("3 instances, Redis (round robin)", threeFigures));
    console.log(
      `ratio redis/disk ${ratio}   3x/1x on Redis ${ratioThree}   Redis commands per event ${perEvent.toFixed(1)}`,
    );
    checkTarget("scaleout", "one instance on Redis / embedded store", ratio, ">=", 0.8);
    console.log(
      `cross-instance live at ${rate} events/s for ${liveSeconds} s: ${live.received}/${live.accepted} received, p50 ${live.p50} ms, p99 ${live.p99} ms, max ${live.max} ms`,
    );
    checkTarget("scaleout", "cross-instance live p99", live.p99, "<=", 20, " ms");
    return {
      disk_rps: embeddedFigures.requestsPerSecond,
      disk_p99_ms: embeddedFigures.p99Ms,
      redis_rps: singleFigures.requestsPerSecond,
      redis_p99_ms: singleFigures.p99Ms,
      redis_non2xx: singleFigures.non2xx,
      three_rps: threeFigures.requestsPerSecond,
      three_p99_ms: threeFigures.p99Ms,
      three_non2xx: threeFigures.non2xx,
      ratio_redis_to_disk: ratio,
      ratio_three_to_one: ratioThree,
      redis_commands_per_event: Number(perEvent.toFixed(1)),
      live_cross_p50_ms: live.p50,
      live_cross_p99_ms: live.p99,
      live_cross_received: live.received,
      live_cross_accepted: live.accepted,
    };
  } finally {
    for (const s of started.reverse()) await s.cleanup().catch(() => {});
    stats.disconnect();
    await redis.stop();
  }
}
