/**
 * Main-thread CPU per delivery of gateway builds, A/B in alternating rounds in the same window
 * (a loaded machine drifts; alternating spreads the drift over both builds). Each round starts,
 * per build, a gateway without routes (ingress only) and a gateway routing every event to one
 * `http` destination with default settings (the destination in its own process, as
 * `npm run bench -- latency` runs it), offers each the same load of signed e-sign webhooks (closed loop, or a fixed rate) for
 * `BENCH_SECONDS` (default 5), waits until the destination has every accepted event, and reads the
 * gateway's main-thread CPU from /proc (bench/lib/cpu-meter.ts). CPU per delivery = main-thread
 * µs per event with the destination minus without: per event it is comparable between builds
 * where req/s on a busy machine is not.
 *
 *   node --import tsx bench/lib/delivery-cpu-ab.ts <name>=<bin>[,ENV=value...] ...
 *   e.g. before=/tmp/base/bin/gateway.js after=bin/gateway.js
 *
 * `BENCH_ROUNDS` (default 3), `BENCH_RATE` (events/s; default none: closed loop, 32 in flight), `BENCH_CPU_PROF=<dir>` writes a
 * CPU profile of each gateway (read it with bench/lib/profile-top.ts).
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { awaitReceipts, drive } from "../cases/fanout.ts";
import { startBenchGateway } from "../cases/ingress.ts";
import { esignWebhooks, receiver } from "../cases/latency.ts";
import { median } from "./checkout-ab.ts";
import { cpuSecondsOf, mainThreadCpuSecondsOf } from "./cpu-meter.ts";

/** CPU seconds so far of each thread of process `pid`, by thread name (/proc/<pid>/task/<tid>/{comm,stat}). */
async function threadSeconds(pid: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const tid of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const name = (await readFile(`/proc/${pid}/task/${tid}/comm`, "utf8").catch(() => "?")).trim();
    const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8").catch(() => "");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const key = tid === String(pid) ? "main" : name;
    out.set(key, (out.get(key) ?? 0) + (Number(fields[11]) + Number(fields[12])) / 100);
  }
  return out;
}

/** Busy and total jiffies of the whole machine so far (/proc/stat's first line). */
async function machineTicks(): Promise<{ busy: number; total: number }> {
  const fields = (await readFile("/proc/stat", "utf8")).split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

const seconds = Number(process.env.BENCH_SECONDS) || 5;
const rounds = Number(process.env.BENCH_ROUNDS) || 3;
/** Events/s offered; unset or 0: closed loop with 32 in flight (as the latency case's ratio phase). */
const rate = Number(process.env.BENCH_RATE) || undefined;
const load = { concurrency: rate ? 64 : 32, rate };
const builds = process.argv.slice(2).map((arg) => {
  const [name, spec = ""] = arg.split("=", 2) as [string, string?];
  const [bin, ...pairs] = spec.split(",");
  const env = Object.fromEntries(pairs.map((pair) => pair.split("=", 2) as [string, string]));
  return { name, bin: bin as string, env };
});
if (builds.length === 0) throw new Error("usage: delivery-cpu-ab.ts <name>=<bin>[,ENV=value...] ...");

/** Main-thread and process µs per accepted event of one gateway at `rate`, until delivered when it has a destination. */
async function measure(
  build: (typeof builds)[number],
  label: string,
  withDestination: boolean,
): Promise<{ mainUs: number; processUs: number; events: number; perSecond: number; cores: string }> {
  const sink = withDestination ? await receiver() : undefined;
  const previousBin = process.env.BENCH_GATEWAY_BIN;
  process.env.BENCH_GATEWAY_BIN = build.bin;
  const started = await startBenchGateway(
    {
      log: { level: "warn" },
      ...(sink ? { destinations: [sink.config], routes: [{ destinations: [sink.id] }] } : {}),
    },
    undefined,
    build.env,
  ).finally(() => {
    if (previousBin === undefined) delete process.env.BENCH_GATEWAY_BIN;
    else process.env.BENCH_GATEWAY_BIN = previousBin;
  });
  try {
    const next = esignWebhooks(started.secrets.esign, `${label}-${randomBytes(4).toString("hex")}`);
    const url = started.gateway.url;
    const warm = await drive(url, next, { seconds: 2, ...load });
    if (sink) await awaitReceipts([sink], warm.accepted.keys(), 300_000);
    const pid = started.gateway.child.pid as number;
    const main = await mainThreadCpuSecondsOf(pid);
    const all = await cpuSecondsOf(pid);
    const destination = sink ? await cpuSecondsOf(sink.pid) : 0;
    const driver = process.cpuUsage();
    const machine = await machineTicks();
    const threadsBefore = await threadSeconds(pid);
    const wallStart = performance.now();
    const run = await drive(url, next, { seconds, ...load });
    // As the latency case counts: accepted/s alone, delivered/s (until the last receipt) with the destination.
    const last = sink ? await awaitReceipts([sink], run.accepted.keys(), 300_000) : run.ended;
    const events = Math.max(1, run.accepted.size);
    const perSecond = Math.round(events / ((last - run.started) / 1000));
    // Where the two cores went during the run: the gateway, the load generator, the destination, the rest of the machine.
    const wall = (performance.now() - wallStart) / 1000;
    const machineAfter = await machineTicks();
    const driverUsed = process.cpuUsage(driver);
    const share = (cpu: number) => `${Math.round((cpu / wall) * 100)}%`;
    // The gateway's threads by name (main, the SQLite writer, the send thread, V8 and libuv helpers), busiest first.
    const threadsAfter = await threadSeconds(pid);
    const threads = [...threadsAfter]
      .map(([name, after]) => [name, after - (threadsBefore.get(name) ?? 0)] as const)
      .filter(([, used]) => used > 0)
      .sort((a, b) => b[1] - a[1])
      .map(([name, used]) => `${name} ${Math.round((used * 1e6) / Math.max(1, run.accepted.size))}`)
      .join(", ");
    const cores =
      `gateway ${share((await cpuSecondsOf(pid)) - all)} (main ${share((await mainThreadCpuSecondsOf(pid)) - main)}), ` +
      `load generator ${share((driverUsed.user + driverUsed.system) / 1e6)}, ` +
      `destination ${sink ? share((await cpuSecondsOf(sink.pid)) - destination) : "-"}, ` +
      `machine busy ${Math.round(((machineAfter.busy - machine.busy) / (machineAfter.total - machine.total)) * 100)}% of 2 cores; ` +
      `gateway threads, µs per event: ${threads}`;
    return {
      perSecond,
      cores,
      mainUs: Math.round((((await mainThreadCpuSecondsOf(pid)) - main) * 1e6) / events),
      processUs: Math.round((((await cpuSecondsOf(pid)) - all) * 1e6) / events),
      events,
    };
  } finally {
    await started.cleanup();
    await sink?.close();
  }
}

const results = new Map<string, { delivery: number; only: number; withDestination: number; ratio: number }[]>();
for (let round = 1; round <= rounds; round++) {
  for (const build of builds) {
    const only = await measure(build, `${build.name}${round}o`, false);
    const withDestination = await measure(build, `${build.name}${round}d`, true);
    const figures = {
      only: only.mainUs,
      withDestination: withDestination.mainUs,
      delivery: withDestination.mainUs - only.mainUs,
      ratio: withDestination.perSecond / only.perSecond,
    };
    results.set(build.name, [...(results.get(build.name) ?? []), figures]);
    console.log(
      `round ${round} ${build.name.padEnd(10)} ${rate ? `at ${rate}/s` : "closed loop"}: main thread ${only.mainUs} µs/event ingress only, ` +
        `${withDestination.mainUs} with one http destination (${withDestination.events} delivered) ` +
        `=> ${figures.delivery} µs per delivery (${(withDestination.mainUs / only.mainUs).toFixed(2)}x); ` +
        `process ${only.processUs} / ${withDestination.processUs} µs`,
    );
    console.log(
      `  ingress only ${only.perSecond}/s, delivered ${withDestination.perSecond}/s: delivered / ingress only ${figures.ratio.toFixed(2)}`,
    );
    console.log(`  cores, ingress only: ${only.cores}\n  cores, with the destination: ${withDestination.cores}`);
  }
}
for (const [name, runs] of results) {
  console.log(
    `${name.padEnd(10)} median main thread: ingress only ${median(runs.map((r) => r.only))} µs/event, with the destination ` +
      `${median(runs.map((r) => r.withDestination))}, per delivery ${median(runs.map((r) => r.delivery))} µs; ` +
      `delivered / ingress only ${median(runs.map((r) => r.ratio)).toFixed(2)}`,
  );
}
process.exit(0);
