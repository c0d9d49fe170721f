/**
 * Child process of sqlite-startup.test.ts: opens the sqlite store in `argv[2]`, appends
 * `argv[3]` events one by one (each acknowledged, so committed), prints `ready`, and then holds
 * the database until it is killed or its stdin closes.
 */
import { sqliteStore } from "../../adapters/store/sqlite/sqlite-storage.ts";
import { keyOf, makeRecord } from "./sample-records.ts";

const dir = process.argv[2] as string;
const count = Number(process.argv[3] ?? "0");
const store = await sqliteStore({ dir });
for (let n = 1; n <= count; n++) {
  const record = makeRecord(n);
  await store.append(record, keyOf(record), 60_000);
}
process.stdout.write("ready\n");
process.stdin.resume();
process.stdin.on("end", () => {
  store.close().then(() => process.exit(0));
});
