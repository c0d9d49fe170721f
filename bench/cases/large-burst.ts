/**
 * `npm run bench -- burst`: a burst of large webhooks into one gateway, on each engine. `BURST_N`
 * (default 200) e-sign webhooks of `BURST_BYTES` (default 1,000,000: under the default 1 MiB body
 * limit) extra data each, all sent at once, to a gateway with an HTTP destination. A webhook
 * answered 503 is sent again after its `Retry-After`, as an upstream would, up to
 * `BURST_RETRIES` times (default 30; 0: one try each). Runs once per budget of bodies in flight
 * in `BURST_BUDGETS` (bytes, comma-separated, `off` for the largest allowed, 64 GiB; default
 * `default,off`: the 64 MiB default against no budget, in the same run).
 *
 * Prints per engine (sqlite, Redis with AOF `appendfsync always`, PostgreSQL) and budget: the
 * 202s of the first try, the 503s `overloaded` of all tries, the events in the log, how long
 * until the destination had every one of them (at most `BURST_WAIT_SECONDS`, default 120), the
 * gateway's peak RSS, and on Redis its longest command (SLOWLOG). Before the fixes of 0.2.0, 9 of
 * 200 got 202 on PostgreSQL (one append statement of hundreds of MiB, ended by the append's idle
 * limit) and 26 of 100 on Redis (one event-log read script held Redis for up to 3.8 s).
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
const RETRIES = Number(process.env.BURST_RETRIES ?? 30);
/** The budgets to compare: `default` (the config's default), `off` (the largest allowed), or bytes. */
const BUDGETS = (process.env.BURST_BUDGETS ?? "default,off").split(",");
const LARGEST_BUDGET = 64 * 1024 * 1024 * 1024;

function budgetOf(name: string): number | undefined {
  if (name === "default") return undefined;
  if (name === "off") return LARGEST_BUDGET;
  const bytes = Number(name);
  if (!Number.isSafeInteger(bytes)) throw new Error(`BURST_BUDGETS: expected default, off or bytes, got ${name}`);
  return bytes;
}

/**
 * One webhook sent as an upstream sends it: again after each 503's Retry-After (or 1 s after a
 * connection error), within the tries.
 */
async function sendWithRetries(send: () => Promise<Response | undefined>) {
  const statuses: number[] = [];
  let overloaded = 0;
  for (let attempt = 0; attempt <= RETRIES; attempt++) {
    const answer = await send().catch(() => undefined);
    const status = answer?.status ?? 0;
    statuses.push(status);
    if (status !== 503 && status !== 0) {
      await answer?.body?.cancel();
      break;
    }
    const text = (await answer?.text().catch(() => "")) ?? "";
    if (text.includes('"overloaded"')) overloaded++;
    const seconds = Number(answer?.headers.get("retry-after") ?? 1);
    if (attempt < RETRIES) {
      await new Promise((resolve) => setTimeout(resolve, (Number.isFinite(seconds) ? seconds : 1) * 1000));
    }
  }
  return { first: statuses[0] ?? 0, last: statuses.at(-1) ?? 0, overloaded };
}

async function rssBytes(pid: number): Promise<number> {
  return Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
}

async function burstOn(engine: string, budgetName: string): Promise<Record<string, number>> {
  const budget = budgetOf(budgetName);
  const dir = await mkdtemp(join(tmpdir(), "burst-"));
  const hook = await startWebhookReceiver();
  const redis = engine === "redis" ? await startDurableRedis() : undefined;
  const postgres = engine === "postgres" ? await startPostgresServer({ fsync: true }) : undefined;
  const cluster = await startCluster({
    ...(postgres ? { postgresUrl: postgres.url } : { redisUrl: redis?.url ?? "redis://unused" }),
    count: 1,
    hookUrl: hook.url,
    edit: (config) => {
      if (engine === "sqlite") config.store = { driver: "sqlite", dir };
      if (budget !== undefined) {
        config.ingress = { ...(config.ingress as object), maxBodyBytesInFlight: budget };
      }
    },
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
    const outcomes = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const delivery = await esignDelivery(cluster.secrets.esign, "agreement.completed", {
          edit: (body) => {
            (body as { data: Record<string, unknown> }).data.note = `${i}:${"x".repeat(BYTES)}`;
          },
        });
        return sendWithRetries(() => postWebhook(gateway.url, "esign", delivery));
      }),
    );
    const answeredMs = performance.now() - started;
    const exited = () => gateway.child.exitCode !== null || gateway.child.signalCode !== null;
    // Every webhook is a distinct event: the destination should get each one recorded.
    const recordedNow = outcomes.filter((o) => o.last === 202 || o.last === 200).length;
    let deliveredMs = Number.NaN;
    for (const deadline = performance.now() + WAIT_SECONDS * 1000; performance.now() < deadline && !exited(); ) {
      if (new Set(hook.ids()).size >= recordedNow) {
        deliveredMs = performance.now() - started;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // The burst's events (the gateway's own operational events, source `gateway`, are not counted).
    const logged = exited()
      ? Number.NaN
      : await listAllEventIds(gateway.url, cluster.secrets.adminKey, "source=esign", 20).then(
          (ids) => new Set(ids).size,
          () => Number.NaN,
        );
    clearInterval(sampler);
    if (exited()) {
      const last = gateway.lines.slice(-Number(process.env.BURST_LOG_LINES ?? 3)).map((line) => line.slice(0, 300));
      console.log(`${engine}: the gateway exited (${gateway.child.exitCode ?? gateway.child.signalCode}):`, last);
      return {
        accepted: outcomes.filter((o) => o.first === 202).length,
        exited: 1,
        peak_rss_mb: Math.round(peak / 1e6),
      };
    }
    let longestCommandMs = Number.NaN;
    if (redis) {
      const admin = new Redis(redis.url);
      const log = (await admin.call("SLOWLOG", "GET", "128")) as [number, number, number][];
      longestCommandMs = Math.max(0, ...log.map((entry) => entry[2] / 1000));
      await admin.quit();
    }
    const accepted = outcomes.filter((o) => o.first === 202).length;
    const recorded = outcomes.filter((o) => o.last === 202 || o.last === 200).length;
    const overloaded = outcomes.reduce((sum, o) => sum + o.overloaded, 0);
    const figures = {
      accepted,
      recorded_after_retries: recorded,
      overloaded_503s: overloaded,
      logged,
      delivered: new Set(hook.ids()).size,
      answered_s: Number((answeredMs / 1000).toFixed(1)),
      all_delivered_s: Number((deliveredMs / 1000).toFixed(1)),
      peak_rss_mb: Math.round(peak / 1e6),
      ...(redis ? { longest_redis_command_ms: Math.round(longestCommandMs) } : {}),
    };
    const label = `${engine} (budget ${budgetName === "default" ? "64 MiB, the default" : budgetName === "off" ? "off" : `${budgetName} bytes`})`;
    console.log(
      `${label.padEnd(30)} ${accepted}/${N} 202 on the first try, ${recorded}/${N} recorded after retries (${overloaded} × 503 overloaded), ${logged} in the log, ${figures.delivered} delivered (all by ${figures.all_delivered_s} s), answers in ${figures.answered_s} s, gateway peak RSS ${figures.peak_rss_mb} MB${redis ? `, longest Redis command ${figures.longest_redis_command_ms} ms` : ""}`,
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
  console.log(
    `\nburst: ${N} webhooks of ${BYTES} bytes of extra data at once, a 503 sent again after its Retry-After (at most ${RETRIES} times)`,
  );
  const out: Record<string, number> = {};
  for (const engine of ENGINES) {
    for (const budget of BUDGETS) {
      for (const [key, value] of Object.entries(await burstOn(engine, budget))) {
        out[`${engine}_${budget}_${key}`] = value;
      }
    }
  }
  return out;
}
