/**
 * Fairness probe of the ingress comparison: loads the gateway (disk store) and the Express +
 * Redis glue one after the other with the same generator, 100 connections, and while each runs
 * counts with `strace -c -f` the fsync-family syscalls of the process that makes the 2xx durable
 * (the gateway; the glue's redis-server), per accepted webhook, and prints Redis' `INFO persistence`.
 * `node --import tsx bench/lib/ingress-fairness-probe.ts`; `BENCH_SECONDS` (default 5).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startRedisServer } from "../../test/helpers/redis-server.ts";
import { startBenchGateway } from "../cases/ingress.ts";
import { runLoad } from "./autocannon-run.ts";
import { createWebhookGenerator } from "./signed-webhooks.ts";
import { spawnAndWait } from "./spawn-process.ts";

const seconds = Number(process.env.BENCH_SECONDS) || 5;
const EXPRESS_GLUE = new URL("../peers/express-glue.ts", import.meta.url).pathname;
const readPort = (line: string) => (line.startsWith("PORT ") ? `http://127.0.0.1:${line.slice(5)}` : undefined);

async function straced(pid: number, during: () => Promise<{ accepted: number }>) {
  const out = join(await mkdtemp(join(tmpdir(), "gw-strace-")), "counts.txt");
  const tracer = spawn(
    "strace",
    ["-c", "-f", "-e", "trace=fsync,fdatasync,sync_file_range,pwrite64,write,writev", "-o", out, "-p", String(pid)],
    { stdio: "ignore" },
  );
  await new Promise((resolve) => setTimeout(resolve, 500)); // strace attaches (bench tool, not a test)
  const { accepted } = await during();
  tracer.kill("SIGINT");
  await new Promise((resolve) => tracer.once("exit", resolve));
  const text = await readFile(out, "utf8");
  const counts: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const cols = line.trim().split(/\s+/);
    const name = cols.at(-1);
    if (name && /^(fsync|fdatasync|sync_file_range|pwrite64|write|writev)$/.test(name)) counts[name] = Number(cols[3]);
  }
  return {
    accepted,
    counts,
    perWebhook: Object.fromEntries(
      Object.entries(counts).map(([k, v]) => [k, Math.round((v / accepted) * 1000) / 1000]),
    ),
  };
}

const started = await startBenchGateway();
const redisDir = await mkdtemp(join(tmpdir(), "gw-bench-redis-"));
const redis = await startRedisServer({ args: ["--appendonly", "yes", "--appendfsync", "always", "--dir", redisDir] });
const glue = await spawnAndWait(["--import", "tsx", EXPRESS_GLUE], readPort, {
  PEER_REDIS_URL: redis.url,
  PEER_ESIGN_SECRET: started.secrets.esign,
  PEER_STAFFING_SECRET: started.secrets.staffing,
});
try {
  const generate = createWebhookGenerator(started.secrets, randomBytes(4).toString("hex"));
  const load = async (url: string) => {
    const r = await runLoad(url, generate, { connections: 100, durationSeconds: seconds });
    console.log(`  ${url}: ${r.requestsPerSecond} req/s p99 ${r.p99Ms} ms non-2xx ${r.non2xx}`);
    return { accepted: r.total - r.non2xx - r.errors };
  };
  for (const target of [
    { name: "gateway", url: started.gateway.url, pid: started.gateway.child.pid as number },
    { name: "glue (redis-server)", url: glue.url, pid: redis.pid as number },
  ]) {
    await runLoad(target.url, generate, { connections: 100, durationSeconds: 2 });
    const r = await straced(target.pid, () => load(target.url));
    console.log(
      `${target.name}: ${r.accepted} accepted; syscalls ${JSON.stringify(r.counts)}; per webhook ${JSON.stringify(r.perWebhook)}`,
    );
  }
  const client = new Redis(redis.url);
  const info = await client.info("persistence");
  console.log(
    info
      .split("\r\n")
      .filter((l) => /aof_enabled|aof_last_write_status|aof_delayed_fsync|aof_current_size/.test(l))
      .join("  "),
  );
  console.log(`appendfsync: ${((await client.config("GET", "appendfsync")) as string[]).join("=")}`);
  await client.quit();
} finally {
  await glue.stop();
  await redis.stop();
  await rm(redisDir, { recursive: true, force: true });
  await started.cleanup();
}
