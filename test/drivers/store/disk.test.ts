/**
 * The store conformance suite against the disk journal: once reading every record back from the
 * file (no record cache, so offsets are exercised), once with the default cache.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { diskStore } from "../../../adapters/store/disk/disk-store.ts";
import { testStoreDriver } from "../../conformance/store-conformance.ts";

const dirs: string[] = [];
const freshDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "gw-store-"));
  dirs.push(dir);
  return dir;
};
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

testStoreDriver("disk (reads from the file)", async ({ now }) =>
  diskStore({ dir: await freshDir(), now, cacheSize: 0 }),
);
testStoreDriver("disk (record cache)", async ({ now }) => diskStore({ dir: await freshDir(), now }));
