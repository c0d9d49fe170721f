/** The outbox conformance and lease suites against the `postgres` driver on a real PostgreSQL server. */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgresOutbox } from "../../../adapters/outbox/postgres/postgres-outbox.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { makeDelivery, type OutboxHarness, testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";
import { type PostgresServer, startPostgresServer } from "../../helpers/postgres-server.ts";

let server: PostgresServer;
let n = 0;
const schemaOf = new WeakMap<OutboxStore, string>();

beforeAll(async () => {
  server = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const open = async (schema: string) => {
  const outbox = await postgresOutbox({ url: server.url, schema, poolSize: 4 });
  schemaOf.set(outbox, schema);
  return outbox;
};
// A fresh schema per test keeps tests apart on one server.
const harness: OutboxHarness = {
  open: () => open(`o${++n}`),
  async reopen(outbox) {
    await outbox.close();
    return open(schemaOf.get(outbox) as string);
  },
};

testOutboxDriver("postgres", harness);
testOutboxLeases("postgres", harness);

it("never takes a later record of an owned subject past an older one another transaction holds locked", async () => {
  const T = 5_000_000;
  const LEASE = 1_000;
  const schema = `o${++n}`;
  const outbox = await open(schema);
  const at = (seq: number) => makeDelivery(seq, "a", { subject: "s", nextAttemptAt: T });
  await outbox.createDeliveries([at(1), at(2)], 2);
  expect((await outbox.claimDue("one", T, LEASE, 10, ["a"])).map((r) => r.seq)).toEqual([1, 2]);
  // "one" keeps the subject through record 2 while its lease on record 1 ends (due again).
  expect(await outbox.renewLeases("one", [{ eventId: at(2).eventId, destinationId: "a" }], T + 5 * LEASE)).toEqual([]);
  await outbox.createDeliveries([at(3)], 3);
  // Another transaction (a claim scanning it, a write) holds record 1's row locked right now.
  const other = new pg.Client({ connectionString: server.url });
  await other.connect();
  try {
    await other.query("BEGIN");
    await other.query(`SELECT 1 FROM ${schema}.deliveries WHERE event_id = $1 AND destination_id = 'a' FOR UPDATE`, [
      at(1).eventId,
    ]);
    // Record 3 is due and its subject is "one"'s, but record 1 is older and unfinished.
    expect(await outbox.claimDue("one", T + 2 * LEASE, LEASE, 10, ["a"])).toEqual([]);
    await other.query("ROLLBACK");
  } finally {
    await other.end();
  }
  expect((await outbox.claimDue("one", T + 2 * LEASE, LEASE, 10, ["a"])).map((r) => r.seq).sort()).toEqual([1, 3]);
  await outbox.close();
});
