/**
 * `npm run bench`: every benchmark case in one run, each measured against its own baseline in
 * the same run (ratios, not absolute numbers). `npm run bench -- ingress proxy` runs a subset;
 * `npm run bench -- scale` (minutes: it fills a million events) runs only when named.
 * Not part of `npm test`. `BENCH_SECONDS=3 npm run bench` shortens each measured run (a smoke
 * run; quote only full-length figures); `BENCH_LIVE_SUBSCRIBERS=200` lowers the live case's
 * WebSocket subscribers (default 2,000) for the same purpose; `BENCH_LIVE_ONLY=idle npm run bench
 * -- live` measures only its idle memory. `npm run bench -- --help` lists the
 * cases; an unknown case or option is refused (exit 64) before anything runs.
 */
import { existsSync } from "node:fs";
import { printTargetSummary, recordedTargets } from "./lib/targets.ts";

type Case = (options: { durationSeconds?: number }) => Promise<Record<string, number | string>>;

const CASES: Record<string, { file: string; exportName: string; about: string }> = {
  ingress: {
    file: "./cases/ingress.ts",
    exportName: "benchIngress",
    about: "signed webhooks in: gateway vs bare node:http, empty h3, Express peer",
  },
  proxy: {
    file: "./cases/proxy.ts",
    exportName: "benchProxy",
    about: "GET through the proxy vs direct to the e-sign fake",
  },
  fanout: { file: "./cases/fanout.ts", exportName: "benchFanout", about: "four destinations out: HTTP, Redis, SMTP" },
  latency: {
    file: "./cases/latency.ts",
    exportName: "benchLatency",
    about: "open-loop delivery latency at 50-1000/s to one HTTP destination, sqlite and Redis stores",
  },
  filters: {
    file: "./cases/filters.ts",
    exportName: "benchFilters",
    about: "a compiled 5-clause filter per event; 50 filtered routes vs 1 route",
  },
  live: {
    file: "./cases/live.ts",
    exportName: "benchLive",
    about: "2,000 WebSocket subscribers vs a bare and a naive ws broadcast",
  },
  hostile: { file: "./cases/hostile.ts", exportName: "benchHostile", about: "CPU per forged or unsigned webhook" },
  burst: {
    file: "./cases/large-burst.ts",
    exportName: "benchLargeBurst",
    about: "200 webhooks of 1 MiB at once into one gateway on sqlite, Redis and PostgreSQL (minutes; only when named)",
  },
  scaleout: {
    file: "./cases/scaleout.ts",
    exportName: "benchScaleout",
    about: "one vs three instances on PostgreSQL and on Redis vs the embedded store; live, delivery, lookups",
  },
  scale: {
    file: "./cases/scale.ts",
    exportName: "benchScale",
    about: "a million events in the sqlite store (minutes; only when named)",
  },
  worker: { file: "./cases/worker.ts", exportName: "benchWorker", about: "Workers bundle size and cold start" },
  tracing: {
    file: "./cases/tracing.ts",
    exportName: "benchTracing",
    about: "CPU per webhook with tracing off vs always_on to a local OTLP receiver",
  },
  transform: {
    file: "./cases/transform.ts",
    exportName: "benchTransform",
    about:
      "CPU per delivery with a trivial transform, in-thread (before) and in the worker pool (after); added latency per call; memory per compiled transform; a hostile top level beside a trivial transform on one worker",
  },
  erase: {
    file: "./cases/erase.ts",
    exportName: "benchErase",
    about: "erasing one subject's 10,000 events out of a million under ingress load (minutes; only when named)",
  },
};

/** Cases that take minutes (the scale case fills a million events) run only when named. */
const ON_REQUEST = new Set(["scale", "erase", "burst"]);
const USAGE = [
  "usage: npm run bench [-- <case>...]   (no case: every one but scale)",
  "",
  "cases:",
  ...Object.entries(CASES).map(([name, spec]) => `  ${name.padEnd(9)} ${spec.about}`),
  "",
  "options: --scale-events=N (the scale case's fill, default 1000000), --erase-events=N (the erase case's)",
  "environment: BENCH_SECONDS=3 (shorter runs, a smoke test), BENCH_LIVE_SUBSCRIBERS=200,",
  "  BENCH_LIVE_IDLE=10000 (the live case's idle count), BENCH_LIVE_ONLY=idle (only its memory figures),",
  "  BENCH_LIVE_ONLY=ws50 with BENCH_LIVE_ROUNDS=3 (only the 50 ev/s WebSocket runs, gateway and bare ws alternating),",
  "  BENCH_GATEWAY_BIN=/other/checkout/bin/gateway.js (a gateway of unchanged code, for an A/B),",
  "  BENCH_LATENCY_RATES=200,800, BENCH_LATENCY_STORES=sqlite and BENCH_LATENCY_CONCURRENCY=4 (the latency case's rates, stores and destination concurrency)",
].join("\n");

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(USAGE);
  process.exit(0);
}
// Checked before anything runs, so a typo costs nothing (exit 64, EX_USAGE).
const OPTIONS = /^--(scale|erase)-events=/;
const unknown = argv.find((arg) => (arg.startsWith("-") ? !OPTIONS.test(arg) : !(arg in CASES)));
if (unknown !== undefined) {
  const what = unknown.startsWith("-") ? `unknown option "${unknown}"` : `unknown bench case "${unknown}"`;
  console.error(`bench: ${what}\n\n${USAGE}`);
  process.exit(64);
}
const wanted = argv.filter((arg) => !arg.startsWith("-"));
const names = wanted.length > 0 ? wanted : Object.keys(CASES).filter((name) => !ON_REQUEST.has(name));
const summary: Record<string, Record<string, number | string>> = {};

for (const name of names) {
  const spec = CASES[name] as (typeof CASES)[string];
  if (!existsSync(new URL(spec.file, import.meta.url))) continue;
  const mod = (await import(spec.file)) as Record<string, Case>;
  const run = mod[spec.exportName];
  if (!run) throw new Error(`${spec.file} does not export ${spec.exportName}`);
  console.log(`\n=== ${name}`);
  summary[name] = await run({ durationSeconds: Number(process.env.BENCH_SECONDS) || undefined });
}

printTargetSummary();
console.log("\n=== summary (JSON)");
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      cores: (await import("node:os")).cpus().length,
      node: process.version,
      results: summary,
      targets: recordedTargets(),
    },
    null,
    2,
  ),
);
process.exit(0);
