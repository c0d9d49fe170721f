/**
 * What a PostgreSQL routing write costs: the routing transaction's three round trips (BEGIN with
 * the cursor lock, records and cursor move in one statement, COMMIT) with a synchronous commit
 * (before) and with an asynchronous one, and the outbox as it routes now (one statement in a
 * transaction of its own, asynchronous: adapters/outbox/postgres/postgres-outbox.ts), one of
 * each in turn on one server (`fsync` on, the benchmarks' temp filesystem) while another
 * connection commits synchronously at `appendRate`/s (the appends of the same events). The
 * end-to-end delivery p99 on a loaded machine moves by more than this does; this isolates it.
 *
 *   node --import tsx bench/lib/routing-commit-latency.ts [rounds] [appendRate]
 */
import pg from "pg";
import { createPostgresOutbox } from "../../adapters/outbox/postgres/postgres-outbox.ts";
import { createPool } from "../../adapters/store/postgres/pg-connection.ts";
import { openSchemaPool } from "../../adapters/store/postgres/pg-schema.ts";
import { startPostgresServer } from "../../test/helpers/postgres-server.ts";

const [roundsArg = "1000", rateArg = "200"] = process.argv.slice(2);
const rounds = Number(roundsArg);
const rate = Number(rateArg);

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
const summary = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const f = (p: number) => percentile(sorted, p).toFixed(2);
  return `p50 ${f(50)} ms, p95 ${f(95)} ms, p99 ${f(99)} ms`;
};

const server = await startPostgresServer({ fsync: true });
try {
  const options = { url: server.url, schema: "bench" };
  // The outbox as it routes now: one statement, asynchronous commit (the other two sides: the
  // routing transaction's three round trips, with a synchronous commit and with an asynchronous one).
  const outbox = createPostgresOutbox(await openSchemaPool(options));
  const now: number[] = [];
  const sides = await Promise.all(
    [false, true].map(async (asynchronous) => {
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      await client.query("SET search_path = bench");
      return { client, asynchronous, took: [] as number[] };
    }),
  );
  const appender = createPool(options, 1);
  await appender.query("CREATE TABLE IF NOT EXISTS bench.appends (n bigint)");
  let appending = true;
  const appends = (async () => {
    for (let n = 0; appending; n++) {
      const started = performance.now();
      await appender.query("INSERT INTO bench.appends VALUES ($1)", [n]);
      const wait = 1000 / rate - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  })();
  // The routing transaction's three round trips: BEGIN with the cursor lock, the records with
  // the cursor move in one statement, COMMIT.
  for (let i = 1; i <= rounds; i++) {
    for (const side of sides) {
      const started = performance.now();
      const set = side.asynchronous ? "SET LOCAL synchronous_commit = off; " : "";
      await side.client.query(`BEGIN; ${set}SELECT value FROM meta WHERE key = 'routing_cursor' FOR UPDATE`);
      await side.client.query(
        `WITH ins AS (INSERT INTO deliveries (event_id, destination_id, seq, state, received_at, updated_at, record, next_at)
          VALUES ($1, $2, $3, 'pending', 0, 0, '{}', 0) ON CONFLICT DO NOTHING RETURNING 1),
        moved AS (UPDATE meta SET value = greatest(value, $3) WHERE key = 'routing_cursor' RETURNING value)
        SELECT (SELECT count(*) FROM ins), (SELECT value FROM moved)`,
        [`evt_${i}`, side.asynchronous ? "after" : "before", i],
      );
      await side.client.query("COMMIT");
      side.took.push(performance.now() - started);
    }
    const started = performance.now();
    await outbox.createDeliveriesWithStates?.(
      [
        {
          eventId: `evt_${i}`,
          destinationId: "now",
          seq: i,
          receivedAt: 0,
          createdAt: 0,
          updatedAt: 0,
          state: "pending",
          nextAttemptAt: 0,
          failures: 0,
          attempts: [],
        },
      ],
      i,
      { owner: "bench", until: Date.now() + 30_000 },
      i,
    );
    now.push(performance.now() - started);
  }
  appending = false;
  await appends;
  console.log(`routing write, ${rounds} rounds alternating, appends at ${rate}/s alongside:`);
  for (const side of sides) {
    console.log(
      `  ${side.asynchronous ? "3 round trips, asynchronous commit:" : "3 round trips, synchronous (before):"} ${summary(side.took)}`,
    );
    await side.client.end();
  }
  console.log(`  the outbox now (one statement, asynchronous): ${summary(now)}`);
  await outbox.close();
  await appender.end();
} finally {
  await server.stop();
}
