/**
 * Scale-out benchmark (`npm run bench -- scaleout`), in one run, side by side: ingress req/s and
 * p99 for one instance on the embedded disk store, one on PostgreSQL, one on Redis, three
 * instances on one PostgreSQL and three on one Redis behind a round-robin client (the
 * connections split evenly over the instances, one load generator each, run together), with
 * the CPU of every process (PostgreSQL: the postmaster and its backends); the webhook 2xx ->
 * subscriber latency when the WebSocket subscriber is on another instance than the one
 * accepting, at a steady 100 events/s, on PostgreSQL and on Redis; the Redis commands per
 * accepted event; on PostgreSQL the 2xx -> HTTP delivery latency at 200 events/s with every
 * poll out of reach (scaleout-postgres.ts), `GET /events?external_id=` on 200,000 events with
 * its plan, and ingress on one instance with `commit_delay` 0, 100 and 1000 µs.
 * Targets (issue 34): one instance on PostgreSQL >= 0.6x the embedded store; cross-instance
 * live p99 <= 20 ms; 2xx -> delivery p99 at 200/s <= 25 ms; external-id list p95 at 200k
 * events <= 25 ms. And one instance on Redis >= 0.8x the embedded store.
 * Environment: `SCALEOUT_SECONDS` (or `BENCH_SECONDS`) per load run, `BENCH_SCALEOUT_EVENTS`
 * (default 200000) events for the external-id lookup, `BENCH_PG_COMMIT_DELAYS` (default
 * `0,100,1000`, µs; empty skips the sweep), `BENCH_PG_COMMIT_SIBLINGS` (default 5) and
 * `BENCH_PG_COMMIT_ROUNDS` (default 1: rounds of the sweep, the order reversed every other
 * round; medians reported). `BENCH_SCALEOUT_ONLY=commit_delay` runs only the sweep;
 * `postgres_ingress` (one instance, embedded vs PostgreSQL, A B B A), `postgres_live`,
 * `postgres_delivery` or `postgres_external_id` only that PostgreSQL figure (quick A/B runs).
 */
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { Redis } from "ioredis";
import WebSocket from "ws";
import { startDurableRedis } from "../../test/helpers/durable-redis.ts";
import { type LoadFigures, runLoad } from "../lib/autocannon-run.ts";
import { formatCpu, type MeteredProcess, withCpu } from "../lib/cpu-meter.ts";
import { createWebhookGenerator, type WebhookSecrets } from "../lib/signed-webhooks.ts";
import { checkTarget } from "../lib/targets.ts";
import { startBenchGateway } from "./ingress.ts";
import {
  type BenchPostgres,
  deliveryLatencyOnPostgres,
  externalIdLookups,
  freshSchema,
  postgresStoreConfig,
  serverCounters,
  startBenchPostgres,
  statementStats,
} from "./scaleout-postgres.ts";

export interface ScaleoutOptions {
  connections?: number;
  durationSeconds?: number;
  eventsPerSecond?: number;
  liveSeconds?: number;
}

const STREAM_KEY = `scaleout-${randomBytes(8).toString("hex")}`;

const row = (name: string, f: LoadFigures, cpu: Record<string, number>) =>
  `${name.padEnd(36)} ${String(f.requestsPerSecond).padStart(8)} req/s   p99 ${String(f.p99Ms).padStart(4)} ms   non-2xx ${f.non2xx}   errors ${f.errors}   cpu: ${formatCpu(cpu)}`;

/** Config of an instance on `store` with a live stream destination and a stream client. */
function liveConfig(store: Record<string, unknown>) {
  return {
    store,
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

const redisConfig = (url: string, prefix: string) => liveConfig({ driver: "redis", url, prefix });
const postgresConfig = (url: string, schema: string) => liveConfig(postgresStoreConfig(url, schema));

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

type BenchGateway = Awaited<ReturnType<typeof startBenchGateway>>;

/** Median req/s and p99 per commit_delay value, in the order the values were given. */
function sweepMedians(sweep: { delay: number; figures: LoadFigures }[]): Map<number, { rps: number; p99: number }> {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };
  const out = new Map<number, { rps: number; p99: number }>();
  for (const delay of new Set(sweep.map((s) => s.delay))) {
    const runs = sweep.filter((s) => s.delay === delay).map((s) => s.figures);
    out.set(delay, { rps: median(runs.map((f) => f.requestsPerSecond)), p99: median(runs.map((f) => f.p99Ms)) });
  }
  return out;
}

/** A progress line while the case runs (the summary follows at its end). */
const note = (line: string) => console.log(`  [${new Date().toISOString().slice(11, 19)}] ${line}`);

/** The commit_delay values of the sweep (µs), from `BENCH_PG_COMMIT_DELAYS`. */
function commitDelays(): number[] {
  const raw = process.env.BENCH_PG_COMMIT_DELAYS ?? "0,100,1000";
  if (raw.trim() === "") return [];
  const values = raw.split(",").map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < 0 || v > 100_000)) {
    throw new Error("BENCH_PG_COMMIT_DELAYS: comma-separated whole microseconds from 0 to 100000");
  }
  return values;
}

/** Runs the scale-out case and returns its figures. */
export async function benchScaleout(options: ScaleoutOptions = {}): Promise<Record<string, number | string>> {
  const connections = options.connections ?? 100;
  const durationSeconds = options.durationSeconds ?? Number(process.env.SCALEOUT_SECONDS ?? 10);
  const rate = options.eventsPerSecond ?? 100;
  const deliveryRate = Number(process.env.BENCH_PG_DELIVERY_RATE ?? 200);
  const liveSeconds = options.liveSeconds ?? Math.max(2, Math.min(durationSeconds, 10));
  const lookupEvents = Number(process.env.BENCH_SCALEOUT_EVENTS ?? 200_000);
  if (!Number.isInteger(lookupEvents) || lookupEvents < 1000)
    throw new Error("BENCH_SCALEOUT_EVENTS: an integer >= 1000");
  const delays = commitDelays();
  const siblings = Number(process.env.BENCH_PG_COMMIT_SIBLINGS ?? 5);
  const rounds = Number(process.env.BENCH_PG_COMMIT_ROUNDS ?? 1);
  if (!Number.isInteger(siblings) || siblings < 0 || siblings > 1000)
    throw new Error("BENCH_PG_COMMIT_SIBLINGS: 0..1000");
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) throw new Error("BENCH_PG_COMMIT_ROUNDS: 1..20");
  const warm = { connections, durationSeconds: Math.min(2, durationSeconds) };
  const load = { connections, durationSeconds };
  const redis = await startDurableRedis();
  const stats = new Redis(redis.url);
  let postgres: BenchPostgres | undefined;
  const started: BenchGateway[] = [];
  const start = async (config: Record<string, unknown>, secrets?: BenchGateway["secrets"]) => {
    const gateway = await startBenchGateway(config, secrets);
    started.push(gateway);
    return gateway;
  };
  const stopAll = async () => {
    for (const g of started.splice(0).reverse()) await g.cleanup();
  };
  const pg = (): MeteredProcess => (postgres ? { tree: postgres.pid } : undefined);
  /** One instance loaded alone: its figures and the CPU of it and its engine. */
  const single = async (gateway: BenchGateway, engine: Record<string, MeteredProcess>, label: string) => {
    const warmed = await runLoad(gateway.gateway.url, createWebhookGenerator(gateway.secrets, `warm-${label}`), warm);
    const run = await withCpu({ gateway: gateway.gateway.child.pid, ...engine }, () =>
      runLoad(gateway.gateway.url, createWebhookGenerator(gateway.secrets, label), load),
    );
    return { ...run, warmTotal: warmed.total };
  };
  /** Three instances on one engine, loaded together; then the cross-instance live latency. */
  const three = async (config: Record<string, unknown>, engine: Record<string, MeteredProcess>) => {
    const first = await start(config);
    const rest = await Promise.all([0, 1].map(() => start(config, first.secrets)));
    const gateways = [first, ...rest];
    const urls = gateways.map((g) => g.gateway.url);
    await runSpread(urls, first.secrets, connections, warm.durationSeconds);
    const pids = Object.fromEntries(gateways.map((g, i) => [`gateway ${i + 1}`, g.gateway.child.pid]));
    const figures = await withCpu({ ...pids, ...engine }, () =>
      runSpread(urls, first.secrets, connections, durationSeconds),
    );
    const live = await measureCrossInstanceLive(urls[0] as string, urls.slice(1), first.secrets, rate, liveSeconds);
    await stopAll();
    return { ...figures, live };
  };
  /**
   * commit_delay sweep: one instance on PostgreSQL, the server's setting changed live between
   * runs (every session takes it at its next statement); the order of the values is reversed
   * every other round, so that a drift of the machine's load does not read as an effect.
   */
  const runSweep = async (server: BenchPostgres) => {
    const sweep: { delay: number; figures: LoadFigures; cpu: Record<string, number> }[] = [];
    if (delays.length === 0) return sweep;
    const gateway = await start(postgresConfig(server.url, freshSchema("cd")));
    for (let round = 0; round < rounds; round++) {
      for (const delay of round % 2 === 0 ? delays : [...delays].reverse()) {
        await server.setCommitDelay(delay, siblings);
        const run = await single(gateway, { postgres: { tree: server.pid } }, `cd${delay}-${round}`);
        sweep.push({ delay, figures: run.result, cpu: run.cpuPercent });
        note(row(`commit_delay ${delay} µs (round ${round + 1})`, run.result, run.cpuPercent));
      }
    }
    await stopAll();
    await server.setCommitDelay(0, 5);
    return sweep;
  };
  const reportSweep = (sweep: { delay: number; figures: LoadFigures; cpu: Record<string, number> }[]) => {
    const out: Record<string, number> = {};
    if (sweep.length === 0) return out;
    console.log(`commit_delay on one PostgreSQL instance (commit_siblings ${siblings}, ${connections} connections):`);
    for (const s of sweep) console.log(row(`  commit_delay ${s.delay} µs`, s.figures, s.cpu));
    for (const [delay, figures] of sweepMedians(sweep)) {
      console.log(`  commit_delay ${delay} µs, median of ${rounds}: ${figures.rps} req/s, p99 ${figures.p99} ms`);
      out[`commit_delay_${delay}_rps`] = figures.rps;
      out[`commit_delay_${delay}_p99_ms`] = figures.p99;
    }
    for (const [delay, figures] of sweepMedians(sweep)) {
      checkTarget(
        "scaleout",
        `PostgreSQL commit_delay ${delay} µs: req/s (median of ${rounds})`,
        figures.rps,
        "report",
      );
      checkTarget(
        "scaleout",
        `PostgreSQL commit_delay ${delay} µs: p99 (median of ${rounds})`,
        figures.p99,
        "report",
        undefined,
        " ms",
      );
    }
    return out;
  };
  try {
    postgres = await startBenchPostgres();
    const only = process.env.BENCH_SCALEOUT_ONLY;
    if (only === "commit_delay") {
      console.log(`\nscaleout, commit_delay sweep only: ${connections} connections, ${durationSeconds} s per run`);
      return reportSweep(await runSweep(postgres));
    }
    if (only === "postgres_ingress") {
      // The ingress ratio alone: the embedded store and PostgreSQL, one instance each, twice in
      // alternating order (A B B A) so a drift of the machine's load does not read as a ratio.
      const runs: Record<string, number[]> = { disk: [], postgres: [] };
      for (const engine of ["disk", "postgres", "postgres", "disk"] as const) {
        const config =
          engine === "disk" ? { log: { level: "warn" } } : postgresConfig(postgres.url, freshSchema("one"));
        const gateway = await start(config);
        const before = engine === "postgres" ? await serverCounters(postgres.url) : undefined;
        const statements = engine === "postgres" ? await statementStats(postgres.url) : undefined;
        await statements?.reset();
        const run = await single(gateway, engine === "disk" ? {} : { postgres: pg() }, engine);
        note(row(`1 instance, ${engine}`, run.result, run.cpuPercent));
        const events = Math.max(1, run.result.total);
        const cpuMs = (name: string) => (((run.cpuPercent[name] ?? 0) / 100) * durationSeconds * 1000) / events;
        let perEvent = `cpu ms per event: gateway ${cpuMs("gateway").toFixed(2)}`;
        if (before) {
          // Counted over the warm-up and the run: the warm-up's events are in `total` of neither.
          const after = await serverCounters(postgres.url);
          const all = events + (run.warmTotal ?? 0);
          perEvent += `, postgres ${cpuMs("postgres").toFixed(2)}; per accepted event (warm-up included): ${((after.walSyncs - before.walSyncs) / all).toFixed(2)} WAL flushes, ${((after.commits - before.commits) / all).toFixed(2)} commits, ${((after.walRecords - before.walRecords) / all).toFixed(1)} WAL records`;
        }
        note(`  ${perEvent}`);
        if (statements) {
          // Per accepted event, warm-up included (the counts were reset before it).
          for (const line of await statements.top(events + (run.warmTotal ?? 0))) note(`    ${line}`);
        }
        runs[engine]?.push(run.result.requestsPerSecond);
        await stopAll();
      }
      const sum = (v: number[] | undefined) => (v ?? []).reduce((a, b) => a + b, 0);
      const ratio = Number((sum(runs.postgres) / sum(runs.disk)).toFixed(2));
      checkTarget("scaleout", "one instance on PostgreSQL / embedded store (A B B A)", ratio, ">=", 0.6);
      return { ratio_postgres_to_disk: ratio, disk_rps: sum(runs.disk) / 2, postgres_rps: sum(runs.postgres) / 2 };
    }
    if (only === "postgres_live") {
      const threePostgres = await three(postgresConfig(postgres.url, freshSchema("three")), { postgres: pg() });
      note(row("3 instances, PostgreSQL", threePostgres.result, threePostgres.cpuPercent));
      const live = threePostgres.live;
      console.log(
        `cross-instance live on PostgreSQL at ${rate} events/s for ${liveSeconds} s: ${live.received}/${live.accepted} received, p50 ${live.p50} ms, p99 ${live.p99} ms, max ${live.max} ms`,
      );
      checkTarget("scaleout", "cross-instance live p99 on PostgreSQL", live.p99, "<=", 20, " ms");
      return { three_postgres_rps: threePostgres.result.requestsPerSecond, live_cross_postgres_p99_ms: live.p99 };
    }
    if (only === "postgres_delivery") {
      const delivery = await deliveryLatencyOnPostgres(postgres.url, deliveryRate, liveSeconds);
      console.log(
        `2xx -> HTTP delivery on PostgreSQL at ${deliveryRate} events/s for ${liveSeconds} s (delivery polls 1 h, hub poll 10 s): ${delivery.sent} sent, ${delivery.missing} missing, p50 ${delivery.p50} ms, p95 ${delivery.p95} ms, p99 ${delivery.p99} ms, max ${delivery.max} ms, >500 ms ${delivery.over500}`,
      );
      checkTarget(
        "scaleout",
        `2xx -> delivery p99 at ${deliveryRate}/s on PostgreSQL, no polls`,
        delivery.missing > 0 ? Number.POSITIVE_INFINITY : delivery.p99,
        "<=",
        25,
        " ms",
      );
      return { postgres_delivery_p50_ms: delivery.p50, postgres_delivery_p99_ms: delivery.p99 };
    }
    if (only === "postgres_external_id") {
      const lookups = await externalIdLookups(postgres.url, lookupEvents);
      console.log(
        `GET /events?external_id= on PostgreSQL at ${lookups.events} events (filled in ${lookups.fillSeconds} s): p50 ${lookups.p50} ms, p95 ${lookups.p95} ms, p99 ${lookups.p99} ms, ${lookups.eventsPerAnswer} events per answer; the SELECT alone p50 ${lookups.sqlP50} ms, p95 ${lookups.sqlP95} ms`,
      );
      console.log(`  EXPLAIN: ${lookups.plan.join("\n           ")}`);
      checkTarget(
        "scaleout",
        `external_id list p95 at ${lookups.events} events (PostgreSQL)`,
        lookups.p95,
        "<=",
        25,
        " ms",
      );
      return { external_id_p95_ms: lookups.p95, external_id_sql_p95_ms: lookups.sqlP95 };
    }
    const embedded = await single(await start({ log: { level: "warn" } }), {}, "e");
    note(row("1 instance, disk store", embedded.result, embedded.cpuPercent));
    await stopAll();

    const onePostgres = await single(
      await start(postgresConfig(postgres.url, freshSchema("one"))),
      { postgres: pg() },
      "p",
    );
    note(row("1 instance, PostgreSQL", onePostgres.result, onePostgres.cpuPercent));
    await stopAll();

    const oneRedisGateway = await start(redisConfig(redis.url, "one"));
    await runLoad(oneRedisGateway.gateway.url, createWebhookGenerator(oneRedisGateway.secrets, "warm-r"), warm);
    const before = await commandsProcessed(stats);
    const oneRedis = await withCpu({ gateway: oneRedisGateway.gateway.child.pid, "redis-server": redis.pid }, () =>
      runLoad(oneRedisGateway.gateway.url, createWebhookGenerator(oneRedisGateway.secrets, "s"), load),
    );
    note(row("1 instance, Redis", oneRedis.result, oneRedis.cpuPercent));
    const perEvent = ((await commandsProcessed(stats)) - before) / Math.max(1, oneRedis.result.total);
    await stopAll();

    // Three instances sharing one schema / prefix need the same webhook secrets.
    const threePostgres = await three(postgresConfig(postgres.url, freshSchema("three")), { postgres: pg() });
    note(
      `${row("3 instances, PostgreSQL", threePostgres.result, threePostgres.cpuPercent)}   live p99 ${threePostgres.live.p99} ms`,
    );
    const threeRedis = await three(redisConfig(redis.url, "three"), { "redis-server": redis.pid });
    note(`${row("3 instances, Redis", threeRedis.result, threeRedis.cpuPercent)}   live p99 ${threeRedis.live.p99} ms`);

    const delivery = await deliveryLatencyOnPostgres(postgres.url, deliveryRate, liveSeconds);
    note(`2xx -> delivery on PostgreSQL: p99 ${delivery.p99} ms, ${delivery.missing} missing`);
    const lookups = await externalIdLookups(postgres.url, lookupEvents);
    note(`external_id at ${lookups.events} events: p95 ${lookups.p95} ms (fill ${lookups.fillSeconds} s)`);

    const sweep = await runSweep(postgres);

    const ratioOf = (a: LoadFigures, b: LoadFigures) => Number((a.requestsPerSecond / b.requestsPerSecond).toFixed(2));
    const pgToDisk = ratioOf(onePostgres.result, embedded.result);
    const pgToRedis = ratioOf(onePostgres.result, oneRedis.result);
    const redisToDisk = ratioOf(oneRedis.result, embedded.result);
    const threeToOnePg = ratioOf(threePostgres.result, onePostgres.result);
    const threeToOneRedis = ratioOf(threeRedis.result, oneRedis.result);

    console.log(`\nscaleout: ${connections} connections, ${durationSeconds} s per run, signed webhooks, unique ids`);
    console.log(row("1 instance, disk store", embedded.result, embedded.cpuPercent));
    console.log(row("1 instance, PostgreSQL", onePostgres.result, onePostgres.cpuPercent));
    console.log(row("1 instance, Redis", oneRedis.result, oneRedis.cpuPercent));
    console.log(row("3 instances, PostgreSQL (round robin)", threePostgres.result, threePostgres.cpuPercent));
    console.log(row("3 instances, Redis (round robin)", threeRedis.result, threeRedis.cpuPercent));
    console.log(
      `postgres/disk ${pgToDisk}   postgres/redis ${pgToRedis}   redis/disk ${redisToDisk}   3x/1x on PostgreSQL ${threeToOnePg}   3x/1x on Redis ${threeToOneRedis}   Redis commands per event ${perEvent.toFixed(1)}`,
    );
    for (const [engine, live] of [
      ["PostgreSQL", threePostgres.live],
      ["Redis", threeRedis.live],
    ] as const) {
      console.log(
        `cross-instance live on ${engine} at ${rate} events/s for ${liveSeconds} s: ${live.received}/${live.accepted} received, p50 ${live.p50} ms, p99 ${live.p99} ms, max ${live.max} ms`,
      );
    }
    console.log(
      `2xx -> HTTP delivery on PostgreSQL at ${deliveryRate} events/s for ${liveSeconds} s (delivery polls 1 h, hub poll 10 s): ${delivery.sent} sent, ${delivery.missing} missing, p50 ${delivery.p50} ms, p95 ${delivery.p95} ms, p99 ${delivery.p99} ms, max ${delivery.max} ms, >500 ms ${delivery.over500}`,
    );
    console.log(
      `GET /events?external_id= on PostgreSQL at ${lookups.events} events (filled in ${lookups.fillSeconds} s through the store API): p50 ${lookups.p50} ms, p95 ${lookups.p95} ms, p99 ${lookups.p99} ms, ${lookups.eventsPerAnswer} events per answer; the SELECT alone p50 ${lookups.sqlP50} ms, p95 ${lookups.sqlP95} ms`,
    );
    console.log(`  EXPLAIN: ${lookups.plan.join("\n           ")}`);

    checkTarget("scaleout", "one instance on PostgreSQL / embedded store", pgToDisk, ">=", 0.6);
    checkTarget("scaleout", "one instance on PostgreSQL / on Redis", pgToRedis, "report");
    checkTarget("scaleout", "one instance on Redis / embedded store", redisToDisk, ">=", 0.8);
    checkTarget("scaleout", "three instances / one on PostgreSQL", threeToOnePg, "report");
    checkTarget("scaleout", "three instances / one on Redis", threeToOneRedis, "report");
    checkTarget("scaleout", "cross-instance live p99 on PostgreSQL", threePostgres.live.p99, "<=", 20, " ms");
    checkTarget("scaleout", "cross-instance live p99 on Redis", threeRedis.live.p99, "<=", 20, " ms");
    checkTarget(
      "scaleout",
      `2xx -> delivery p99 at ${deliveryRate}/s on PostgreSQL, no polls`,
      delivery.missing > 0 ? Number.POSITIVE_INFINITY : delivery.p99,
      "<=",
      25,
      " ms",
    );
    checkTarget(
      "scaleout",
      `external_id list p95 at ${lookups.events} events (PostgreSQL)`,
      lookups.p95,
      "<=",
      25,
      " ms",
    );
    checkTarget(
      "scaleout",
      "external_id list uses events_by_external_id (EXPLAIN)",
      lookups.usesIndex ? 1 : 0,
      ">=",
      1,
    );
    const sweepFigures = reportSweep(sweep);

    const out: Record<string, number | string> = {
      disk_rps: embedded.result.requestsPerSecond,
      disk_p99_ms: embedded.result.p99Ms,
      postgres_rps: onePostgres.result.requestsPerSecond,
      postgres_p99_ms: onePostgres.result.p99Ms,
      postgres_non2xx: onePostgres.result.non2xx,
      redis_rps: oneRedis.result.requestsPerSecond,
      redis_p99_ms: oneRedis.result.p99Ms,
      redis_non2xx: oneRedis.result.non2xx,
      three_postgres_rps: threePostgres.result.requestsPerSecond,
      three_postgres_p99_ms: threePostgres.result.p99Ms,
      three_postgres_non2xx: threePostgres.result.non2xx,
      three_rps: threeRedis.result.requestsPerSecond,
      three_p99_ms: threeRedis.result.p99Ms,
      three_non2xx: threeRedis.result.non2xx,
      ratio_postgres_to_disk: pgToDisk,
      ratio_postgres_to_redis: pgToRedis,
      ratio_redis_to_disk: redisToDisk,
      ratio_three_to_one_postgres: threeToOnePg,
      ratio_three_to_one: threeToOneRedis,
      redis_commands_per_event: Number(perEvent.toFixed(1)),
      live_cross_postgres_p50_ms: threePostgres.live.p50,
      live_cross_postgres_p99_ms: threePostgres.live.p99,
      live_cross_postgres_received: threePostgres.live.received,
      live_cross_postgres_accepted: threePostgres.live.accepted,
      live_cross_p50_ms: threeRedis.live.p50,
      live_cross_p99_ms: threeRedis.live.p99,
      live_cross_received: threeRedis.live.received,
      live_cross_accepted: threeRedis.live.accepted,
      postgres_delivery_p50_ms: delivery.p50,
      postgres_delivery_p99_ms: delivery.p99,
      postgres_delivery_missing: delivery.missing,
      external_id_events: lookups.events,
      external_id_fill_s: lookups.fillSeconds,
      external_id_p50_ms: lookups.p50,
      external_id_p95_ms: lookups.p95,
      external_id_sql_p95_ms: lookups.sqlP95,
      external_id_uses_index: lookups.usesIndex ? "yes" : "no",
    };
    for (const [name, cpu] of Object.entries({
      disk: embedded.cpuPercent,
      postgres: onePostgres.cpuPercent,
      redis: oneRedis.cpuPercent,
      three_postgres: threePostgres.cpuPercent,
      three_redis: threeRedis.cpuPercent,
    })) {
      out[`${name}_cpu`] = formatCpu(cpu);
    }
    Object.assign(out, sweepFigures);
    return out;
  } finally {
    await stopAll().catch(() => {});
    stats.disconnect();
    await redis.stop();
    await postgres?.stop();
  }
}
