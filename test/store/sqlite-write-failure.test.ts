/**
 * A write the disk refuses (a file size limit: SQLite's WAL write fails with a real EFBIG): the
 * append rejects as store-unavailable (the ingress answers 503 and the upstream retries), the
 * failed transaction is rolled back whole, and the database reopens with exactly what was
 * acknowledged.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { idsOf, keyOf, makeRecord } from "./sample-records.ts";

const CHILD = new URL("./sqlite-append-until-refused.ts", import.meta.url).pathname;
const LIMIT_KIB = 1024;

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

it("rejects refused appends, rolls the batch back and reopens with exactly the acknowledged events", async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-sqlite-full-"));
  dirs.push(dir);
  const { stdout } = await promisify(execFile)(
    "bash",
    ["-c", `ulimit -f ${LIMIT_KIB} && exec "$0" --import tsx "$1" "$2"`, process.execPath, CHILD, dir],
    { timeout: 60_000 },
  );
  const report = JSON.parse(stdout) as {
    acked: string[];
    errors: string[];
    pingAfterFailure: string;
    listed: string[];
    batchFulfilled: number;
  };
  expect(report.acked.length).toBeGreaterThan(5);
  expect(report.errors).toEqual(Array(11).fill("StoreUnavailableError"));
  expect(report.batchFulfilled).toBe(0);
  expect(report.pingAfterFailure).toBe("ok");
  expect(report.listed).toEqual(report.acked);

  // Without the limit: recovery keeps every acknowledged event and nothing else, and appends work.
  const store = await sqliteStore({ dir });
  expect(idsOf(await store.readAfter(0, 100_000))).toEqual(report.acked);
  const more = makeRecord(30_000);
  expect((await store.append(more, keyOf(more), 60_000)).inserted).toBe(true);
  expect(idsOf(await store.readAfter(0, 100_000))).toEqual([...report.acked, more.id]);
  await store.close();
});
