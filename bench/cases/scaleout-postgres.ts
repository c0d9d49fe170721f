/**
 * The PostgreSQL side of the scale-out benchmark (bench/cases/scaleout.ts): the bench's own
 * PostgreSQL server (test/helpers/postgres-server.ts, `fsync` on: an acknowledged event is on
 * disk), `commit_delay` / `commit_siblings` changed on the running server, the webhook 2xx ->
 * HTTP delivery latency with every safety-net poll pushed out of reach (so only the wake-ups,
 * in-process and LISTEN/NOTIFY, can drive deliveries), and `GET /events?external_id=` on a log
 * filled with N events through the store API, with the plan PostgreSQL picks for it.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import pg from "pg";
import { toPg } from "../../adapters/store/postgres/pg-connection.ts";
import { buildPgListQuery } from "../../adapters/store/postgres/pg-event-queries.ts";
import { postgresStore } from "../../adapters/store/postgres/postgres-store.ts";
import { builtinServices } from "../../src/services/registry.ts";
import { type PostgresServer, startPostgresServer } from "../../test/helpers/postgres-server.ts";
import { awaitReceipts, drive } from "./fanout.ts";
import { startBenchGateway } from "./ingress.ts";
import { esignWebhooks, receiver } from "./latency.ts";
import { fillRecord } from "./scale.ts";

const ADMIN_KEY = "bench-admin";
/** Appends the fill keeps in flight (the store group-commits them 256 per transaction). */
const FILL_IN_FLIGHT = 4_096;
/** The longest a run's deliveries may take to arrive before the run counts them as missing. */
const RECEIPT_DEADLINE_MS = 120_000;

export interface BenchPostgres {
  server: PostgresServer;
  url: string;
  /** The postmaster's pid (its backends are its children: meter it as a tree). */
  pid: number;
  /** Sets `commit_delay` (µs) and `commit_siblings` on the running server and waits until a new session sees them. */
  setCommitDelay(delayUs: number, siblings?: number): Promise<void>;
  stop(): Promise<void>;
}

/** `store` of a gateway on the bench PostgreSQL, in its own schema. */
export function postgresStoreConfig(url: string, schema: string) {
  return { driver: "postgres", url, schema };
}

/** A fresh schema name (one gateway, or one group of instances, per schema). */
export function freshSchema(prefix: string): string {
  return `${prefix}_${randomBytes(4).toString("hex")}`;
}

/** Starts the bench's PostgreSQL: a temp cluster on 127.0.0.1, `fsync` on, room for three instances' pools. */
export async function startBenchPostgres(): Promise<BenchPostgres> {
  // `BENCH_PG_SETTINGS=name=value,...`: extra server settings for a look inside (statement logs).
  const extra = Object.fromEntries(
    (process.env.BENCH_PG_SETTINGS ?? "")
      .split(",")
      .filter((pair) => pair.includes("="))
      .map((pair) => [pair.slice(0, pair.indexOf("=")).trim(), pair.slice(pair.indexOf("=") + 1).trim()]),
  );
  // `BENCH_PG_STATEMENTS=1`: load pg_stat_statements, so the ingress rows can say per statement
  // where the server's time and round trips go (statementStats below).
  if (process.env.BENCH_PG_STATEMENTS === "1") extra.shared_preload_libraries ??= "pg_stat_statements";
  const server = await startPostgresServer({ fsync: true, settings: { max_connections: "300", ...extra } });
  const pid = Number((await readFile(join(server.dir, "data", "postmaster.pid"), "utf8")).split("\n")[0]);
  const run = async <T>(work: (client: pg.Client) => Promise<T>) => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  return {
    server,
    url: server.url,
    pid,
    async setCommitDelay(delayUs, siblings = 5) {
      if (!Number.isInteger(delayUs) || delayUs < 0 || delayUs > 100_000) throw new Error("commit_delay: 0..100000 µs");
      await run(async (client) => {
        await client.query(`ALTER SYSTEM SET commit_delay = ${delayUs}`);
        await client.query(`ALTER SYSTEM SET commit_siblings = ${siblings}`);
        await client.query("SELECT pg_reload_conf()");
      });
      // The reload reaches the server asynchronously: wait (bounded) until a new session sees it.
      for (let i = 0; i < 200; i++) {
        const seen = await run((client) =>
          client.query<{ d: string; s: string }>(
            "SELECT current_setting('commit_delay') AS d, current_setting('commit_siblings') AS s",
          ),
        );
        if (seen.rows[0]?.d === String(delayUs) && seen.rows[0]?.s === String(siblings)) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`PostgreSQL did not take commit_delay = ${delayUs}`);
    },
    stop: () => server.stop(),
  };
}

/** The server's WAL flushes and commits so far (differences over a run, per accepted event, say what an event costs whatever the machine's load). */
export async function serverCounters(url: string): Promise<{ walSyncs: number; walRecords: number; commits: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ wal_sync: string; wal_records: string; commits: string }>(
      `SELECT w.wal_sync, w.wal_records, (SELECT sum(xact_commit) FROM pg_stat_database) AS commits
        FROM pg_stat_wal w`,
    );
    // Statistics are sent by each backend at the end of its transaction; a fresh snapshot.
    const row = rows[0];
    return { walSyncs: Number(row?.wal_sync), walRecords: Number(row?.wal_records), commits: Number(row?.commits) };
  } finally {
    await client.end();
  }
}

/**
 * pg_stat_statements when the server loaded it (`BENCH_PG_STATEMENTS=1`), else undefined: `reset`
 * clears the counts before a run, `top` lists the statements of the run with most time first.
 */
export async function statementStats(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const loaded = await client.query<{ on: boolean }>(
      "SELECT current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%' AS on",
    );
    if (!loaded.rows[0]?.on) return undefined;
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  } finally {
    await client.end();
  }
  const run = async <T>(work: (client: pg.Client) => Promise<T>) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await work(c);
    } finally {
      await c.end();
    }
  };
  return {
    reset: () => run((c) => c.query("SELECT pg_stat_statements_reset()")),
    /** Calls, rows and execution ms of each statement, per `events`, most time first. */
    async top(events: number, count = 12) {
      const { rows } = await run((c) =>
        c.query<{ query: string; calls: string; rows: string; ms: number }>(
          `SELECT query, calls, rows, total_exec_time AS ms FROM pg_stat_statements
            WHERE query NOT LIKE '%pg_stat_statements%' ORDER BY total_exec_time DESC LIMIT ${count}`,
        ),
      );
      return rows.map(
        (r) =>
          `${(Number(r.calls) / events).toFixed(3).padStart(7)} calls ${(Number(r.rows) / events).toFixed(2).padStart(6)} rows ${((r.ms * 1000) / events).toFixed(1).padStart(7)} µs  ${r.query.replace(/\s+/g, " ").slice(0, 110)}`,
      );
    },
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? Number.NaN
    : Math.round((sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number) * 10) / 10;

/**
 * Webhook 202 -> signed HTTP delivery received, open loop at `rate`/s for `seconds`, one instance
 * on PostgreSQL and one `http` destination with default settings. The delivery engine's polls
 * (`GATEWAY_DELIVERY_POLL_MS`) are set to an hour and the hub's to its 10 s maximum, so a
 * delivery that waited for a poll shows as a miss or a latency of seconds.
 */
export async function deliveryLatencyOnPostgres(url: string, rate: number, seconds: number) {
  const sink = await receiver();
  const gateway = await startBenchGateway(
    {
      log: { level: "warn" },
      store: postgresStoreConfig(url, freshSchema("lat")),
      hub: { driver: "postgres", pollMs: 10_000 },
      destinations: [sink.config],
      routes: [{ destinations: [sink.id] }],
    },
    undefined,
    { GATEWAY_DELIVERY_POLL_MS: "3600000" },
  );
  try {
    const next = esignWebhooks(gateway.secrets.esign, randomBytes(4).toString("hex"));
    const warm = await drive(gateway.gateway.url, next, { seconds: 2, concurrency: 8, rate });
    await awaitReceipts([sink as never], warm.accepted.keys(), RECEIPT_DEADLINE_MS);
    const run = await drive(gateway.gateway.url, next, { seconds, concurrency: 64, rate });
    let missing = 0;
    try {
      await awaitReceipts([sink as never], run.accepted.keys(), RECEIPT_DEADLINE_MS);
    } catch {
      missing = [...run.accepted.keys()].filter((id) => !sink.receipts.has(id)).length;
    }
    const latencies = [...run.accepted]
      .filter(([id]) => sink.receipts.has(id))
      .map(([id, at]) => Math.max(0, (sink.receipts.get(id) as number) - at))
      .sort((a, b) => a - b);
    return {
      sent: run.accepted.size,
      failed: run.failed,
      missing,
      p50: percentile(latencies, 50),
      p95: percentile(latencies, 95),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      over500: latencies.filter((l) => l > 500).length,
    };
  } finally {
    await gateway.cleanup();
    await sink.close();
  }
}

/**
 * Fills a fresh schema with `count` events through the store API (both services, 10,000
 * external ids: scale.ts's fill), asks PostgreSQL for the plan of the external-id list, then
 * times `queries` sequential `GET /events?external_id=...&limit=50` on a gateway process.
 */
export async function externalIdLookups(url: string, count: number, queries = 300) {
  const schema = freshSchema("q");
  // With the gateway's services, as the gateway opens it: they say where a record's external id
  // is (without them no event has one, and every lookup would answer nothing).
  const store = await postgresStore({ url, schema, poolSize: 4, services: builtinServices });
  const filled = performance.now();
  const span = 24 * 3600_000;
  const start = Date.now() - span;
  try {
    for (let from = 0; from < count; from += FILL_IN_FLIGHT) {
      const records = Array.from({ length: Math.min(FILL_IN_FLIGHT, count - from) }, (_, i) =>
        fillRecord(from + i, start + Math.floor(((from + i) / count) * span)),
      );
      await Promise.all(records.map((r) => store.append(r, `${r.sourceId}\u0000${r.identity}`, 72 * 3600_000)));
    }
  } finally {
    await store.close();
  }
  const fillSeconds = Math.round((performance.now() - filled) / 100) / 10;

  // The plan of the list the gateway runs (limit + 1: the page and whether more follow).
  const list = buildPgListQuery({ externalId: "crm-4242" }, undefined, 51);
  const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await client.connect();
  // Statistics for the planner now, as autovacuum would give them a little later.
  await client.query("ANALYZE events");
  let plan: string[];
  let rows: number;
  // The same statement timed on its own (the database's share of the HTTP figure).
  const sqlTimes: number[] = [];
  try {
    const explained = await client.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${toPg(list.sql)}`,
      list.params,
    );
    plan = explained.rows.map((r) => r["QUERY PLAN"]);
    rows = Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM events")).rows[0]?.n);
    for (let i = 0; i < queries + 20; i++) {
      const { sql, params } = buildPgListQuery({ externalId: `crm-${(i * 7919) % 10_000}` }, undefined, 51);
      const started = performance.now();
      await client.query(toPg(sql), params);
      if (i >= 20) sqlTimes.push(performance.now() - started);
    }
  } finally {
    await client.end();
  }

  const gateway = await startBenchGateway({ log: { level: "warn" }, store: postgresStoreConfig(url, schema) });
  const times: number[] = [];
  let found = 0;
  try {
    for (let i = 0; i < queries + 20; i++) {
      const externalId = `crm-${(i * 7919) % 10_000}`;
      const started = performance.now();
      const response = await fetch(`${gateway.gateway.url}/events?external_id=${externalId}&limit=50`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      const body = (await response.json()) as { events?: unknown[] };
      if (response.status !== 200) throw new Error(`GET /events?external_id= answered ${response.status}`);
      // The first 20 warm the gateway's and the server's caches.
      if (i >= 20) {
        times.push(performance.now() - started);
        found += body.events?.length ?? 0;
      }
    }
  } finally {
    await gateway.cleanup();
  }
  times.sort((a, b) => a - b);
  sqlTimes.sort((a, b) => a - b);
  return {
    events: rows,
    fillSeconds,
    plan,
    usesIndex: plan.some((line) => line.includes("events_by_external_id")),
    eventsPerAnswer: Math.round((found / queries) * 10) / 10,
    p50: percentile(times, 50),
    p95: percentile(times, 95),
    p99: percentile(times, 99),
    sqlP50: percentile(sqlTimes, 50),
    sqlP95: percentile(sqlTimes, 95),
  };
}
