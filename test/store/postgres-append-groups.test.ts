/**
 * The `postgres` store's append groups, several instances on one database. What must hold: seq
 * order is commit order (a reader that saw seq n has seen every seq below n, whatever the
 * instances and groups in flight), and an id recorded by another instance while a group waited
 * for the journal counter's lock answers with its seq instead of failing the group.
 */
import pg from "pg";
import { describe, expect, it } from "vitest";
import { postgresStore } from "../../adapters/store/postgres/postgres-store.ts";
import type { StoreDriver } from "../../src/store/contract.ts";
import { usePostgresServer } from "../helpers/postgres-server.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

const pgServer = usePostgresServer();
let n = 0;
const DAY = 24 * 3600_000;

/** Two instances on one fresh schema (default pool size: the appends have connections of their own). */
async function twoInstances(): Promise<{ schema: string; a: StoreDriver; b: StoreDriver }> {
  const schema = `ag${++n}`;
  const a = await postgresStore({ url: pgServer.server.url, schema });
  const b = await postgresStore({ url: pgServer.server.url, schema });
  return { schema, a, b };
}

/** Resolves once `count` append statements wait for a lock (the counter's row). */
async function appendsWaitingForLock(count: number): Promise<void> {
  for (let i = 0; i < 2_000; i++) {
    const { rows } = await pgServer.admin.query<{ n: string }>(
      "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE meta SET value = value%'",
    );
    if (Number(rows[0]?.n) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`fewer than ${count} appends ever waited for the counter's lock`);
}

/**
 * Holds the journal counter's row lock in a session of its own (pg_stat_activity, polled by
 * `admin`, is frozen within a transaction); `release` commits and ends the session.
 */
async function holdCounterLock(schema: string): Promise<{ release: () => Promise<void>; end: () => Promise<void> }> {
  const holder = new pg.Client({ connectionString: pgServer.server.url });
  await holder.connect();
  await holder.query("BEGIN");
  await holder.query(`UPDATE ${schema}.meta SET value = value WHERE key = 'last_seq'`);
  return {
    release: async () => {
      await holder.query("COMMIT");
    },
    end: () => holder.end().catch(() => {}),
  };
}

describe("postgres store: append groups", () => {
  it("seq order is commit order: a reader following the log never skips a seq, with two instances appending", async () => {
    const { a, b } = await twoInstances();
    try {
      const total = 1_200;
      let appended = 0;
      const writer = async (store: StoreDriver, first: number) => {
        // Waves of concurrent appends, the next sent while the ones before are in flight (they
        // gather into the next group), on two instances whose groups contend for the counter.
        const waves: Promise<unknown>[] = [];
        for (let wave = 0; wave < total / 2 / 20; wave++) {
          const records = Array.from({ length: 20 }, (_, i) => makeRecord(first + wave * 20 + i));
          waves.push(Promise.all(records.map((r) => store.append(r, keyOf(r), DAY))).then(() => (appended += 20)));
          if (wave % 3 === 2) await Promise.race(waves);
        }
        await Promise.all(waves);
      };
      // The reader follows the log as the hub and the router do: read after its cursor, move to
      // the last seq read. A seq committed after a higher one would be skipped for good.
      let cursor = 0;
      const reader = async () => {
        for (let round = 0; round < 100_000 && cursor < total; round++) {
          // Whether every append had resolved before this read began: only then does an empty
          // page mean the end (a read that began before the last commits may not see them).
          const allAppended = appended === total;
          const page = await a.readAfter(cursor, 100);
          for (const record of page) {
            expect(record.seq, `after ${cursor}`).toBe(cursor + 1);
            cursor = record.seq;
          }
          if (page.length === 0 && allAppended) break;
        }
      };
      await Promise.all([writer(a, 1), writer(b, 1_000_000), reader()]);
      expect(cursor).toBe(total);
      expect(await a.lastSeq()).toBe(total);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);

  it("an id another instance recorded while the group waited for the counter answers with its seq", async () => {
    const { schema, a, b } = await twoInstances();
    let lock: Awaited<ReturnType<typeof holdCounterLock>> | undefined;
    try {
      await a.append(makeRecord(1), keyOf(makeRecord(1)), DAY);
      // Hold the counter's row lock so that both appends take their snapshot before either
      // records the event: one of them then finds the id taken only when it inserts.
      lock = await holdCounterLock(schema);
      const record = makeRecord(2);
      const both = [a.append(record, "first-key", DAY), b.append(record, "second-key", DAY)];
      await appendsWaitingForLock(2);
      await lock.release();
      const results = await Promise.all(both);
      expect(results.filter((r) => r.inserted)).toHaveLength(1);
      expect(results.map((r) => r.seq)).toEqual([2, 2]);
      expect(await a.lastSeq()).toBe(2);
      // Both keys name the event; the log holds it once.
      expect(await a.claim("first-key", 30_000)).toEqual({ status: "duplicate", id: record.id });
      expect(await b.claim("second-key", 30_000)).toEqual({ status: "duplicate", id: record.id });
      expect((await a.readAfter(0, 10)).map((e) => e.id)).toEqual([makeRecord(1).id, record.id]);
      // Appends go on as before.
      expect((await b.append(makeRecord(3), keyOf(makeRecord(3)), DAY)).seq).toBe(3);
    } finally {
      await lock?.end();
      await Promise.all([a.close(), b.close()]);
    }
  }, 60_000);

  it("a burst of large events goes in groups of at most 4 MiB of rows, a larger event alone; every one recorded whole", async () => {
    // Before the limit, the events queued behind a group went together in the next one: 47 events
    // of about 1 MB in one statement (and 256 of 300 concurrent appends of about 1 MB failed together when
    // pg built that statement for longer than the append's 5 s idle limit).
    const { schema, a, b } = await twoInstances();
    let lock: Awaited<ReturnType<typeof holdCounterLock>> | undefined;
    try {
      const large = (i: number, chars: number) =>
        makeRecord(100 + i, { data: { event_id: `big-${i}`, note: `${i}:${"x".repeat(chars)}` } });
      const records = Array.from({ length: 48 }, (_, i) => large(i, i === 20 ? 6 * 1024 * 1024 : 512 * 1024));
      // The counter's lock held elsewhere: the first append's group waits for it and the others
      // queue behind, as a burst does behind a group in flight.
      lock = await holdCounterLock(schema);
      const appended = records.map((r) => a.append(r, keyOf(r), DAY));
      await appendsWaitingForLock(1);
      await lock.release();
      const results = await Promise.all(appended);
      expect(results.every((r) => r.inserted)).toBe(true);
      // One group is one transaction: its rows share their xmin.
      const { rows: groups } = await pgServer.admin.query<{ events: number; chars: string; ids: string[] }>(
        `SELECT count(*)::int AS events, sum(length(record))::text AS chars, array_agg(id) AS ids
           FROM ${schema}.events GROUP BY xmin::text`,
      );
      const bigId = (records[20] as { id: string }).id;
      for (const group of groups) {
        if (group.ids.includes(bigId)) expect(group.events).toBe(1);
        // Record and filter document each hold the note: at most 3 events of ~1 MiB fit in 4 MiB.
        else expect(group.events).toBeLessThanOrEqual(3);
      }
      expect(groups.reduce((sum, g) => sum + g.events, 0)).toBe(48);
      // Every event reads back whole, from either instance.
      const read = await b.readAfter(0, 100);
      expect(read.map((r) => r.id)).toEqual(records.map((r) => r.id));
      for (const [i, record] of read.entries()) {
        expect(JSON.stringify(record.event)).toBe(JSON.stringify((records[i] as { event: unknown }).event));
      }
    } finally {
      await lock?.end();
      await Promise.all([a.close(), b.close()]);
    }
  }, 120_000);
});
