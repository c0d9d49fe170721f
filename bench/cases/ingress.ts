/**
 * Ingress benchmark: autocannon, 100 connections, realistic signed webhooks of both schemes with
 * unique ids, against (a) the gateway with the default (sqlite) store, every 202 fdatasync'ed,
 * (b) a bare node:http server that reads the body and answers 202, (c) an empty h3 app, (d) the
 * peer a team would write instead (bench/peers/express-glue.ts: Express 5, both schemes, Redis
 * SET NX + XADD in one Lua script on a redis-server with AOF `appendfsync always`) and (e) the
 * limit, a minimal durable receiver (bench/peers/minimal-durable-receiver.ts: both schemes
 * verified, JSON parsed, SQLite group commit with fsync, nothing else), in the same run, with the
 * CPU of each process during its run and the gateway's main-thread CPU per accepted webhook.
 * Targets: gateway/Express glue >= 2, gateway/bare >= 0.5 (about 0.55 of the minimal receiver),
 * p99 <= 15 ms, main-thread CPU <= 80 µs per accepted webhook. Like for like: every receiver logs
 * nothing per accepted webhook (the gateway at `log.level: warn`, as issue 35 measures it;
 * `BENCH_INGRESS_LOG_LEVEL=info` keeps its per-webhook line), all keep their data on the same temp
 * filesystem, and the run prints that filesystem's fdatasync latency
 * (bench/lib/disk-sync-latency.ts), which moves the rows that wait for a sync per request (the
 * glue's most) between runs. Then the gateway once more, during `gateway backup` of its store:
 * the longest webhook answer while the backup runs (bench/lib/backup-probe.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRedisServer } from "../../test/helpers/redis-server.ts";
import { type LoadFigures, runLoad } from "../lib/autocannon-run.ts";
import { probeDuringBackup } from "../lib/backup-probe.ts";
import { cpuSecondsOf, formatCpu, mainThreadCpuSecondsOf, withCpu } from "../lib/cpu-meter.ts";
import { measureDiskSyncLatency } from "../lib/disk-sync-latency.ts";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { profileFlags, spawnAndWait } from "../lib/spawn-process.ts";
import { checkTarget } from "../lib/targets.ts";

// BENCH_GATEWAY_BIN runs another checkout's gateway (an A/B against unchanged code).
const gatewayBin = () => process.env.BENCH_GATEWAY_BIN || new URL("../../bin/gateway.js", import.meta.url).pathname;
const BARE = new URL("../lib/bare-server.ts", import.meta.url).pathname;
const EMPTY_H3 = new URL("../lib/empty-h3-server.ts", import.meta.url).pathname;
const EXPRESS_GLUE = new URL("../peers/express-glue.ts", import.meta.url).pathname;
const MINIMAL = new URL("../peers/minimal-durable-receiver.ts", import.meta.url).pathname;
const readPort = (line: string) => (line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined);

export interface IngressOptions {
  connections?: number;
  durationSeconds?: number;
}

/**
 * Starts a gateway process on the disk store in a temp dir (unless the config says otherwise);
 * returns it with its secrets. `env`: extra environment of the process.
 */
export async function startBenchGateway(
  extraConfig: Record<string, unknown> = {},
  secrets = { esign: randomBytes(24).toString("hex"), staffing: randomBytes(24).toString("hex") },
  env: Record<string, string> = {},
) {
  const dir = await mkdtemp(join(tmpdir(), "gw-bench-"));
  const config = {
    server: { host: "127.0.0.1", port: 0 },
    store: { driver: "disk", dir: join(dir, "data") },
    sources: [
      { id: "esign", service: "esign", secrets: ["${BENCH_ESIGN_SECRET}"] },
      { id: "staffing", service: "staffing", secrets: ["${BENCH_STAFFING_SECRET}"] },
    ],
    admin: { apiKeyHashes: [`sha256:${createHash("sha256").update("bench-admin").digest("hex")}`] },
    ...extraConfig,
  };
  await writeFile(join(dir, "gateway.json"), JSON.stringify(config));
  const gateway = await spawnAndWait(
    [...profileFlags(), gatewayBin(), "serve", "--config", join(dir, "gateway.json")],
    (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).url : undefined),
    { ...env, BENCH_ESIGN_SECRET: secrets.esign, BENCH_STAFFING_SECRET: secrets.staffing },
  );
  return {
    gateway,
    secrets,
    configPath: join(dir, "gateway.json"),
    dir,
    async cleanup() {
      await gateway.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function row(name: string, f: LoadFigures) {
  return `${name.padEnd(22)} ${String(f.requestsPerSecond).padStart(8)} req/s   p50 ${String(f.p50Ms).padStart(4)} ms   p99 ${String(f.p99Ms).padStart(4)} ms   non-2xx ${f.non2xx}   errors ${f.errors}`;
}

/** Runs the ingress case and returns its figures. */
export async function benchIngress(options: IngressOptions = {}): Promise<Record<string, number | string>> {
  const connections = options.connections ?? 100;
  const durationSeconds = options.durationSeconds ?? 10;
  const load = { connections, durationSeconds };
  const warm = { connections, durationSeconds: 2 };

  const bare = await spawnAndWait(["--import", "tsx", BARE], readPort);
  const emptyH3 = await spawnAndWait(["--import", "tsx", EMPTY_H3], readPort);
  const logLevel = process.env.BENCH_INGRESS_LOG_LEVEL || "warn";
  const { gateway, secrets, cleanup, configPath, dir } = await startBenchGateway({ log: { level: logLevel } });
  const redisDir = await mkdtemp(join(tmpdir(), "gw-bench-redis-"));
  const redis = await startRedisServer({
    args: ["--appendonly", "yes", "--appendfsync", "always", "--dir", redisDir],
  });
  const glue = await spawnAndWait(["--import", "tsx", EXPRESS_GLUE], readPort, {
    PEER_REDIS_URL: redis.url,
    PEER_ESIGN_SECRET: secrets.esign,
    PEER_STAFFING_SECRET: secrets.staffing,
  });
  const minimalDir = await mkdtemp(join(tmpdir(), "gw-bench-minimal-"));
  const minimal = await spawnAndWait(["--import", "tsx", MINIMAL], readPort, {
    PEER_DIR: minimalDir,
    PEER_ESIGN_SECRET: secrets.esign,
    PEER_STAFFING_SECRET: secrets.staffing,
  });
  try {
    const runId = randomBytes(4).toString("hex");
    const generate = createWebhookGenerator(secrets, runId);
    const measure = async (
      target: { url: string; child: { pid?: number } },
      extra: Record<string, number | undefined> = {},
    ) => {
      await runLoad(target.url, generate, warm);
      const pid = target.child.pid as number;
      const mainBefore = await mainThreadCpuSecondsOf(pid);
      const before = await cpuSecondsOf(pid);
      const run = await withCpu({ server: pid, ...extra }, () => runLoad(target.url, generate, load));
      return {
        ...run,
        cpuSeconds: (await cpuSecondsOf(pid)) - before,
        mainCpuSeconds: (await mainThreadCpuSecondsOf(pid)) - mainBefore,
      };
    };
    const syncBefore = await measureDiskSyncLatency();
    const bareRun = await measure(bare);
    const emptyRun = await measure(emptyH3);
    const gatewayRun = await measure(gateway);
    const glueRun = await measure(glue, { "redis-server": redis.pid });
    const minimalRun = await measure(minimal);
    const syncAfter = await measureDiskSyncLatency();
    // The gateway again, during `gateway backup` of its store (now holding the runs' events).
    const backupRun = await probeDuringBackup(gateway.url, configPath, dir, generate, connections);
    const bareFigures = bareRun.result;
    const emptyFigures = emptyRun.result;
    const gatewayFigures = gatewayRun.result;
    const glueFigures = glueRun.result;
    const minimalFigures = minimalRun.result;
    const accepted = Math.max(1, gatewayFigures.total - gatewayFigures.non2xx - gatewayFigures.errors);
    const mainUsPerWebhook = Math.round((gatewayRun.mainCpuSeconds * 1e6) / accepted);
    const processUsPerWebhook = Math.round((gatewayRun.cpuSeconds * 1e6) / accepted);
    const rssMb = Math.round((await gateway.rss()) / 1024 / 1024);
    const ratioOf = (a: LoadFigures, b: LoadFigures) =>
      Math.round((a.requestsPerSecond / b.requestsPerSecond) * 100) / 100;
    const ratio = ratioOf(gatewayFigures, bareFigures);
    const ratioEmpty = ratioOf(gatewayFigures, emptyFigures);
    const ratioGlue = ratioOf(gatewayFigures, glueFigures);
    const ratioMinimal = ratioOf(gatewayFigures, minimalFigures);
    console.log(
      `\ningress: ${connections} connections, ${durationSeconds} s each, signed webhooks (esign + staffing), unique ids, gateway log.level ${logLevel}`,
    );
    console.log(
      `temp filesystem fdatasync (4 KiB): p50 ${syncBefore.p50Ms} / p90 ${syncBefore.p90Ms} ms before the runs, ${syncAfter.p50Ms} / ${syncAfter.p90Ms} ms after`,
    );
    console.log(`${row("bare node:http", bareFigures)}   cpu: ${formatCpu(bareRun.cpuPercent)}`);
    console.log(`${row("empty h3 app", emptyFigures)}   cpu: ${formatCpu(emptyRun.cpuPercent)}`);
    console.log(`${row("gateway (default store)", gatewayFigures)}   cpu: ${formatCpu(gatewayRun.cpuPercent)}`);
    console.log(`${row("Express glue + Redis", glueFigures)}   cpu: ${formatCpu(glueRun.cpuPercent)}`);
    console.log(`${row("minimal durable (limit)", minimalFigures)}   cpu: ${formatCpu(minimalRun.cpuPercent)}`);
    console.log(
      `gateway RSS ${rssMb} MB   gateway/empty h3 ${ratioEmpty}   gateway CPU ${processUsPerWebhook} µs per accepted webhook (all threads)`,
    );
    console.log(
      `during gateway backup (${backupRun.backup_kib} KiB in ${backupRun.backup_ms} ms, ${connections} connections of load${backupRun.loaded_throughout ? "" : ", load ended before the backup"}): longest webhook answer ${backupRun.longest_answer_during_backup_ms} ms (${backupRun.probes_during_backup} probes, ${backupRun.backup_non2xx} not 202); longest in the 3 s before it ${backupRun.longest_answer_before_backup_ms} ms`,
    );
    checkTarget("ingress", "gateway / Express glue + Redis (AOF always)", ratioGlue, ">=", 2);
    checkTarget("ingress", "gateway / bare node:http", ratio, ">=", 0.5);
    checkTarget("ingress", "gateway / minimal durable receiver (limit row)", ratioMinimal, ">=", 0.55);
    checkTarget("ingress", "gateway p99 at 100 connections", gatewayFigures.p99Ms, "<=", 15, " ms");
    checkTarget("ingress", "gateway main-thread CPU per accepted webhook", mainUsPerWebhook, "<=", 80, " µs");
    checkTarget(
      "ingress",
      "gateway main-thread CPU per accepted webhook (issue 35)",
      mainUsPerWebhook,
      "<=",
      120,
      " µs",
    );
    checkTarget(
      "ingress",
      "gateway p99 at 100 connections, vs the glue's",
      gatewayFigures.p99Ms,
      "<=",
      glueFigures.p99Ms,
      " ms",
    );
    return {
      bare_rps: bareFigures.requestsPerSecond,
      bare_p50_ms: bareFigures.p50Ms,
      bare_p99_ms: bareFigures.p99Ms,
      gateway_rps: gatewayFigures.requestsPerSecond,
      gateway_p50_ms: gatewayFigures.p50Ms,
      gateway_p99_ms: gatewayFigures.p99Ms,
      gateway_non2xx: gatewayFigures.non2xx,
      gateway_cpu_pct: gatewayRun.cpuPercent.server ?? 0,
      loadgen_cpu_pct_gateway_run: gatewayRun.cpuPercent["load generator"] ?? 0,
      empty_h3_rps: emptyFigures.requestsPerSecond,
      express_glue_rps: glueFigures.requestsPerSecond,
      express_glue_p99_ms: glueFigures.p99Ms,
      express_glue_non2xx: glueFigures.non2xx,
      ratio,
      ratio_to_empty_h3: ratioEmpty,
      ratio_to_express_glue: ratioGlue,
      minimal_durable_rps: minimalFigures.requestsPerSecond,
      minimal_durable_p99_ms: minimalFigures.p99Ms,
      ratio_to_minimal_durable: ratioMinimal,
      gateway_main_thread_us_per_webhook: mainUsPerWebhook,
      gateway_process_us_per_webhook: processUsPerWebhook,
      disk_sync_p50_ms_before: syncBefore.p50Ms,
      disk_sync_p50_ms_after: syncAfter.p50Ms,
      ...backupRun,
    };
  } finally {
    await bare.stop();
    await emptyH3.stop();
    await glue.stop();
    await minimal.stop();
    await rm(minimalDir, { recursive: true, force: true });
    await redis.stop();
    await rm(redisDir, { recursive: true, force: true });
    await cleanup();
  }
}
