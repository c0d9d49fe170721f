/**
 * `npm run bench -- burst`: a burst of large webhooks into one gateway, on each engine. `BURST_N`
 * (default 200) e-sign webhooks of `BURST_BYTES` (default 1,000,000: under the default 1 MiB body limit) extra
 * data each, all sent at once, one try each (no retry), to a gateway with an HTTP destination.
 * Prints per engine (sqlite, Redis with AOF `appendfsync always`, PostgreSQL): the 202s of the
 * first try, the events in the log, how long until the destination had every one of them (at
 * most `BURST_WAIT_SECONDS`, default 120), the gateway's peak RSS, and on Redis its longest
 * command (SLOWLOG). Before the fixes of 0.2.0, 9 of 200 got 202 on PostgreSQL (one append
 * statement of hundreds of MiB, ended by the append's idle limit) and 26 of 100 on Redis (one
 * event-log read script held Redis for up to 3.8 s).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startWebhookReceiver } from "../../test/delivery/helpers/webhook-receiver.ts";
import { startDurableRedis } from "../../test/helpers/durable-redis.ts";
import { startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { esignDelivery, listAllEventIds, postWebhook } from "../../test/helpers/signed-requests.ts";
import { startCluster } from "../../test/scaleout/cluster-fixtures.ts";

const N = Number(process.env.BURST_N ?? 200);
const BYTES = Number(process.env.BURST_BYTES ?? 1_000_000);
const WAIT_SECONDS = Number(process.env.BURST_WAIT_SECONDS ?? 120);
const ENGINES = (process.env.BURST_ENGINES ?? "sqlite,redis,postgres").split(",");

async function rssBytes(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
}

async function burstOn(engine: string): Promise<Record<string, number>> {
  const dir = await mkdtemp(join(tmpdir(), "burst-"));
  const hook = await startWebhookReceiver();
  const redis = engine === "redis" ? await startDurableRedis() : undefined;
  const postgres = engine === "postgres" ? await startPostgresServer({ fsync: true }) : undefined;
  const cluster = await startCluster({
    ...(postgres ? { postgresUrl: postgres.url } : { redisUrl: redis?.url ?? "redis://unused" }),
    count: 1,
    hookUrl: hook.url,
    edit:
      engine === "sqlite"
        ? (config) => {
            config.store = { driver: "sqlite", dir };
          }
        : undefined,
  });
  try {
    const gateway = cluster.gateways[0];
    if (!gateway?.child.pid) throw new Error("no gateway");
    const pid = gateway.child.pid;
    let peak = await rssBytes(pid);
    const sampler = setInterval(() => {
      void rssBytes(pid).then(
        (rss) => (peak = Math.max(peak, rss)),
        () => {},
      );
    }, 100);
    const started = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const delivery = await esignDelivery(cluster.secrets.esign, "agreement.completed", {
          edit: (body) => {
            (body as { data: Record<string, unknown> }).data.note = `${i}:${"x".repeat(BYTES)}`;
          },
        });
        const answer = await postWebhook(gateway.url, "esign", delivery).catch(() => undefined);
        await answer?.body?.cancel();
        return answer?.status ?? 0;
      }),
    );
    const answeredMs = performance.now() - started;
    // The burst's events (the gateway's own operational events, source `gateway`, are not counted).
    const logged = new Set(await listAllEventIds(gateway.url, cluster.secrets.adminKey, "source=esign")).size;
    let deliveredMs = Number.NaN;
    for (const deadline = performance.now() + WAIT_SECONDS * 1000; performance.now() < deadline; ) {
      if (new Set(hook.ids()).size >= logged) {
        deliveredMs = performance.now() - started;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    clearInterval(sampler);
    let longestCommandMs = Number.NaN;
    if (redis) {
      const admin = new Redis(redis.url);
      const log = (await admin.call("SLOWLOG", "GET", "128")) as [number, number, number][];
      longestCommandMs = Math.max(0, ...log.map((entry) => entry[2] / 1000));
      await admin.quit();
    }
    const accepted = statuses.filter((s) => s === 202).length;
    const figures = {
      accepted,
      logged,
      delivered: new Set(hook.ids()).size,
      answered_s: Number((answeredMs / 1000).toFixed(1)),
      all_delivered_s: Number((deliveredMs / 1000).toFixed(1)),
      peak_rss_mb: Math.round(peak / 1e6),
      ...(redis ? { longest_redis_command_ms: Math.round(longestCommandMs) } : {}),
    };
    console.log(
      `${engine.padEnd(9)} ${accepted}/${N} 202 on the first try, ${logged} in the log, ${figures.delivered} delivered (all by ${figures.all_delivered_s} s), answers in ${figures.answered_s} s, gateway peak RSS ${figures.peak_rss_mb} MB${redis ? `, longest Redis command ${figures.longest_redis_command_ms} ms` : ""}`,
    );
    return figures;
  } finally {
    await cluster.stop();
    await hook.close();
    await redis?.stop();
    await postgres?.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function benchLargeBurst(): Promise<Record<string, number>> {
  console.log(`\nburst: ${N} webhooks of ${BYTES} bytes of extra data at once, one try each`);
  const out: Record<string, number> = {};
  for (const engine of ENGINES) {
    for (const [key, value] of Object.entries(await burstOn(engine))) out[`${engine}_${key}`] = value;
  }
  return out;
}
