/** The outbox conformance and lease suites against the `postgres` driver on a real PostgreSQL server. */
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgresOutbox } from "../../../adapters/outbox/postgres/postgres-outbox.ts";
import type { DeliveryRecord, OutboxStore } from "../../../src/delivery/outbox-contract.ts";
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

it("renews a lease whose row the holder's own write holds once the row is free: the lease never ends under its holder", async () => {
  const T = 5_000_000;
  const LEASE = 1_000;
  const schema = `o${++n}`;
  const outbox = await open(schema);
  const record = makeDelivery(1, "a", { nextAttemptAt: T });
  const ref = { eventId: record.eventId, destinationId: "a" };
  await outbox.createDeliveries([record], 1);
  expect(await outbox.claimDue("one", T, LEASE, 10)).toHaveLength(1);
  // A write of the holder holds the row (as a slow group commit does under load) across the
  // renewal round: the row cannot be renewed now, and it is still "one"'s.
  const writer = new pg.Client({ connectionString: server.url });
  await writer.connect();
  try {
    await writer.query("BEGIN");
    await writer.query(
      `UPDATE ${schema}.deliveries SET state = 'failed-retrying' WHERE event_id = $1 AND destination_id = 'a'`,
      [record.eventId],
    );
    const renewal = outbox.renewLeases("one", [ref], T + 5 * LEASE);
    // The renewal waits for the row (resolved only once the lease is moved) ...
    await waitForLockWaiter(schema, renewal);
    await writer.query("COMMIT");
    expect(await renewal).toEqual([]);
  } finally {
    await writer.end();
  }
  // ... so once the first lease ended, nobody else takes the record while "one" renews.
  expect(await outbox.claimDue("two", T + 2 * LEASE, LEASE, 10)).toEqual([]);
  expect((await outbox.claimDue("two", T + 5 * LEASE, LEASE, 10)).map((r) => r.seq)).toEqual([1]);
  await outbox.close();
});

it("renews the rows it can at once while another is held, and a release is never undone by a late renewal", async () => {
  const T = 5_000_000;
  const LEASE = 1_000;
  const schema = `o${++n}`;
  const outbox = await open(schema);
  const records = [1, 2].map((seq) => makeDelivery(seq, "a", { nextAttemptAt: T }));
  const refs = records.map((r) => ({ eventId: r.eventId, destinationId: "a" }));
  await outbox.createDeliveries(records, 2);
  expect(await outbox.claimDue("one", T, LEASE, 10)).toHaveLength(2);
  const writer = new pg.Client({ connectionString: server.url });
  await writer.connect();
  try {
    await writer.query("BEGIN");
    await writer.query(`SELECT 1 FROM ${schema}.deliveries WHERE event_id = $1 FOR UPDATE`, [records[0]?.eventId]);
    const renewal = outbox.renewLeases("one", refs, T + 5 * LEASE);
    await waitForLockWaiter(schema, renewal);
    // Record 2 is renewed already while record 1 waits for its row.
    expect(await leaseOf(schema, records[1]?.eventId as string)).toBe(T + 5 * LEASE);
    expect(await leaseOf(schema, records[0]?.eventId as string)).toBe(T + LEASE);
    // The holder releases record 1 meanwhile (the row now free to it would be stale).
    await writer.query(`UPDATE ${schema}.deliveries SET lease_until = $2 WHERE event_id = $1`, [
      records[0]?.eventId,
      T,
    ]);
    await writer.query("COMMIT");
    expect(await renewal).toEqual([]);
  } finally {
    await writer.end();
  }
  expect(await leaseOf(schema, records[0]?.eventId as string)).toBe(T);
  expect((await outbox.claimDue("two", T + 1, LEASE, 10)).map((r) => r.seq)).toEqual([1]);
  await outbox.close();
});

it("never lets a stale attempt outcome reopen a record another instance finished", async () => {
  const T = 5_000_000;
  const LEASE = 1_000;
  const outbox = await harness.open();
  const record = makeDelivery(1, "a", { nextAttemptAt: T });
  await outbox.createDeliveries([record], 1);
  // "one" lost the lease; "two" took the record over and delivered it.
  await outbox.claimDue("one", T, LEASE, 10);
  const [taken] = await outbox.claimDue("two", T + LEASE, LEASE, 10);
  await outbox.saveDeliveries([{ ...(taken as DeliveryRecord), state: "delivered" }]);
  // "one"'s attempt, cut short by a timeout, comes back as a failure to retry.
  await outbox.saveDeliveries([{ ...record, state: "failed-retrying", failures: 1, nextAttemptAt: T + LEASE }]);
  expect((await outbox.getDelivery(record.eventId, "a"))?.state).toBe("delivered");
  expect(await outbox.claimDue("three", T + 10 * LEASE, LEASE, 10)).toEqual([]);
  // A replay (pending, no failures) still reopens it.
  await outbox.saveDeliveries([{ ...record, state: "pending", failures: 0, nextAttemptAt: T + LEASE }]);
  expect((await outbox.claimDue("three", T + 10 * LEASE, LEASE, 10)).map((r) => r.seq)).toEqual([1]);
  await outbox.close();
});

/**
 * Waits (bounded) until a session of the driver waits for a row lock, or `renewal` settled
 * without waiting (as it did when renewals skipped a held row).
 */
async function waitForLockWaiter(schema: string, renewal: Promise<unknown>) {
  let settled = false;
  renewal.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  try {
    for (let i = 0; i < 600 && !settled; i++) {
      const { rows } = await admin.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'gateway'
           AND query LIKE '%FOR UPDATE OF d%' AND query NOT LIKE '%SKIP LOCKED%' AND datname = current_database()`,
      );
      if (rows.length > 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!settled) throw new Error(`no session waited for a row lock in ${schema}`);
  } finally {
    await admin.end();
  }
}

async function leaseOf(schema: string, eventId: string): Promise<number> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT lease_until FROM ${schema}.deliveries WHERE event_id = $1`, [eventId]);
    return Number(rows[0]?.lease_until);
  } finally {
    await client.end();
  }
}
