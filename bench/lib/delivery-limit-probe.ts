/**
 * What limits "delivered / ingress only" (`npm run bench -- latency`, the closed-loop phase): runs
 * the same closed load (32 in flight, signed e-sign webhooks) against a gateway without routes and
 * a gateway routing every event to one `http` destination (its own process, as the latency case
 * runs it), on the sqlite or the Redis store, and prints for each run where the two cores went:
 * the machine (/proc/stat), the gateway per thread (/proc/<pid>/task/<tid>: main, the SQLite
 * writer, libuv, V8), the destination, the load generator, redis-server; CPU per event summed over
 * them; accepted/s while sending, the mean 202 latency (Little's law: in flight / rate), and how
 * long deliveries took to drain after the last 202. With `BENCH_STRACE=1` a second run of each
 * counts the gateway's fdatasync and pwrite64 per event (`strace -c -f`, a separate run: tracing
 * slows the process); on Redis the commands per event come from `INFO commandstats`.
 * `BENCH_DELIVERY_TRACE=<file>` has the delivered run's gateway write its
 * per-stage timings there (GATEWAY_DELIVERY_TRACE, src/delivery/stage-trace.ts).
 *
 *   node --import tsx bench/lib/delivery-limit-probe.ts      (BENCH_STORE=sqlite|redis, BENCH_SECONDS=5)
 *   BENCH_GATEWAY_BIN=<other checkout>/bin/gateway.js measures another build.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startRedisServer } from "../../test/helpers/redis-server.ts";
import { awaitReceipts, drive } from "../cases/fanout.ts";
import { startBenchGateway } from "../cases/ingress.ts";
import { esignWebhooks, receiver } from "../cases/latency.ts";
import { cpuSecondsOf } from "./cpu-meter.ts";

const seconds = Number(process.env.BENCH_SECONDS) || 5;
const store = process.env.BENCH_STORE ?? "sqlite";
const IN_FLIGHT = 32;

/** CPU seconds so far of each thread of `pid`, keyed `name` (main) or `name#n` (n-th thread of that name). */
async function threadSeconds(pid: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const tids = (await readdir(`/proc/${pid}/task`).catch(() => [] as string[])).sort((a, b) => Number(a) - Number(b));
  const seen = new Map<string, number>();
  for (const tid of tids) {
    const name = (await readFile(`/proc/${pid}/task/${tid}/comm`, "utf8").catch(() => "?")).trim();
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8").catch(() => "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const n = (seen.get(name) ?? 0) + 1;
    seen.set(name, n);
    const key = tid === String(pid) ? "main" : name === "node" ? `node#${n - 1}` : name.replace(/\s+/g, "_");
    out.set(key, (out.get(key) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
  }
  return out;
}

async function machineTicks(): Promise<{ busy: number; total: number }> {
  const fields = (await readFile("/proc/stat", "utf8")).split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = fields.reduce((a, b) => a + b, 0);
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

async function commandStats(client: Redis | undefined): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  if (!client) return out;
  for (const line of (await client.info("commandstats")).split("\r\n")) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (m) out.set(m[1] as string, Number(m[2]));
  }
  return out;
}

async function straced<T>(
  pid: number,
  during: () => Promise<T>,
): Promise<{ result: T; counts: Record<string, number> }> {
  const out = join(await mkdtemp(join(tmpdir(), "gw-strace-")), "counts.txt");
  const tracer = spawn(
    "strace",
    ["-c", "-f", "--seccomp-bpf", "-e", "trace=fdatasync,fsync,pwrite64", "-o", out, "-p", String(pid)],
    { stdio: "ignore" },
  );
  await new Promise((resolve) => setTimeout(resolve, 500)); // strace attaches (bench tool, not a test)
  const result = await during();
  tracer.kill("SIGINT");
  await new Promise((resolve) => tracer.once("exit", resolve));
  const counts: Record<string, number> = {};
  for (const line of (await readFile(out, "utf8")).split("\n")) {
    const cols = line.trim().split(/\s+/);
    const name = cols.at(-1);
    if (name && /^(fsync|fdatasync|pwrite64)$/.test(name)) counts[name] = Number(cols[3]);
  }
  return { result, counts };
}

async function run(
  withDestination: boolean,
  storeConfig: Record<string, unknown> | undefined,
  redis?: Redis,
  redisPid?: number,
  trace = false,
) {
  const sink = withDestination ? await receiver() : undefined;
  const started = await startBenchGateway(
    {
      log: { level: "warn" },
      ...(storeConfig ? { store: storeConfig } : {}),
      ...(sink ? { destinations: [sink.config], routes: [{ destinations: [sink.id] }] } : {}),
    },
    undefined,
    sink && process.env.BENCH_DELIVERY_TRACE ? { GATEWAY_DELIVERY_TRACE: process.env.BENCH_DELIVERY_TRACE } : {},
  );
  try {
    const next = esignWebhooks(started.secrets.esign, randomBytes(4).toString("hex"));
    const url = started.gateway.url;
    const warm = await drive(url, next, { seconds: 2, concurrency: IN_FLIGHT });
    if (sink) await awaitReceipts([sink as never], warm.accepted.keys(), 300_000);
    const pid = started.gateway.child.pid as number;
    const measure = async () => {
      const threadsBefore = await threadSeconds(pid);
      const destinationBefore = sink ? await cpuSecondsOf(sink.pid) : 0;
      const redisBefore = redisPid ? await cpuSecondsOf(redisPid) : 0;
      const commandsBefore = await commandStats(redis);
      const driver = process.cpuUsage();
      const machine = await machineTicks();
      const t0 = performance.now();
      const load = await drive(url, next, { seconds, concurrency: IN_FLIGHT });
      const last = sink ? await awaitReceipts([sink as never], load.accepted.keys(), 300_000) : load.ended;
      const wall = (performance.now() - t0) / 1000;
      const machineAfter = await machineTicks();
      const driverUsed = process.cpuUsage(driver);
      const threadsAfter = await threadSeconds(pid);
      const events = Math.max(1, load.accepted.size);
      const us = (cpu: number) => Math.round((cpu * 1e6) / events);
      const threads = [...threadsAfter]
        .map(([name, after]) => [name, after - (threadsBefore.get(name) ?? 0)] as const)
        .filter(([, used]) => used > 0)
        .sort((a, b) => b[1] - a[1]);
      const gateway = threads.reduce((a, [, used]) => a + used, 0);
      const destination = sink ? (await cpuSecondsOf(sink.pid)) - destinationBefore : 0;
      const redisCpu = redisPid ? (await cpuSecondsOf(redisPid)) - redisBefore : 0;
      const generator = (driverUsed.user + driverUsed.system) / 1e6;
      const commandsAfter = await commandStats(redis);
      const commands = [...commandsAfter]
        .map(([name, calls]) => [name, calls - (commandsBefore.get(name) ?? 0)] as const)
        .filter(([, calls]) => calls > 0)
        .map(([name, calls]) => `${name} ${(calls / events).toFixed(2)}`)
        .join(", ");
      const sending = (load.ended - load.started) / 1000;
      return {
        events,
        accepted: Math.round(events / sending),
        delivered: Math.round(events / ((last - load.started) / 1000)),
        meanAckMs: Math.round(((IN_FLIGHT * sending) / events) * 1000 * 100) / 100,
        drainMs: Math.round(last - load.ended),
        machineBusy: Math.round(((machineAfter.busy - machine.busy) / (machineAfter.total - machine.total)) * 200),
        cpu: `gateway ${Math.round((gateway / wall) * 100)}%, destination ${Math.round((destination / wall) * 100)}%, load generator ${Math.round((generator / wall) * 100)}%${redisPid ? `, redis-server ${Math.round((redisCpu / wall) * 100)}%` : ""}`,
        perEvent: `gateway ${us(gateway)} (${threads.map(([n, u]) => `${n} ${us(u)}`).join(", ")}), destination ${us(destination)}, load generator ${us(generator)}${redisPid ? `, redis-server ${us(redisCpu)}` : ""}; all ${us(gateway + destination + generator + redisCpu)}`,
        commands,
      };
    };
    const figures = await measure();
    const label = withDestination ? "with one http destination" : "ingress only";
    console.log(
      `${store} ${label}: ${figures.events} events, accepted ${figures.accepted}/s, delivered ${sink ? `${figures.delivered}/s (drain ${figures.drainMs} ms after the last 202)` : "-"}, mean 202 ${figures.meanAckMs} ms; machine busy ${figures.machineBusy}% of 200%`,
    );
    console.log(`  cores: ${figures.cpu}`);
    console.log(`  CPU µs per event: ${figures.perEvent}`);
    if (figures.commands) console.log(`  redis commands per event: ${figures.commands}`);
    if (trace && store === "sqlite") {
      const { result, counts } = await straced(pid, async () => {
        const load = await drive(url, next, { seconds, concurrency: IN_FLIGHT });
        if (sink) await awaitReceipts([sink as never], load.accepted.keys(), 300_000);
        return load.accepted.size;
      });
      const per = Object.entries(counts).map(([k, v]) => `${k} ${(v / Math.max(1, result)).toFixed(3)}`);
      console.log(`  strace (separate run, ${result} events): ${JSON.stringify(counts)}; per event ${per.join(", ")}`);
    }
    return figures;
  } finally {
    await started.cleanup();
    await sink?.close();
  }
}

let redisServer: Awaited<ReturnType<typeof startRedisServer>> | undefined;
let client: Redis | undefined;
let storeConfig: Record<string, unknown> | undefined;
if (store === "redis") {
  redisServer = await startRedisServer();
  client = new Redis(redisServer.url);
  storeConfig = { driver: "redis", url: redisServer.url, prefix: `gwprobe-${randomBytes(4).toString("hex")}` };
}
try {
  const trace = process.env.BENCH_STRACE === "1";
  const rounds = Number(process.env.BENCH_ROUNDS) || 1;
  for (let round = 0; round < rounds; round++) {
    const only = await run(false, storeConfig, client, redisServer?.pid, trace);
    const delivered = await run(true, storeConfig, client, redisServer?.pid, trace);
    console.log(`=> delivered / ingress only ${(delivered.delivered / only.accepted).toFixed(2)}\n`);
  }
} finally {
  await client?.quit();
  await redisServer?.stop();
}
process.exit(0);
