/**
 * The live hub conformance suite against the `postgres` hub driver (journal read, woken by
 * LISTEN/NOTIFY) over the `postgres` store on a real PostgreSQL server; plus what only a
 * cross-instance hub does: a subscriber hears the appends of another instance, in seq order,
 * an append nobody announced (a lost notification) still arrives through the journal poll, and
 * the hub keeps working after the server dropped its listening connection.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresHub } from "../../../adapters/hub/postgres.ts";
import { postgresStore } from "../../../adapters/store/postgres/postgres-store.ts";
import type { EventRecord, StoreDriver } from "../../../src/store/contract.ts";
import { testHubDriver } from "../../conformance/hub-conformance.ts";
import { makeTestRecord } from "../../conformance/sink-conformance.ts";
import { waitFor } from "../../delivery/helpers/webhook-receiver.ts";
import { appendRecords, journalHubHarness } from "../../helpers/journal-hub-harness.ts";
import { type PostgresServer, startPostgresServer } from "../../helpers/postgres-server.ts";

let server: PostgresServer;
let n = 0;

beforeAll(async () => {
  server = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

testHubDriver(
  "postgres",
  journalHubHarness({
    openStore: () => postgresStore({ url: server.url, schema: `h${++n}`, poolSize: 4 }),
    openHub: (journal) => postgresHub({ url: server.url, schema: `h${n}`, journal }),
  }),
);

describe("postgres hub across instances", () => {
  it("hands a subscriber on one instance the other's appends in seq order, announced or not", async () => {
    const schema = `x${++n}`;
    const url = server.url;
    const [storeA, storeB] = await Promise.all([
      postgresStore({ url, schema, poolSize: 4 }),
      postgresStore({ url, schema, poolSize: 4 }),
    ]);
    // A long poll: announced records must arrive through NOTIFY well before it.
    const hubA = await postgresHub({ url, schema, journal: storeA, pollMs: 60_000 });
    const hubB = await postgresHub({ url, schema, journal: storeB, pollMs: 60_000 });
    // A short poll and no announcement: what it hears comes from the journal alone.
    const hubC = await postgresHub({ url, schema: `other${n}`, journal: storeA, pollMs: 50 });
    try {
      const heard: number[] = [];
      hubA.subscribe((record) => heard.push(record.seq));
      const polled: number[] = [];
      hubC.subscribe((record) => polled.push(record.seq));
      const seqs = await appendRecords(storeB, 5, hubB);
      await waitFor("the announced appends", () => heard.length >= seqs.length, 10_000);
      expect(heard).toEqual(seqs);

      const [seq] = (await appendRecords(storeB, 1)) as [number];
      await waitFor("the unannounced append", () => polled.includes(seq), 10_000);
      expect(polled).toEqual([...seqs, seq]);
      // A's subscriber lost nothing and heard nothing twice; it may have read the unannounced
      // append too, when a wake-up of its own (a late notification) reads the log after it.
      expect([seqs, [...seqs, seq]]).toContainEqual(heard);
    } finally {
      await Promise.all([hubA.close(), hubB.close(), hubC.close()]);
      await Promise.all([storeA.close(), storeB.close()]);
    }
  }, 60_000);

  it("listens again after the server dropped its connection and reads what it missed", async () => {
    const schema = `r${++n}`;
    const url = server.url;
    const store = await postgresStore({ url, schema, poolSize: 4 });
    const hub = await postgresHub({ url, schema, journal: store, pollMs: 60_000 });
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const heard: number[] = [];
      hub.subscribe((record) => heard.push(record.seq));
      // The server ends every session listening on the channel (a failover, an idle-kill).
      const killed = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN gateway_events_%' AND pid <> pg_backend_pid()",
      );
      expect(killed.rowCount).toBeGreaterThan(0);
      const record = makeTestRecord();
      const { seq } = await store.append(record, `k\u0000${record.id}`, 60_000);
      // Not announced: only the reconnect's catch-up read (not the 60 s poll) can deliver it in time.
      await waitFor("the append made while the listener was down", () => heard.includes(seq), 30_000);
      const after = makeTestRecord();
      const next = await store.append(after, `k\u0000${after.id}`, 60_000);
      await admin.query("SELECT pg_notify($1, '0')", [`gateway_events_${schema}`]);
      await waitFor("an append announced after the reconnect", () => heard.includes(next.seq), 30_000);
      expect(heard).toEqual([seq, next.seq]);
    } finally {
      await admin.end();
      await hub.close();
      await store.close();
    }
  }, 60_000);

  it("answers its own appends without reading them back, and still hears every seq of two instances appending at once, in order", async () => {
    const schema = `o${++n}`;
    const url = server.url;
    const [storeA, storeB] = await Promise.all([
      postgresStore({ url, schema, poolSize: 4 }),
      postgresStore({ url, schema, poolSize: 4 }),
    ]);
    // Counts what the event log hands each hub (rows read back from PostgreSQL).
    const counted = (store: StoreDriver) => {
      const tally = { rows: 0 };
      const journal: Pick<StoreDriver, "readAfter" | "lastSeq"> = {
        lastSeq: () => store.lastSeq(),
        readAfter: async (after, limit, filter) => {
          const rows = await store.readAfter(after, limit, filter);
          tally.rows += rows.length;
          return rows;
        },
      };
      return { journal, tally };
    };
    const a = counted(storeA);
    const b = counted(storeB);
    const hubA = await postgresHub({ url, schema, journal: a.journal, pollMs: 60_000 });
    const hubB = await postgresHub({ url, schema, journal: b.journal, pollMs: 60_000 });
    try {
      const heardA: EventRecord[] = [];
      const heardB: EventRecord[] = [];
      hubA.subscribe((record) => heardA.push(record));
      hubB.subscribe((record) => heardB.push(record));
      // Alone: A's own appends reach its subscriber from what it published.
      for (let i = 0; i < 50; i++) {
        const record = makeTestRecord();
        const { seq } = await storeA.append(record, `k\u0000${record.id}`, 60_000);
        hubA.publish({ ...record, seq });
      }
      await waitFor("A's own appends", () => heardA.length >= 50 && heardB.length >= 50, 10_000);
      // How many of them A read back depends on timing (an append is visible in the log between
      // its commit and its publish): the saving is counted by the bench (BENCH_PG_STATEMENTS=1),
      // the rule itself by the next test.
      // Together: both instances append and publish at once, several appends in flight each.
      const appendOn = async (store: StoreDriver, hub: typeof hubA, count: number) => {
        const records = Array.from({ length: count }, () => makeTestRecord());
        await Promise.all(
          records.map(async (record) => {
            const { seq } = await store.append(record, `k\u0000${record.id}`, 60_000);
            hub.publish({ ...record, seq });
          }),
        );
      };
      for (let round = 0; round < 10; round++) {
        await Promise.all([appendOn(storeA, hubA, 20), appendOn(storeB, hubB, 20)]);
      }
      const total = 50 + 10 * 40;
      await waitFor("every append on both hubs", () => heardA.length >= total && heardB.length >= total, 30_000);
      const all = await storeA.readAfter(0, total + 10);
      expect(all.map((r) => r.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
      // Each subscriber heard every event once, in seq order, exactly as the event log holds it.
      expect(heardA).toEqual(all);
      expect(heardB).toEqual(all);
    } finally {
      await Promise.all([hubA.close(), hubB.close()]);
      await Promise.all([storeA.close(), storeB.close()]);
    }
  }, 90_000);

  it("answers a read from what it published when that follows its cursor without a gap, and reads the log otherwise", async () => {
    const schema = `p${++n}`;
    const url = server.url;
    const store = await postgresStore({ url, schema, poolSize: 2 });
    const reads: number[] = [];
    const journal: Pick<StoreDriver, "readAfter" | "lastSeq"> = {
      lastSeq: () => store.lastSeq(),
      readAfter: async (after, limit, filter) => {
        reads.push(after);
        return store.readAfter(after, limit, filter);
      },
    };
    const hub = await postgresHub({ url, schema, journal, pollMs: 60_000 });
    try {
      const heard: EventRecord[] = [];
      hub.subscribe((record) => heard.push(record));
      // Published right after the cursor, in order, nothing else announced: never read back.
      // (These records are not in the log at all, so a read would not find them.)
      const published = Array.from({ length: 20 }, (_, i) => ({ ...makeTestRecord(), seq: i + 1 }));
      for (const record of published) hub.publish(record);
      await waitFor("the published records", () => heard.length >= 20, 10_000);
      expect(heard.map((r) => r.seq)).toEqual(published.map((r) => r.seq));
      expect(reads).toEqual([]);
      // A gap after the cursor (seq 22 without 21): the log is read.
      hub.publish({ ...makeTestRecord(), seq: 22 });
      await waitFor("a read of the log", () => reads.length > 0, 10_000);
      expect(reads[0]).toBe(20);
    } finally {
      await hub.close();
      await store.close();
    }
  }, 60_000);
});
