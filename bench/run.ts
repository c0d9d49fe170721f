/**
 * `npm run bench`: every benchmark case in one run, each measured against its own baseline in
 * the same run (ratios, not absolute numbers). `npm run bench -- ingress proxy` runs a subset;
 * `npm run bench -- scale` (minutes: it fills a million events) runs only when named.
 * Not part of `npm test`. `BENCH_SECONDS=3 npm run bench` shortens each measured run (a smoke
 * run; quote only full-length figures); `BENCH_LIVE_SUBSCRIBERS=200` lowers the live case's
 * WebSocket subscribers (default 2,000) for the same purpose.
 */
import { existsSync } from "node:fs";

type Case = (options: { durationSeconds?: number }) => Promise<Record<string, number | string>>;

const CASES: Record<string, { file: string; exportName: string }> = {
  ingress: { file: "./cases/ingress.ts", exportName: "benchIngress" },
  proxy: { file: "./cases/proxy.ts", exportName: "benchProxy" },
  fanout: { file: "./cases/fanout.ts", exportName: "benchFanout" },
  live: { file: "./cases/live.ts", exportName: "benchLive" },
  hostile: { file: "./cases/hostile.ts", exportName: "benchHostile" },
  scaleout: { file: "./cases/scaleout.ts", exportName: "benchScaleout" },
  scale: { file: "./cases/scale.ts", exportName: "benchScale" },
  worker: { file: "./cases/worker.ts", exportName: "benchWorker" },
  tracing: { file: "./cases/tracing.ts", exportName: "benchTracing" },
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"));
/** Cases that take minutes (the scale case fills a million events) run only when named. */
const ON_REQUEST = new Set(["scale"]);
const names = wanted.length > 0 ? wanted : Object.keys(CASES).filter((name) => !ON_REQUEST.has(name));
const summary: Record<string, Record<string, number | string>> = {};

for (const name of names) {
  const spec = CASES[name];
  if (!spec) throw new Error(`unknown bench case "${name}"; one of ${Object.keys(CASES).join(", ")}`);
  if (!existsSync(new URL(spec.file, import.meta.url))) continue;
  const mod = (await import(spec.file)) as Record<string, Case>;
  const run = mod[spec.exportName];
  if (!run) throw new Error(`${spec.file} does not export ${spec.exportName}`);
  console.log(`\n=== ${name}`);
  summary[name] = await run({ durationSeconds: Number(process.env.BENCH_SECONDS) || undefined });
}

console.log("\n=== summary (JSON)");
console.log(
  JSON.stringify(
    {
      date: new Date().toISOString(),
      cores: (await import("node:os")).cpus().length,
      node: process.version,
      results: summary,
    },
    null,
    2,
  ),
);
process.exit(0);
