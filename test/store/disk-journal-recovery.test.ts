/**
 * The old disk journal's reader, which the sqlite store's upgrade import reads old data
 * directories with (adapters/store/sqlite/journal-import/), driven through the old writer kept as a
 * fixture (test/store/old-journal/): reopening keeps everything, a
 * torn tail is told from damage to acknowledged data (which stops without touching the file),
 * the format header is checked, and one owner per journal (the import takes the old lock).
 */
import { spawn } from "node:child_process";
import { appendFile, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  appendRecord,
  createClock,
  createTempDirs,
  journalPath,
  openStore,
  readAll,
  readJournalLines,
  WINDOW,
} from "./disk-journal-helpers.ts";
import type { LegacyDiskStore as StoreDriver } from "./old-journal/disk-store.ts";
import { idsOf, keyOf, makeRecord, T0 } from "./sample-records.ts";

const dirs = createTempDirs();
const open: StoreDriver[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((store) => store.close()));
  await dirs.removeAll();
});

async function start(dir: string, clock = createClock()) {
  const store = await openStore(dir, clock.now);
  open.push(store);
  return store;
}

/** A journal with `n` events written one batch each; returns the dir and the records. */
async function journalWith(n: number) {
  const dir = await dirs.make();
  const store = await start(dir);
  const records = Array.from({ length: n }, (_, i) => makeRecord(i + 1, { receivedAt: T0 + i }));
  for (const record of records) await appendRecord(store, record);
  await store.close();
  return { dir, records };
}

describe("disk journal: reopen", () => {
  it("keeps events, seq continuity, dedupe marks and values across close and reopen", async () => {
    const dir = await dirs.make();
    const clock = createClock();
    const first = await start(dir, clock);
    const records = Array.from({ length: 30 }, (_, i) => makeRecord(i + 1, { receivedAt: T0 + i * 1000 }));
    for (const record of records.slice(0, 10)) await appendRecord(first, record);
    await Promise.all(records.slice(10).map((record) => appendRecord(first, record)));
    expect(await first.purge(T0 + 5000)).toBe(5);
    await first.kvSet("token:esign", "eyJ.abc", 60_000);
    await first.kvSet("gone", "x", 60_000);
    await first.kvDelete("gone");
    expect(await first.kvSetIfAbsent("lock:refresh", "owner-1", 60_000)).toBe(true);
    const before = await readAll(first);
    const lastSeq = await first.lastSeq();
    await first.close();

    for (let round = 0; round < 2; round++) {
      const store = await start(dir, clock);
      expect(await readAll(store)).toEqual(before);
      expect(idsOf(before)).toEqual(idsOf(records.slice(5)));
      expect(await store.lastSeq()).toBe(lastSeq);
      for (const record of records) {
        expect(await store.claim(keyOf(record), 30_000)).toEqual({ status: "duplicate", id: record.id });
      }
      expect(await store.kvGet("token:esign")).toBe("eyJ.abc");
      expect(await store.kvGet("gone")).toBeUndefined();
      expect(await store.kvSetIfAbsent("lock:refresh", "owner-2", 60_000)).toBe(false);
      await store.close();
    }

    clock.advance(60_000);
    const last = await start(dir, clock);
    expect(await last.kvGet("token:esign")).toBeUndefined();
    const next = await appendRecord(last, makeRecord(100, { receivedAt: clock.now() }));
    expect(next.seq).toBeGreaterThan(lastSeq);
    clock.advance(WINDOW);
    expect(await last.claim(keyOf(records[0]!), 30_000)).toEqual({ status: "claimed" });
  });
});

describe("disk journal: torn tail", () => {
  const tails: [string, (lastLine: Buffer) => Buffer][] = [
    ["garbage without a newline", () => Buffer.from('{"e":{"id":"evt_')],
    ["half of a line", (line) => line.subarray(0, line.length >> 1)],
    ["half of a line and a newline", (line) => Buffer.concat([line.subarray(0, 40), Buffer.from("\n")])],
    ["a block of zeros (unwritten pages after power loss)", () => Buffer.alloc(4096)],
  ];
  it.each(tails)("cuts off %s and keeps everything before it", async (_, tail) => {
    const { dir, records } = await journalWith(5);
    const file = await readFile(journalPath(dir));
    const lines = await readJournalLines(dir);
    const lastLine = lines.at(-1)!;
    await appendFile(journalPath(dir), tail(file.subarray(lastLine.offset, lastLine.offset + lastLine.length)));

    const store = await start(dir);
    expect((await stat(journalPath(dir))).size).toBe(file.length);
    expect(idsOf(await readAll(store))).toEqual(idsOf(records));
    await appendRecord(store, makeRecord(6));
    await store.close();
    expect(idsOf(await readAll(await start(dir)))).toEqual(idsOf([...records, makeRecord(6)]));
  });

  it("cuts off a last batch damaged in its middle, with the lines of that batch after the damage", async () => {
    const { dir, records } = await journalWith(3);
    const store = await start(dir);
    const batch = [4, 5, 6].map((n) => makeRecord(n, { receivedAt: T0 + n }));
    await Promise.all(batch.map((record) => appendRecord(store, record)));
    await store.close();
    const lines = await readJournalLines(dir);
    const last = lines.slice(-3);
    expect(new Set(last.map((l) => l.batch))).toEqual(new Set([last[0]!.offset]));
    // Power loss can leave a middle page of the unsynced batch unwritten while a later one landed.
    const file = await readFile(journalPath(dir));
    file.fill(0, last[0]!.offset + 30, last[0]!.offset + 60);
    await writeFile(journalPath(dir), file);

    const reopened = await start(dir);
    expect(idsOf(await readAll(reopened))).toEqual(idsOf(records));
    expect((await stat(journalPath(dir))).size).toBe(last[0]!.offset);
  });
});

describe("disk journal: damage to acknowledged data", () => {
  it("refuses to open, names the byte, and leaves the file as it was", async () => {
    const { dir } = await journalWith(5);
    const lines = await readJournalLines(dir);
    const file = await readFile(journalPath(dir));
    const at = lines[1]!.offset + 100;
    file[at] = file[at] === 0x41 ? 0x42 : 0x41;
    await writeFile(journalPath(dir), file);

    const message = new RegExp(`damaged at byte ${lines[1]!.offset}.*not a torn write`);
    await expect(openStore(dir, Date.now)).rejects.toThrow(message);
    expect(await readFile(journalPath(dir))).toEqual(file);
    // The failed open gave the lock back: the second attempt reports the damage again.
    await expect(openStore(dir, Date.now)).rejects.toThrow(message);
  });
});

describe("disk journal: format header", () => {
  it("stays empty until the first write, then starts with the header alone in its own batch", async () => {
    const dir = await dirs.make();
    const store = await start(dir);
    await store.claim("esign\u0000a", 30_000);
    expect((await stat(journalPath(dir))).size).toBe(0);
    await Promise.all([1, 2].map((n) => appendRecord(store, makeRecord(n))));
    const [header, ...rest] = await readJournalLines(dir);
    expect(header?.entry).toEqual({ journal: "svc-gateway-events", version: 1 });
    expect(rest.map((line) => line.batch)).toEqual([header!.length, header!.length]);
  });

  it("refuses a journal of another format and leaves it untouched (it is not a torn write)", async () => {
    const dir = await dirs.make();
    const oldFormat = `${JSON.stringify({ e: makeRecord(1), k: "k", x: 1 })}\n${JSON.stringify({ m: "k2", i: "i", x: 1 })}\n`;
    await writeFile(journalPath(dir), oldFormat);
    await expect(openStore(dir, Date.now)).rejects.toThrow(
      /does not start with a svc-gateway-events v1 journal header/,
    );
    expect(await readFile(journalPath(dir), "utf8")).toBe(oldFormat);
  });

  it("cuts off a header torn before its newline and starts afresh", async () => {
    const dir = await dirs.make();
    await writeFile(journalPath(dir), '1a2b3c4d 000000000000 {"journal":"svc-gat');
    const store = await start(dir);
    expect((await stat(journalPath(dir))).size).toBe(0);
    await appendRecord(store, makeRecord(1));
    await store.close();
    expect(idsOf(await readAll(await start(dir)))).toEqual([makeRecord(1).id]);
  });
});

describe("disk journal: lock", () => {
  const lockPath = (dir: string) => join(dir, "LOCK");
  const runNode = (code: string) => spawn(process.execPath, ["-e", code], { stdio: "ignore" });

  it("refuses a second owner in the same process and frees the journal on close", async () => {
    const dir = await dirs.make();
    const store = await start(dir);
    await expect(openStore(dir, Date.now)).rejects.toThrow(/already open in this process/);
    await store.close();
    await expect(stat(lockPath(dir))).rejects.toThrow();
    await start(dir);
  });

  it("refuses a journal whose lock names a live process", async () => {
    const dir = await dirs.make();
    const child = runNode("setInterval(() => {}, 1000)");
    try {
      await writeFile(lockPath(dir), String(child.pid));
      await expect(openStore(dir, Date.now)).rejects.toThrow(new RegExp(`in use by process ${child.pid}`));
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("takes over a lock left by a dead process, or naming this pid without being held", async () => {
    const dir = await dirs.make();
    const child = runNode("");
    await new Promise((resolve) => child.once("exit", resolve));
    await writeFile(lockPath(dir), String(child.pid));
    const store = await start(dir);
    expect(await readFile(lockPath(dir), "utf8")).toBe(String(process.pid));
    await store.close();
    await writeFile(lockPath(dir), String(process.pid));
    await start(dir);
  });
});
