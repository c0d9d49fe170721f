/**
 * The `postgres` store's batched writes: claims that arrive together share one statement, appends
 * are group-committed. What could go wrong there: a record PostgreSQL's JSON types refuse taking
 * its whole batch down with it, and two instances' batches over the same keys deadlocking.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresStore } from "../../adapters/store/postgres/postgres-store.ts";
import { parseFilter } from "../../src/filters/parse-filter.ts";
import type { EventRecord, StoreDriver } from "../../src/store/contract.ts";
import { type PostgresServer, startPostgresServer } from "../helpers/postgres-server.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

let server: PostgresServer;
let n = 0;

beforeAll(async () => {
  server = await startPostgresServer();
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

const DAY = 24 * 3600_000;

function filterOf(value: unknown) {
  const parsed = parseFilter(value);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return parsed.node;
}
const open = (schema: string) => postgresStore({ url: server.url, schema, poolSize: 4 });

describe("postgres store: appends in batches", () => {
  it("stores records PostgreSQL's json types refuse exactly, in the same transaction as ordinary ones", async () => {
    const store = await open(`b${++n}`);
    try {
      const hostile: unknown[] = [
        { note: "nul \u0000 inside", "key\u0000": 1 },
        { lone: "\ud800 high", low: "\udc00 low", pair: "\ud83d\ude00" },
        { text: "\\u0000 and \\ud800 as plain text", quote: 'a "quoted" \\ back\\slash' },
        { deep: [[[{ e: "é ✓ 日本" }]]], n: -0.5e-7, big: 1.5e21 },
      ];
      const records: EventRecord[] = [
        makeRecord(1),
        ...hostile.map((data, i) => ({ ...makeRecord(2 + i, { data }), rawBody: JSON.stringify(data) })),
        makeRecord(9),
      ];
      // Appended in one tick: they travel in one transaction.
      const results = await Promise.all(records.map((r) => store.append(r, keyOf(r), DAY)));
      expect(results.map((r) => r.inserted)).toEqual(records.map(() => true));
      expect(results.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
      for (const [i, record] of records.entries()) {
        expect(await store.get(record.id)).toEqual({ ...record, seq: i + 1 });
      }
      expect(await store.readAfter(0, 100)).toEqual(records.map((r, i) => ({ ...r, seq: i + 1 })));
      // Filtered reads still answer exactly: pushed down where a document was stored, checked
      // in memory where it could not be.
      const ordinary = await store.list({ limit: 50, filter: filterOf({ data: { deep: { $exist: true } } }) });
      expect(ordinary.events.map((e) => e.id)).toEqual([records[4]?.id]);
      const filtered = await store.list({
        limit: 50,
        filter: filterOf({ data: { lone: { $exist: true } } }),
      });
      expect(filtered.events.map((e) => e.id)).toEqual([records[2]?.id]);
      // Duplicates of every one of them are still recognised.
      for (const record of records) {
        expect(await store.claim(keyOf(record), 30_000)).toEqual({ status: "duplicate", id: record.id });
      }
    } finally {
      await store.close();
    }
  });
});

describe("postgres store: appends in batches of every size", () => {
  it("gives seqs in input order and one answer per append whatever the batch's size (padded statements)", async () => {
    const store = await open(`b${++n}`);
    try {
      let next = 0;
      let seq = 0;
      // Batch sizes on and around the powers of two the statements are prepared for, up to
      // more than one transaction holds (the rest goes in the next one).
      for (const size of [1, 2, 3, 4, 5, 8, 9, 31, 64, 100, 256, 257, 300]) {
        const records = Array.from({ length: size }, () => makeRecord(++next));
        const results = await Promise.all(records.map((r) => store.append(r, keyOf(r), DAY)));
        expect(results).toEqual(records.map((_, i) => ({ inserted: true, seq: seq + i + 1 })));
        seq += size;
        const back = await store.readAfter(seq - size, size + 1);
        expect(back).toEqual(records.map((r, i) => ({ ...r, seq: seq - size + i + 1 })));
      }
      expect(await store.lastSeq()).toBe(seq);
    } finally {
      await store.close();
    }
  }, 60_000);

  it("answers ids recorded before, and an id twice in one batch, with the seq already given", async () => {
    const store = await open(`b${++n}`);
    try {
      const old = [makeRecord(1), makeRecord(2)];
      expect(await Promise.all(old.map((r) => store.append(r, keyOf(r), DAY)))).toEqual([
        { inserted: true, seq: 1 },
        { inserted: true, seq: 2 },
      ]);
      const fresh = [makeRecord(3), makeRecord(4)];
      // One batch: a recorded id, a new one, the new one again under another key, a recorded
      // one, another new one.
      const batch: [EventRecord, string][] = [
        [old[1] as EventRecord, "again-2"],
        [fresh[0] as EventRecord, keyOf(fresh[0] as EventRecord)],
        [fresh[0] as EventRecord, "again-3"],
        [old[0] as EventRecord, "again-1"],
        [fresh[1] as EventRecord, keyOf(fresh[1] as EventRecord)],
      ];
      const results = await Promise.all(batch.map(([r, key]) => store.append(r, key, DAY)));
      expect(results).toEqual([
        { inserted: false, seq: 2 },
        { inserted: true, seq: 3 },
        { inserted: false, seq: 3 },
        { inserted: false, seq: 1 },
        { inserted: true, seq: 4 },
      ]);
      expect(await store.lastSeq()).toBe(4);
      // Every key of the batch now names its event.
      for (const [record, key] of batch) {
        expect(await store.claim(key, 30_000)).toEqual({ status: "duplicate", id: record.id });
      }
    } finally {
      await store.close();
    }
  });
});

describe("postgres store: claims in batches", () => {
  /** Claims every key on `store` at once (one or a few statements) and appends what it won. */
  const claimAndAppend = async (store: StoreDriver, records: EventRecord[]) => {
    const claims = await Promise.all(records.map((r) => store.claim(keyOf(r), 30_000)));
    const won = records.filter((_, i) => claims[i]?.status === "claimed");
    await Promise.all(won.map((r) => store.append(r, keyOf(r), DAY)));
    return { claims, won };
  };

  it("gives each key to exactly one of two instances claiming the same keys in opposite orders, without deadlock", async () => {
    const schema = `b${++n}`;
    const a = await open(schema);
    const b = await open(schema);
    try {
      for (let round = 0; round < 5; round++) {
        const records = Array.from({ length: 300 }, (_, i) => makeRecord(round * 1000 + i));
        // The same deliveries reach both instances at once, in opposite orders.
        const [onA, onB] = await Promise.all([claimAndAppend(a, records), claimAndAppend(b, [...records].reverse())]);
        const winners = new Map<string, number>();
        for (const r of [...onA.won, ...onB.won]) winners.set(r.id, (winners.get(r.id) ?? 0) + 1);
        expect(winners.size).toBe(records.length);
        expect([...winners.values()].every((count) => count === 1)).toBe(true);
        // The loser was told to retry (in_progress) or that it is recorded (duplicate), never
        // claimed; after the appends every key answers duplicate with the winner's id.
        const losers = [...onA.claims, ...onB.claims].filter((c) => c.status !== "claimed");
        expect(losers.length).toBe(records.length);
        for (const record of records.slice(0, 20)) {
          expect(await b.claim(keyOf(record), 30_000)).toEqual({ status: "duplicate", id: record.id });
        }
      }
      expect(await a.lastSeq()).toBe(1500);
    } finally {
      await a.close();
      await b.close();
    }
  }, 120_000);

  it("answers a key asked for twice in one batch once as claimed, once as in_progress", async () => {
    const store = await open(`b${++n}`);
    try {
      const record = makeRecord(1);
      // The first two claims go out at once, each its own statement (two are in flight at most),
      // so the two asks for the same key wait together and travel in one statement.
      const answers = await Promise.all([
        store.claim(keyOf(makeRecord(2)), 30_000),
        store.claim(keyOf(makeRecord(3)), 30_000),
        store.claim(keyOf(record), 30_000),
        store.claim(keyOf(record), 30_000),
      ]);
      expect(answers).toEqual([
        { status: "claimed" },
        { status: "claimed" },
        { status: "claimed" },
        { status: "in_progress" },
      ]);
    } finally {
      await store.close();
    }
  });
});
