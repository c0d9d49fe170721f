/**
 * Workers benchmark (`npm run bench -- worker`): the deployable bundle as `wrangler deploy
 * --dry-run --outdir` builds it (offline), its size raw and gzip (target < 1 MiB gzip, the
 * Workers free-plan limit is 3 MiB and the paid one 10 MiB), and the cold start of that bundle in
 * Miniflare: from `new Miniflare` to the first answered signed webhook (a fresh runtime and fresh
 * Durable Objects each time; median of a few runs), and the CPU time per accepted webhook inside
 * workerd (Workers bills CPU time): the workerd process's CPU from /proc over a few hundred signed
 * webhooks of both schemes after a warm-up, divided by the webhooks (workerd's own HTTP and
 * storage work included, so an upper bound of what the isolate is billed). No `wrangler dev`
 * throughput is measured.
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { esignDelivery, staffingDelivery } from "../../test/helpers/signed-requests.ts";
import { buildWorkerBundle, startWorkerBundle } from "../../test/helpers/worker-bundle.ts";
import { cpuSecondsOf } from "../lib/cpu-meter.ts";
import { checkTarget } from "../lib/targets.ts";

const SECRET = "bench_worker_esign_secret_0123456789";
const MIB = 1024 * 1024;

export interface WorkerBenchOptions {
  /** Cold starts measured. Default 5. */
  starts?: number;
}

/** The workerd processes started by this process (Miniflare's runtime), by pid. */
async function workerdPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, "utf8").catch(() => "");
    const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (comm.startsWith("workerd") && ppid === process.pid) pids.push(Number(name));
  }
  return pids;
}

/** CPU µs of workerd per accepted signed webhook (both schemes alternating, 8 in flight). */
async function workerdCpuPerWebhook(scriptPath: string, persistDir: string, webhooks: number): Promise<number> {
  const miniflare = await startWorkerBundle({
    scriptPath,
    persistDir,
    bindings: { ESIGN_WEBHOOK_SECRET: SECRET, STAFFING_WEBHOOK_SECRET: SECRET, GATEWAY_LOG_LEVEL: "silent" },
  });
  try {
    const post = async (n: number) => {
      const staffing = n % 2 === 1;
      const delivery = staffing ? await staffingDelivery(SECRET) : await esignDelivery(SECRET);
      const response = await miniflare.dispatchFetch(
        `http://gateway.test/webhooks/${staffing ? "staffing" : "esign"}`,
        {
          method: "POST",
          headers: delivery.headers,
          body: delivery.body,
        },
      );
      await response.arrayBuffer();
      return response.status === 202 ? 1 : 0;
    };
    const run = async (count: number) => {
      let accepted = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          // Not `accepted += await post()`: that reads `accepted` before the await and loses the
          // other workers' counts (it divided the CPU by about an eighth of the webhooks).
          while (next < count) {
            const ok = await post(next++);
            accepted += ok;
          }
        }),
      );
      return accepted;
    };
    await run(100);
    const pids = await workerdPids();
    const cpu = async () => (await Promise.all(pids.map(cpuSecondsOf))).reduce((a, b) => a + b, 0);
    const before = await cpu();
    const accepted = await run(webhooks);
    return Math.round((((await cpu()) - before) * 1e6) / Math.max(1, accepted));
  } finally {
    await miniflare.dispose();
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

export async function benchWorker(options: WorkerBenchOptions = {}): Promise<Record<string, number | string>> {
  const dir = await mkdtemp(join(tmpdir(), "gateway-bench-worker-"));
  try {
    const outdir = join(dir, "dist");
    const buildStarted = performance.now();
    const scriptPath = await buildWorkerBundle(outdir);
    const buildMs = performance.now() - buildStarted;
    let raw = 0;
    let gzip = 0;
    for (const name of await readdir(outdir)) {
      if (name.endsWith(".map")) continue;
      const file = join(outdir, name);
      if (!(await stat(file)).isFile()) continue;
      const bytes = await readFile(file);
      raw += bytes.byteLength;
      gzip += gzipSync(bytes, { level: 9 }).byteLength;
    }
    const starts: number[] = [];
    const firstAnswers: number[] = [];
    const afterReady: number[] = [];
    for (let i = 0; i < (options.starts ?? 5); i++) {
      const delivery = await esignDelivery(SECRET);
      const started = performance.now();
      const miniflare = await startWorkerBundle({
        scriptPath,
        persistDir: join(dir, `state-${i}`),
        bindings: { ESIGN_WEBHOOK_SECRET: SECRET, STAFFING_WEBHOOK_SECRET: SECRET, GATEWAY_LOG_LEVEL: "silent" },
      });
      const ready = performance.now();
      const response = await miniflare.dispatchFetch("http://gateway.test/webhooks/esign", {
        method: "POST",
        headers: delivery.headers,
        body: delivery.body,
      });
      const answered = performance.now();
      if (response.status !== 202) throw new Error(`cold start webhook answered ${response.status}`);
      await miniflare.dispose();
      starts.push(ready - started);
      firstAnswers.push(answered - started);
      afterReady.push(answered - ready);
    }
    const figures = {
      bundle_raw_kib: Math.round(raw / 102.4) / 10,
      bundle_gzip_kib: Math.round(gzip / 102.4) / 10,
      bundle_gzip_under_1mib: gzip < MIB ? "yes" : "no",
      build_ms: Math.round(buildMs),
      miniflare_start_ms_median: Math.round(median(starts)),
      cold_first_webhook_ms_median: Math.round(median(firstAnswers)),
      // Script evaluation, gateway build, first Durable Object and the append: the Worker's own share.
      first_webhook_after_ready_ms_median: Math.round(median(afterReady)),
      cold_starts_measured: starts.length,
      workerd_cpu_us_per_webhook: await workerdCpuPerWebhook(scriptPath, join(dir, "state-cpu"), 400),
    };
    console.log(
      `bundle ${figures.bundle_raw_kib} KiB raw, ${figures.bundle_gzip_kib} KiB gzip (target < 1024 KiB)\n` +
        `cold start in Miniflare: runtime ready ${figures.miniflare_start_ms_median} ms, first 202 ${figures.cold_first_webhook_ms_median} ms, of which after ready ${figures.first_webhook_after_ready_ms_median} ms (median of ${starts.length})`,
    );
    checkTarget("worker", "bundle gzip", figures.bundle_gzip_kib, "<=", 1024, " KiB");
    checkTarget(
      "worker",
      "workerd CPU per accepted webhook (all of workerd)",
      figures.workerd_cpu_us_per_webhook,
      "report",
      undefined,
      " µs",
    );
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
