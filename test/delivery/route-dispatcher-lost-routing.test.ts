/**
 * Routing writes lost after they were acknowledged (PostgreSQL commits them asynchronously: a
 * crash of the server can take the last ones, records and cursor together). Simulated on a real
 * PostgreSQL outbox under running dispatchers by setting the stored cursor back and deleting the
 * records after it: the dispatcher that finds the stored cursor behind its own (at its next
 * routing write, or at its poll when no event comes) routes again from the stored cursor, so
 * every event ends with its record, created again under the same ids and handed to the lanes;
 * an outcome write for a record the crash took puts the row back, and routing again keeps it.
 */
import { describe, expect, it } from "vitest";
import { postgresOutbox } from "../../adapters/outbox/postgres/postgres-outbox.ts";
import { memoryStore } from "../../adapters/store/memory.ts";
import type { DeliveryRecord, OutboxStore } from "../../src/delivery/outbox-contract.ts";
import { RoutingCursorBehindError } from "../../src/delivery/outbox-contract.ts";
import { createRouteDispatcher } from "../../src/delivery/route-dispatcher.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { compileRoutes } from "../../src/routes/match-routes.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { usePostgresServer } from "../helpers/postgres-server.ts";
import { keyOf, makeRecord, recordId } from "../store/sample-records.ts";
import { createManualTime } from "./helpers/manual-time.ts";

const POLL_MS = 1_000;

// Nothing writes the WAL in the background (no autovacuum, the WAL writer every 10 s): what a
// commit leaves unflushed stays so while a test looks.
const db = usePostgresServer({ settings: { autovacuum: "off", wal_writer_delay: "10000" } });
let n = 0;

/** What a crash that took the routing commits after `seq` leaves behind. */
async function loseRoutingAfter(schema: string, seq: number) {
  await db.admin.query(`UPDATE ${schema}.meta SET value = $1 WHERE key = 'routing_cursor'`, [seq]);
  await db.admin.query(`DELETE FROM ${schema}.deliveries WHERE seq > $1`, [seq]);
}

async function storedIds(schema: string): Promise<string[]> {
  const { rows } = await db.admin.query<{ event_id: string }>(`SELECT event_id FROM ${schema}.deliveries ORDER BY seq`);
  return rows.map((r) => r.event_id);
}

/** The pending record of event `seq` for the destination "hook", as routing creates it. */
const record = (seq: number): DeliveryRecord => ({
  eventId: recordId(seq),
  destinationId: "hook",
  seq,
  receivedAt: 1,
  createdAt: 1,
  updatedAt: 1,
  state: "pending",
  nextAttemptAt: 1,
  failures: 0,
  attempts: [],
});

const ids = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => recordId(from + i));

async function setup() {
  const schema = `lost${++n}`;
  const store = await memoryStore(undefined);
  const work = new Set<Promise<unknown>>();
  const settle = async () => {
    while (work.size > 0) await Promise.all([...work]);
  };
  const time = createManualTime(settle);
  const outboxes: OutboxStore[] = [];
  /** An outbox on this test's schema, closed by `close`. */
  const openOutbox = async () => {
    const outbox = await postgresOutbox({ url: db.server.url, schema, poolSize: 2 });
    outboxes.push(outbox);
    return outbox;
  };
  /** One gateway instance's dispatcher on the shared outbox; `handed`: what it gave its lanes. */
  const instance = async (owner: string) => {
    const outbox = await openOutbox();
    const handed: DeliveryRecord[] = [];
    const dispatcher = createRouteDispatcher({
      store: store as StoreDriver,
      outbox,
      routes: compileRoutes([{ types: ["*"], destinations: ["hook"] }]),
      clock: time.clock,
      scheduler: time.scheduler,
      logger: createLogger("silent"),
      initialState: (id) => (id === "hook" ? "pending" : undefined),
      onCreated: (records) => handed.push(...records),
      creationLease: () => ({ owner, until: time.clock.now() + 30_000 }),
      track: (promise) => {
        work.add(promise);
        void promise.finally(() => work.delete(promise));
      },
      batchSize: 4,
      pollIntervalMs: POLL_MS,
    });
    await dispatcher.start();
    await settle();
    return { outbox, dispatcher, handed };
  };
  /** Appends events `from..to` and offers each to `to` dispatchers, as the hub does. */
  const append = async (from: number, to: number, offerTo: ReturnType<typeof createRouteDispatcher>[]) => {
    for (let i = from; i <= to; i++) {
      const record = makeRecord(i);
      const { seq } = await store.append(record, keyOf(record), 60_000);
      for (const dispatcher of offerTo) dispatcher.offer({ ...record, seq });
    }
    await settle();
  };
  const close = async () => {
    await settle();
    for (const outbox of outboxes) await outbox.close();
  };
  return { schema, openOutbox, instance, append, settle, time, close };
}

describe("routing writes lost after their acknowledgement (PostgreSQL asynchronous commit)", () => {
  it("refuses a routing write whose stored cursor is behind the one its caller knows, writing nothing", async () => {
    const t = await setup();
    const outbox = await t.openOutbox();
    expect(await outbox.createDeliveries([record(1), record(2)], 2, undefined, 0)).toHaveLength(2);
    await loseRoutingAfter(t.schema, 1);
    const refused = await outbox.createDeliveries([record(3)], 3, undefined, 2).catch((error) => error);
    expect(refused).toBeInstanceOf(RoutingCursorBehindError);
    expect(refused).toMatchObject({ stored: 1, expected: 2 });
    expect(await outbox.readCursor()).toBe(1);
    expect(await storedIds(t.schema)).toEqual(ids(1, 1));
    // From the stored cursor on, the write goes through; re-creating a surviving record is a no-op.
    const created = await outbox.createDeliveries([record(1), record(2), record(3)], 3, undefined, 1);
    expect(created.map((r) => r.seq)).toEqual([2, 3]);
    expect(await outbox.readCursor()).toBe(3);
    await t.close();
  });

  it("commits a routing write asynchronously (alone, or with others in one transaction), a save synchronously", async () => {
    const t = await setup();
    const outbox = await t.openOutbox();
    /** WAL bytes inserted and not flushed yet. */
    const unflushed = async () =>
      Number((await db.admin.query("SELECT pg_current_wal_insert_lsn() - pg_current_wal_flush_lsn() AS d")).rows[0].d);
    for (let seq = 1; seq <= 3; seq++) {
      await outbox.saveDeliveries([{ ...record(seq), seq: 0 }]);
      expect(await unflushed()).toBe(0);
      await outbox.createDeliveries([record(seq + 100)], seq, undefined, seq - 1);
      expect(await unflushed()).toBeGreaterThan(0);
    }
    // Writes queued while one is in flight share the next transaction: asynchronous too.
    await outbox.saveDeliveries([record(50)]);
    expect(await unflushed()).toBe(0);
    await Promise.all([
      outbox.createDeliveries([record(201)], 4, undefined, 3),
      outbox.createDeliveries([record(202)], 5),
      outbox.createDeliveries([record(203)], 6),
    ]);
    expect(await unflushed()).toBeGreaterThan(0);
    expect(await outbox.readCursor()).toBe(6);
    await t.close();
  });

  it("the dispatcher that wrote them routes again from the stored cursor at its next write: every event has its record", async () => {
    const t = await setup();
    const a = await t.instance("a");
    await t.append(1, 10, [a.dispatcher]);
    expect(await storedIds(t.schema)).toEqual(ids(1, 10));
    expect(a.dispatcher.cursor).toBe(10);

    await loseRoutingAfter(t.schema, 4);
    // A lane finished event 7's attempt after the loss: its outcome write puts the row back
    // (no error), and routing again leaves it as it is.
    const seven = a.handed.find((r) => r.eventId === recordId(7)) as DeliveryRecord;
    await a.outbox.saveDeliveries([{ ...seven, state: "delivered", updatedAt: seven.updatedAt + 1 }]);
    await t.append(11, 13, [a.dispatcher]);
    expect(await storedIds(t.schema)).toEqual(ids(1, 13));
    expect(await a.outbox.readCursor()).toBe(13);
    expect((await a.outbox.getDelivery(recordId(7), "hook"))?.state).toBe("delivered");
    // The other lost records went to the lanes again (same ids), every other record once.
    const again = ids(5, 10).filter((id) => id !== recordId(7));
    const handed = a.handed.map((r) => r.eventId);
    expect(handed.filter((id) => ids(5, 10).includes(id))).toEqual([...ids(5, 10), ...again]);
    expect(new Set(handed)).toEqual(new Set(ids(1, 13)));
    a.dispatcher.stop();
    await t.close();
  });

  it("with no event after the loss, the poll finds the stored cursor behind and routes again", async () => {
    const t = await setup();
    const a = await t.instance("a");
    await t.append(1, 6, [a.dispatcher]);
    await loseRoutingAfter(t.schema, 2);
    await t.time.advance(POLL_MS);
    expect(await storedIds(t.schema)).toEqual(ids(1, 6));
    expect(await a.outbox.readCursor()).toBe(6);
    expect(a.dispatcher.cursor).toBe(6);
    a.dispatcher.stop();
    await t.close();
  });

  it("another instance, which read the lost cursor and routed on from it, never writes past the lost events", async () => {
    const t = await setup();
    const a = await t.instance("a");
    await t.append(1, 8, [a.dispatcher]);
    // "b" starts after "a" routed: it knows the cursor (8) only from reading it.
    const b = await t.instance("b");
    expect(b.dispatcher.cursor).toBe(8);
    // "b" routes the next event alone (it created every record: it no longer reads the cursor first).
    await t.append(9, 9, [b.dispatcher]);
    await loseRoutingAfter(t.schema, 3);
    // Only "b" hears of the next events ("a" is idle and its poll has not come yet).
    await t.append(10, 11, [b.dispatcher]);
    expect(await storedIds(t.schema)).toEqual(ids(1, 11));
    expect(await b.outbox.readCursor()).toBe(11);
    expect(new Set(b.handed.map((r) => r.eventId))).toEqual(new Set(ids(4, 11)));
    expect(new Set(a.handed.map((r) => r.eventId))).toEqual(new Set(ids(1, 8)));
    a.dispatcher.stop();
    b.dispatcher.stop();
    await t.close();
  });
});
