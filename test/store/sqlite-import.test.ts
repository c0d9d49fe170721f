/**
 * The upgrade path: a data directory written by the previous disk store (journal.log and
 * outbox.log, written here by that code itself) is imported on the first start of the sqlite
 * driver, including a torn tail, which is left out and reported but not cut from the old file.
 * The old journal and outbox writer is no driver any more: it is kept frozen as a test fixture
 * (test/store/old-journal/) that writes the old directories here; its recovery, with the
 * import in adapters/store/sqlite/journal-import/, is the import's reader.
 */
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openSqliteStorage } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { createLogger } from "../../src/ops/logger.ts";
import type { EventRecord } from "../../src/store/contract.ts";
import { makeDelivery } from "../conformance/outbox-conformance.ts";
import { diskOutbox } from "./old-journal/disk-outbox.ts";
import { diskStore } from "./old-journal/disk-store.ts";
import { keyOf, makeRecord, T0 } from "./sample-records.ts";

const WINDOW = 72 * 3600_000;
const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/**
 * Writes an old-format data directory: 30 events (10 purged), a value, deliveries, states. With
 * `compact`, the purge rewrites the journal (survivors at new offsets, marks of purged events
 * kept), as the old store did once enough of it was dead.
 */
async function writeOldDataDir(now: () => number, { compact = false } = {}) {
  const dir = await mkdtemp(join(tmpdir(), "gw-sqlite-import-"));
  dirs.push(dir);
  const compaction = compact ? { compactMinDeadBytes: 0, compactMinDeadRatio: 0 } : {};
  const journal = await diskStore({ dir, now, ...compaction });
  const records: EventRecord[] = [];
  for (let n = 1; n <= 30; n++) {
    const record = makeRecord(n, { receivedAt: T0 + n, sourceId: n % 2 ? "esign" : "staffing" });
    records.push({ ...record, seq: (await journal.append(record, keyOf(record), WINDOW)).seq });
  }
  const before = (await stat(join(dir, "journal.log"))).size;
  expect(await journal.purge(T0 + 11)).toBe(10);
  if (compact) expect((await stat(join(dir, "journal.log"))).size).toBeLessThan(before);
  await journal.kvSet("token:esign", "eyJ.cached", 3600_000);
  await journal.close();
  const outbox = await diskOutbox({ dir });
  await outbox.createDeliveries(
    records.slice(10).map((r) => makeDelivery(r.seq, "crm", { eventId: r.id })),
    30,
  );
  await outbox.saveDeliveries([
    makeDelivery(records[12]?.seq as number, "crm", { eventId: records[12]?.id, state: "dead" }),
  ]);
  await outbox.saveDestinationState({ id: "crm", paused: true, disabled: false, updatedAt: 5 });
  await outbox.close();
  return { dir, records };
}

function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("debug", (line) => lines.push(JSON.parse(line))) };
}

describe("importing the old disk journal", () => {
  it.each([
    { journal: "as written", compact: false },
    { journal: "compacted", compact: true },
  ])(
    "imports events, seqs, dedupe marks, values and the outbox of a journal $journal, leaving a torn tail out and the old files intact",
    async ({ compact }) => {
      const now = () => T0 + 1000;
      const { dir, records } = await writeOldDataDir(now, { compact });
      // A crash in the middle of the next batch of each log: bytes that were never acknowledged.
      const tornJournal = '0badc0de 00000000ffff {"e":{"id":"evt_torn","seq":31';
      await appendFile(join(dir, "journal.log"), tornJournal);
      await appendFile(join(dir, "outbox.log"), '{"s":[{"eventId":"evt_torn"');
      const journalBefore = await readFile(join(dir, "journal.log"));

      const { lines, logger } = captureLogs();
      const { store, outbox } = await openSqliteStorage({ dir, now, logger });
      const kept = records.slice(10);
      expect((await store.readAfter(0, 100)).map((r) => r.id)).toEqual(kept.map((r) => r.id));
      for (const record of kept) expect(await store.get(record.id)).toEqual(record);
      expect(await store.lastSeq()).toBe(30);
      // Marks of purged events still answer duplicates within their window.
      expect(await store.claim(keyOf(records[0] as EventRecord), 30_000)).toEqual({
        status: "duplicate",
        id: records[0]?.id,
      });
      expect(await store.kvGet("token:esign")).toBe("eyJ.cached");
      expect(await outbox.readCursor()).toBe(30);
      expect(await outbox.countByState()).toEqual({ crm: { pending: 19, dead: 1 } });
      expect(await outbox.listDestinationStates()).toEqual([
        { id: "crm", paused: true, disabled: false, updatedAt: 5 },
      ]);
      // New appends continue the old sequence.
      const next = makeRecord(99);
      expect((await store.append(next, keyOf(next), WINDOW)).seq).toBe(31);

      const torn = lines.find((l) => l.level === "warn");
      expect(torn).toMatchObject({ journal_bytes_dropped: Buffer.byteLength(tornJournal), outbox_bytes_dropped: 27 });
      expect(lines.find((l) => String(l.msg).startsWith("imported"))).toMatchObject({ events: 20, deliveries: 20 });
      expect(await readFile(join(dir, "journal.log"))).toEqual(journalBefore);
      await store.close();
      await outbox.close();

      // Imported once: the database is used from now on, and the old files are ignored.
      await writeFile(join(dir, "journal.log"), "not a journal any more\n");
      const again = await openSqliteStorage({ dir, now });
      expect(await again.store.lastSeq()).toBe(31);
      await again.store.close();
      await again.outbox.close();
    },
  );

  it("refuses a journal whose acknowledged data is damaged, and creates no database", async () => {
    const now = () => T0 + 1000;
    const { dir } = await writeOldDataDir(now);
    const path = join(dir, "journal.log");
    const data = await readFile(path);
    // Damage a byte in the middle of the second line (an acknowledged event).
    const second = data.indexOf(10) + 40;
    data[second] = data[second] === 0x41 ? 0x42 : 0x41;
    await writeFile(path, data);
    await expect(openSqliteStorage({ dir, now })).rejects.toThrow(/damaged at byte .* not a torn write/);
    await expect(stat(join(dir, "gateway.db"))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(dir, "store.json"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses an outbox log with a corrupt line followed by good ones, and creates no database", async () => {
    const now = () => T0 + 1000;
    const { dir } = await writeOldDataDir(now);
    const log = join(dir, "outbox.log");
    const good = await readFile(log, "utf8");
    await writeFile(log, `${good}not json\n${good}`);
    await expect(openSqliteStorage({ dir, now })).rejects.toThrow(/outbox log is corrupt at byte/);
    await expect(stat(join(dir, "gateway.db"))).rejects.toThrow(/ENOENT/);
  });

  it("imports a compacted outbox log with the last state of every record", async () => {
    const now = () => T0 + 1000;
    const { dir } = await writeOldDataDir(now);
    await rm(join(dir, "outbox.log"));
    const old = await diskOutbox({ dir, compactMinBytes: 64 * 1024 });
    const deliveries = Array.from({ length: 20 }, (_, i) => makeDelivery(i + 1, "crm"));
    await old.createDeliveries(deliveries, 20);
    for (let round = 0; round < 200; round++) {
      await old.saveDeliveries(deliveries.map((r) => ({ ...r, failures: round, updatedAt: round })));
    }
    await old.close();
    // 200 rounds of 20 records would be far above 64 KiB: the log was compacted before the import.
    expect((await stat(join(dir, "outbox.log"))).size).toBeLessThan(3 * 64 * 1024);
    const { store, outbox } = await openSqliteStorage({ dir, now });
    expect((await outbox.listActive()).map((r) => r.failures)).toEqual(deliveries.map(() => 199));
    expect(await outbox.readCursor()).toBe(20);
    await store.close();
    await outbox.close();
  });

  it.each(["LOCK", "outbox.lock"])(
    "refuses to import while a gateway of the previous version still owns the old files (%s)",
    async (lock) => {
      const now = () => T0 + 1000;
      const { dir } = await writeOldDataDir(now);
      await writeFile(join(dir, lock), String(process.ppid));
      await expect(openSqliteStorage({ dir, now })).rejects.toThrow(/in use by process/);
      await expect(stat(join(dir, "gateway.db"))).rejects.toThrow(/ENOENT/);
    },
  );
});
