/**
 * A write the disk refuses (here: a file size limit, a real short write then EFBIG): the append
 * rejects as store-unavailable (the ingress answers 503 and the upstream retries), the partial
 * batch is cut off, and the journal reopens with exactly what was acknowledged.
 */
import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import { promisify } from "node:util";
import { afterEach, expect, it } from "vitest";
import { appendRecord, createClock, createTempDirs, journalPath, openStore, readAll } from "./disk-journal-helpers.ts";
import { idsOf, makeRecord } from "./sample-records.ts";

const CHILD = new URL("./append-until-refused.ts", import.meta.url).pathname;
const LIMIT_KIB = 64;

const dirs = createTempDirs();
afterEach(() => dirs.removeAll());

it("rejects refused appends, cuts off the partial batch and reopens with exactly the acknowledged events", async () => {
  const dir = await dirs.make();
  const { stdout } = await promisify(execFile)(
    "bash",
    ["-c", `ulimit -f ${LIMIT_KIB} && exec "$0" --import tsx "$1" "$2"`, process.execPath, CHILD, dir],
    { timeout: 30_000 },
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
  // The cut-off succeeded, so the store reports itself healthy and lists only what was acknowledged.
  expect(report.pingAfterFailure).toBe("ok");
  expect(report.listed).toEqual(report.acked);
  expect((await stat(journalPath(dir))).size).toBeLessThan(LIMIT_KIB * 1024);

  const clock = createClock();
  const store = await openStore(dir, clock.now);
  expect(idsOf(await readAll(store))).toEqual(report.acked);
  const more = makeRecord(30_000);
  expect((await appendRecord(store, more)).inserted).toBe(true);
  expect(idsOf(await readAll(store))).toEqual([...report.acked, more.id]);
  await store.close();
});
