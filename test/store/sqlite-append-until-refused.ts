/**
 * Child process of sqlite-write-failure.test.ts, run under a file size limit (`ulimit -f`):
 * appends one event at a time until the disk refuses one (the WAL cannot grow: a real EFBIG),
 * then a concurrent batch, and prints what was acknowledged and how the store behaved, as JSON.
 */
import { sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { StoreUnavailableError } from "../../src/store/contract.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

const dir = process.argv[2] as string;
const store = await sqliteStore({ dir });
const acked: string[] = [];
const errors: string[] = [];
for (let n = 0; n < 10_000; n++) {
  const record = makeRecord(n + 1);
  try {
    await store.append(record, keyOf(record), 60_000);
    acked.push(record.id);
  } catch (error) {
    errors.push(error instanceof StoreUnavailableError ? "StoreUnavailableError" : String(error));
    break;
  }
}
const pingAfterFailure = await store.ping().then(
  () => "ok",
  (error: Error) => error.message,
);
const batch = Array.from({ length: 10 }, (_, i) => makeRecord(20_000 + i));
const settled = await Promise.allSettled(batch.map((record) => store.append(record, keyOf(record), 60_000)));
for (const result of settled) {
  if (result.status === "rejected")
    errors.push(result.reason instanceof StoreUnavailableError ? "StoreUnavailableError" : String(result.reason));
}
const listed = (await store.readAfter(0, 100_000)).map((record) => record.id);
await store.close().catch(() => {});
process.stdout.write(
  JSON.stringify({
    acked,
    errors,
    pingAfterFailure,
    listed,
    batchFulfilled: settled.filter((s) => s.status === "fulfilled").length,
  }),
);
