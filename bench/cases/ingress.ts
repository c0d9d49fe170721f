/**
 * Ingress benchmark: autocannon, 100 connections, realistic signed webhooks of both schemes with
 * unique ids, against (a) the gateway with the disk store (every 202 fdatasync'ed) and (b) a bare
 * node:http server that reads the body and answers 202, in the same run.
 * Targets: throughput ratio gateway/bare >= 0.75, gateway p99 <= 20 ms.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadFigures, runLoad } from "../lib/autocannon-run.ts";
import { createWebhookGenerator } from "../lib/signed-webhooks.ts";
import { spawnAndWait } from "../lib/spawn-process.ts";

const BIN = new URL("../../bin/gateway.js", import.meta.url).pathname;
const BARE = new URL("../lib/bare-server.ts", import.meta.url).pathname;
const EMPTY_H3 = new URL("../lib/empty-h3-server.ts", import.meta.url).pathname;

export interface IngressOptions {
  connections?: number;
  durationSeconds?: number;
}

/** Starts a gateway process on the disk store in a temp dir (unless the config says otherwise); returns it with its secrets. */
export async function startBenchGateway(
  extraConfig: Record<string, unknown> = {},
  secrets = { esign: randomBytes(24).toString("hex"), staffing: randomBytes(24).toString("hex") },
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
    [BIN, "serve", "--config", join(dir, "gateway.json")],
    (line) => (line.includes('"msg":"listening"') ? JSON.parse(line).url : undefined),
    { BENCH_ESIGN_SECRET: secrets.esign, BENCH_STAFFING_SECRET: secrets.staffing },
  );
  return {
    gateway,
    secrets,
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

  const bare = await spawnAndWait(["--import", "tsx", BARE], (line) =>
    line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined,
  );
  const emptyH3 = await spawnAndWait(["--import", "tsx", EMPTY_H3], (line) =>
    line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined,
  );
  const { gateway, secrets, cleanup } = await startBenchGateway();
  try {
    const runId = randomBytes(4).toString("hex");
    const generate = createWebhookGenerator(secrets, runId);
    await runLoad(bare.url, generate, warm);
    const bareFigures = await runLoad(bare.url, generate, load);
    await runLoad(emptyH3.url, generate, warm);
    const emptyFigures = await runLoad(emptyH3.url, generate, load);
    await runLoad(gateway.url, generate, warm);
    const gatewayFigures = await runLoad(gateway.url, generate, load);
    const rssMb = Math.round((await gateway.rss()) / 1024 / 1024);
    const ratio = Math.round((gatewayFigures.requestsPerSecond / bareFigures.requestsPerSecond) * 100) / 100;
    console.log(
      `\ningress: ${connections} connections, ${durationSeconds} s each, signed webhooks (esign + staffing), unique ids`,
    );
    console.log(row("bare node:http", bareFigures));
    console.log(row("empty h3 app", emptyFigures));
    console.log(row("gateway (disk store)", gatewayFigures));
    const ratioEmpty = Math.round((gatewayFigures.requestsPerSecond / emptyFigures.requestsPerSecond) * 100) / 100;
    console.log(
      `ratio gateway/bare ${ratio} (target >= 0.75)   gateway/empty h3 ${ratioEmpty}   gateway p99 ${gatewayFigures.p99Ms} ms (target <= 20)   gateway RSS ${rssMb} MB`,
    );
    return {
      bare_rps: bareFigures.requestsPerSecond,
      bare_p50_ms: bareFigures.p50Ms,
      bare_p99_ms: bareFigures.p99Ms,
      gateway_rps: gatewayFigures.requestsPerSecond,
      gateway_p50_ms: gatewayFigures.p50Ms,
      gateway_p99_ms: gatewayFigures.p99Ms,
      gateway_non2xx: gatewayFigures.non2xx,
      empty_h3_rps: emptyFigures.requestsPerSecond,
      ratio,
      ratio_to_empty_h3: ratioEmpty,
    };
  } finally {
    await bare.stop();
    await emptyH3.stop();
    await cleanup();
  }
}
