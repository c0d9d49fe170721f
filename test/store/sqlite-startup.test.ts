/**
 * Start-up of the sqlite store is honest (docs/storage.md#the-sqlite-store): a second process on
 * the same data
 * directory is refused by SQLite's own lock, a lock never outlives its process (kill -9), the
 * WAL recovered after a crash is reported at warn with what was kept and dropped, and a
 * database that vanished where one was recorded stops start-up instead of starting empty.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFile, mkdtemp, rm, stat, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteOutbox, sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { createLogger } from "../../src/ops/logger.ts";
import { idsOf, keyOf, makeRecord } from "./sample-records.ts";

const HOLD = new URL("./sqlite-hold.ts", import.meta.url).pathname;
const dirs: string[] = [];
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-sqlite-start-"));
  dirs.push(dir);
  return dir;
};

/** Starts a child that appends `count` events and then holds the database. */
async function holdInChild(dir: string, count: number) {
  const child = spawn(process.execPath, ["--import", "tsx", HOLD, dir, String(count)], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  children.push(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => line === "ready" && resolve());
    exited.then(() => reject(new Error("the holder exited before it was ready")));
  });
  return { child, exited };
}

function captureLogs() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger("debug", (line) => lines.push(JSON.parse(line))) };
}

describe("sqlite start-up", () => {
  it("refuses a second process, and takes over at once when the owner was killed (no stale lock)", async () => {
    const dir = await freshDir();
    const { child, exited } = await holdInChild(dir, 40);
    await expect(sqliteStore({ dir })).rejects.toThrow(/in use by another gateway process/);
    await expect(sqliteOutbox({ dir })).rejects.toThrow(/in use by another gateway process/);

    child.kill("SIGKILL");
    await exited;
    // The crash left the WAL behind; some bytes of an unfinished write on top of it.
    await appendFile(join(dir, "gateway.db-wal"), Buffer.alloc(3000, 7));
    const { lines, logger } = captureLogs();
    const store = await sqliteStore({ dir, logger });
    const expected = Array.from({ length: 40 }, (_, i) => makeRecord(i + 1).id);
    expect(idsOf(await store.readAfter(0, 1000))).toEqual(expected);
    const warning = lines.find((l) => l.level === "warn");
    expect(warning).toMatchObject({ msg: "recovered the sqlite write-ahead log of an unclean shutdown" });
    expect(warning?.committed_transactions_kept as number).toBeGreaterThanOrEqual(40);
    expect(warning?.bytes_ignored as number).toBeGreaterThanOrEqual(3000);
    await store.close();

    // A clean close leaves no WAL, so the next start reports nothing.
    await expect(stat(join(dir, "gateway.db-wal"))).rejects.toThrow(/ENOENT/);
    const quiet = captureLogs();
    const again = await sqliteStore({ dir, logger: quiet.logger });
    expect(quiet.lines.filter((l) => l.level === "warn")).toEqual([]);
    await again.close();
  });

  it("refuses a second store on the same directory in this process, and shares one database with the outbox", async () => {
    const dir = await freshDir();
    const store = await sqliteStore({ dir });
    await expect(sqliteStore({ dir })).rejects.toThrow(/already open in this process/);
    const outbox = await sqliteOutbox({ dir });
    const record = makeRecord(1);
    await store.append(record, keyOf(record), 60_000);
    await store.close();
    // The outbox keeps the database open after the store closed.
    await outbox.createDeliveries([], 7);
    expect(await outbox.readCursor()).toBe(7);
    await outbox.close();
    const reopened = await sqliteStore({ dir });
    expect((await reopened.get(record.id))?.id).toBe(record.id);
    await reopened.close();
  });

  it("stops start-up when the recorded database is missing instead of starting empty", async () => {
    const dir = await freshDir();
    const store = await sqliteStore({ dir });
    const record = makeRecord(1);
    await store.append(record, keyOf(record), 60_000);
    await store.close();
    await unlink(join(dir, "gateway.db"));
    await expect(sqliteStore({ dir })).rejects.toThrow(
      /gateway\.db is missing, but .*store\.json records that one was created/,
    );
    // Deleting the marker is the explicit way to start empty.
    await unlink(join(dir, "store.json"));
    const empty = await sqliteStore({ dir });
    expect(await empty.lastSeq()).toBe(0);
    await empty.close();
  });
});
