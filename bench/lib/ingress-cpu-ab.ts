/**
 * Main-thread CPU per accepted webhook of gateway builds, A/B in alternating rounds in the same
 * window (a loaded machine drifts; alternating spreads the drift over both): each round starts
 * each build as `npm run bench -- ingress` starts the gateway (disk store, both schemes), warms it
 * up, loads it for `BENCH_SECONDS` (default 5) with 100 connections and reads the main thread's
 * CPU from /proc (bench/lib/cpu-meter.ts), as the ingress case computes it.
 * `node --import tsx bench/lib/ingress-cpu-ab.ts <name>=<bin>[,ENV=value...] ...`, e.g.
 * `before=/tmp/base/bin/gateway.js after=bin/gateway.js off=bin/gateway.js,GATEWAY_WEBHOOK_FAST_PATH=off`.
 * The gateway logs at `log.level: warn` as in the ingress case (`BENCH_INGRESS_LOG_LEVEL` to change;
 * a build's own `LOG_LEVEL=<level>` pair sets it for that build only, e.g. `info=bin/gateway.js,LOG_LEVEL=info`).
 * `BENCH_ROUNDS` (default 3). `BENCH_CPU_PROF=<dir>` writes a CPU profile of each run.
 * `BENCH_CONNECTIONS` (default 100) and `BENCH_RATE` (requests/s over all connections, default
 * unbounded): on a loaded machine a fixed offered rate below what every build sustains compares
 * CPU per request at equal batching (requests per turn of the event loop), which an unbounded
 * run does not when the builds' throughputs differ.
 */
import { startBenchGateway } from "../cases/ingress.ts";
import { runLoad } from "./autocannon-run.ts";
import { median } from "./checkout-ab.ts";
import { cpuSecondsOf, mainThreadCpuSecondsOf } from "./cpu-meter.ts";
import { createWebhookGenerator } from "./signed-webhooks.ts";

const seconds = Number(process.env.BENCH_SECONDS) || 5;
const rounds = Number(process.env.BENCH_ROUNDS) || 3;
const connections = Number(process.env.BENCH_CONNECTIONS) || 100;
const overallRate = Number(process.env.BENCH_RATE) || undefined;
const builds = process.argv.slice(2).map((arg) => {
  const [name, spec = ""] = arg.split("=", 2) as [string, string?];
  const [bin, ...pairs] = spec.split(",");
  const env = Object.fromEntries(pairs.map((pair) => pair.split("=", 2) as [string, string]));
  return { name, bin: bin as string, env };
});
if (builds.length === 0) throw new Error("usage: ingress-cpu-ab.ts <name>=<bin>[,ENV=value...] ...");

const results = new Map<string, { mainUs: number; processUs: number; rps: number; p99: number }[]>();
for (let round = 1; round <= rounds; round++) {
  for (const build of builds) {
    const previousBin = process.env.BENCH_GATEWAY_BIN;
    process.env.BENCH_GATEWAY_BIN = build.bin;
    const level = build.env.LOG_LEVEL || process.env.BENCH_INGRESS_LOG_LEVEL || "warn";
    const started = await startBenchGateway({ log: { level } }, undefined, build.env);
    if (previousBin === undefined) delete process.env.BENCH_GATEWAY_BIN;
    else process.env.BENCH_GATEWAY_BIN = previousBin;
    try {
      const generate = createWebhookGenerator(started.secrets, `${build.name}${round}`);
      const url = started.gateway.url;
      await runLoad(url, generate, { connections, durationSeconds: 2, overallRate });
      const pid = started.gateway.child.pid as number;
      const main = await mainThreadCpuSecondsOf(pid);
      const all = await cpuSecondsOf(pid);
      const load = await runLoad(url, generate, { connections, durationSeconds: seconds, overallRate });
      const accepted = Math.max(1, load.total - load.non2xx - load.errors);
      const figures = {
        mainUs: Math.round((((await mainThreadCpuSecondsOf(pid)) - main) * 1e6) / accepted),
        processUs: Math.round((((await cpuSecondsOf(pid)) - all) * 1e6) / accepted),
        rps: load.requestsPerSecond,
        p99: load.p99Ms,
      };
      results.set(build.name, [...(results.get(build.name) ?? []), figures]);
      console.log(
        `round ${round} ${build.name.padEnd(10)} main ${figures.mainUs} µs/webhook   process ${figures.processUs} µs   ${figures.rps} req/s   p99 ${figures.p99} ms   non-2xx ${load.non2xx}`,
      );
    } finally {
      await started.cleanup();
    }
  }
}
for (const [name, runs] of results) {
  console.log(
    `${name.padEnd(10)} median main ${median(runs.map((r) => r.mainUs))} µs/webhook   process ${median(runs.map((r) => r.processUs))} µs   ${median(runs.map((r) => r.rps))} req/s   p99 ${median(runs.map((r) => r.p99))} ms`,
  );
}
