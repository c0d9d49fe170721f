/**
 * Outbox work per delivery on the shared stores, counted rather than timed (a loaded machine
 * moves req/s and latencies by more than a change does; the count does not move): the gateway
 * of this tree with one `http` destination (the latency case's, in its own process) takes
 * signed e-sign webhooks at a fixed rate until every one is delivered, and the store's own
 * counters are read before and after — Redis: commands by name (`INFO commandstats`);
 * PostgreSQL: committed transactions of the gateway's database (`pg_stat_database`).
 *
 *   node --import tsx bench/lib/outbox-round-trips.ts [redis|postgres] [rate] [seconds]
 *
 * Run it from two trees (before and after a change) for an A/B.
 */
import { randomBytes } from "node:crypto";
import { createConnection } from "node:net";
import pg from "pg";
import { type PostgresServer, startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { startRedisServer } from "../../test/helpers/redis-server.ts";
import { awaitReceipts, drive } from "../cases/fanout.ts";
import { startBenchGateway } from "../cases/ingress.ts";
import { esignWebhooks, receiver } from "../cases/latency.ts";

const [storeArg = "redis", rateArg = "200", secondsArg = "5"] = process.argv.slice(2);
const rate = Number(rateArg);
const seconds = Number(secondsArg);

/** One Redis command over a raw connection (INFO is a bulk string). */
async function redisInfo(port: number, section: string): Promise<string> {
  const socket = createConnection({ host: "127.0.0.1", port });
  socket.write(`*2\r\n$4\r\nINFO\r\n$${section.length}\r\n${section}\r\n`);
  let text = "";
  for await (const chunk of socket) {
    text += chunk.toString();
    const header = /^\$(\d+)\r\n/.exec(text);
    if (header && text.length >= header[0].length + Number(header[1])) break;
  }
  socket.destroy();
  return text;
}

/** Calls per command name (`cmdstat_evalsha:calls=...`). */
async function redisCalls(port: number): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const match of (await redisInfo(port, "commandstats")).matchAll(/cmdstat_(\w+):calls=(\d+)/g)) {
    out.set(match[1] as string, Number(match[2]));
  }
  return out;
}

async function main() {
  let storeConfig: Record<string, unknown>;
  let counters: () => Promise<Map<string, number>>;
  let stop: () => Promise<void>;
  const runId = randomBytes(4).toString("hex");
  if (storeArg === "postgres") {
    const server: PostgresServer = await startPostgresServer({ fsync: true });
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    storeConfig = { driver: "postgres", url: server.url, schema: `gwrt_${runId}` };
    counters = async () => {
      const { rows } = await client.query<{ xact_commit: string }>(
        "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()",
      );
      // Statistics are sent by backends at most every 500 ms (PostgreSQL 15: at transaction end, flushed lazily).
      return new Map([["transactions", Number(rows[0]?.xact_commit ?? 0)]]);
    };
    stop = async () => {
      await client.end();
      await server.stop();
    };
  } else {
    const server = await startRedisServer();
    storeConfig = { driver: "redis", url: server.url, prefix: `gwrt-${runId}` };
    counters = () => redisCalls(server.port);
    stop = () => server.stop();
  }
  const sink = await receiver();
  const gateway = await startBenchGateway({
    log: { level: "warn" },
    store: storeConfig,
    destinations: [sink.config],
    routes: [{ destinations: [sink.id] }],
  });
  try {
    const next = esignWebhooks(gateway.secrets.esign, runId);
    const warm = await drive(gateway.gateway.url, next, { seconds: 2, concurrency: 8, rate: 100 });
    await awaitReceipts([sink as never], warm.accepted.keys(), 600_000);
    // Let the stores' counters settle (PostgreSQL reports statistics lazily).
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const before = await counters();
    const run = await drive(gateway.gateway.url, next, { seconds, concurrency: 64, rate });
    await awaitReceipts([sink as never], run.accepted.keys(), 600_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await counters();
    const n = run.accepted.size;
    const per = [...after]
      .map(([name, calls]) => [name, (calls - (before.get(name) ?? 0)) / n] as const)
      .filter(([, v]) => v > 0)
      .sort((a, b) => b[1] - a[1]);
    console.log(`${storeArg}: ${n} webhooks at ${rate}/s, each delivered once; per webhook and delivery:`);
    for (const [name, v] of per) console.log(`  ${name.padEnd(16)} ${v.toFixed(2)}`);
    console.log(`  ${"total".padEnd(16)} ${per.reduce((s, [, v]) => s + v, 0).toFixed(2)}`);
  } finally {
    await gateway.cleanup();
    await sink.close();
    await stop();
  }
}

await main();
process.exit(0);
