/**
 * Workers benchmark (`npm run bench -- worker`): the deployable bundle as `wrangler deploy
 * --dry-run --outdir` builds it (offline), its size raw and gzip (target < 1 MiB gzip, the
 * Workers free-plan limit is 3 MiB and the paid one 10 MiB), and the cold start of that bundle in
 * Miniflare: from `new Miniflare` to the first answered signed webhook (a fresh runtime and fresh
 * Durable Objects each time; median of a few runs). No `wrangler dev` throughput is measured.
 */
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { esignDelivery } from "../../test/helpers/signed-requests.ts";
import { buildWorkerBundle, startWorkerBundle } from "../../test/helpers/worker-bundle.ts";

const SECRET = "bench_worker_esign_secret_0123456789";
const MIB = 1024 * 1024;

export interface WorkerBenchOptions {
  /** Cold starts measured. Default 5. */
  starts?: number;
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
    };
    console.log(
      `bundle ${figures.bundle_raw_kib} KiB raw, ${figures.bundle_gzip_kib} KiB gzip (target < 1024 KiB)\n` +
        `cold start in Miniflare: runtime ready ${figures.miniflare_start_ms_median} ms, first 202 ${figures.cold_first_webhook_ms_median} ms, of which after ready ${figures.first_webhook_after_ready_ms_median} ms (median of ${starts.length})`,
    );
    return figures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
