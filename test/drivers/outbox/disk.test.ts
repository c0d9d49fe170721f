/**
 * Runs the outbox conformance suite against the disk driver, plus what only a log has: a torn
 * last line is cut off, a corrupt middle line stops start-up, compaction keeps the live state.
 */
import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { diskOutbox } from "../../../adapters/outbox/disk/disk-outbox.ts";
import type { OutboxStore } from "../../../src/delivery/outbox-contract.ts";
import { makeDelivery, testOutboxDriver } from "../../conformance/outbox-conformance.ts";
import { testOutboxLeases } from "../../conformance/outbox-lease-conformance.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-outbox-"));
  dirs.push(dir);
  return dir;
};
const dirOf = new WeakMap<OutboxStore, string>();

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

testOutboxDriver("disk", {
  async open() {
    const dir = await freshDir();
    const outbox = await diskOutbox({ dir });
    dirOf.set(outbox, dir);
    return outbox;
  },
  async reopen(outbox) {
    const dir = dirOf.get(outbox) as string;
    await outbox.close();
    const again = await diskOutbox({ dir });
    dirOf.set(again, dir);
    return again;
  },
});

testOutboxLeases("disk", {
  async open() {
    return diskOutbox({ dir: await freshDir() });
  },
});

describe("disk outbox log", () => {
  it("cuts off a torn last line and keeps everything before it", async () => {
    const dir = await freshDir();
    const outbox = await diskOutbox({ dir });
    await outbox.createDeliveries([makeDelivery(1, "a"), makeDelivery(2, "a")], 2);
    await outbox.close();
    const log = join(dir, "outbox.log");
    const intact = (await stat(log)).size;
    await appendFile(log, '{"s":[{"eventId":"evt_torn'); // a crash in the middle of a write
    const reopened = await diskOutbox({ dir });
    expect((await reopened.listActive()).map((r) => r.seq)).toEqual([1, 2]);
    expect(await reopened.readCursor()).toBe(2);
    expect((await stat(log)).size).toBe(intact);
    await reopened.close();
  });

  it("refuses to start on a corrupt line followed by good ones", async () => {
    const dir = await freshDir();
    const outbox = await diskOutbox({ dir });
    await outbox.createDeliveries([makeDelivery(1, "a")], 1);
    await outbox.close();
    const log = join(dir, "outbox.log");
    const good = await readFile(log, "utf8");
    await writeFile(log, `${good}not json\n${good}`);
    await expect(diskOutbox({ dir })).rejects.toThrow(/corrupt/);
  });

  it("compacts a log full of overwritten states down to the live records", async () => {
    const dir = await freshDir();
    const outbox = await diskOutbox({ dir, compactMinBytes: 64 * 1024 });
    const records = Array.from({ length: 20 }, (_, i) => makeDelivery(i + 1, "a"));
    await outbox.createDeliveries(records, 20);
    for (let round = 0; round < 200; round++) {
      await outbox.saveDeliveries(records.map((r) => ({ ...r, failures: round, updatedAt: round })));
    }
    const size = (await stat(join(dir, "outbox.log"))).size;
    // 200 rounds of 20 records would be far above 64 KiB without compaction.
    expect(size).toBeLessThan(3 * 64 * 1024);
    await outbox.close();
    const reopened = await diskOutbox({ dir });
    expect((await reopened.listActive()).map((r) => r.failures)).toEqual(records.map(() => 199));
    expect(await reopened.readCursor()).toBe(20);
    await reopened.close();
  });

  it("lets one process own the outbox at a time", async () => {
    const dir = await freshDir();
    await writeFile(join(dir, "outbox.lock"), String(process.ppid));
    await expect(diskOutbox({ dir })).rejects.toThrow(/in use/);
  });
});
