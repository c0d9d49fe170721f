/**
 * `gateway backup [--config FILE] --to PATH` and `gateway restore [--config FILE] --from PATH`:
 * an online copy of the sqlite store while the gateway serves, and putting one back while no
 * gateway holds the store (adapters/store/sqlite/backup-database.ts,
 * docs/backups-and-upgrades.md). The other stores are backed up by their own service: the
 * commands say which tool to use, in one line.
 */
import { resolve } from "node:path";
import { defineCommand } from "citty";
import type { StoreConfig } from "../../src/config/schema.ts";
import { CliFailure } from "./cli-errors.ts";
import { describeStore, loadStoreConfig } from "./store-command-config.ts";

/** The one line for a store these commands do not copy. */
function elsewhere(store: StoreConfig, command: "backup" | "restore"): CliFailure {
  const what = describeStore(store);
  if (store.driver === "memory")
    return new CliFailure(`${what} keeps nothing between runs: there is nothing to ${command}`);
  if (store.driver === "postgres") {
    return new CliFailure(
      `${what} is ${command === "backup" ? "backed up with pg_dump" : "restored with pg_restore"} (or the database service's own backups), not by the gateway (docs/backups-and-upgrades.md)`,
    );
  }
  return new CliFailure(
    `${what} is ${command === "backup" ? "backed up" : "restored"} by Redis itself, not by the gateway: use RDB snapshots (BGSAVE) or the AOF of the Redis server${store.driver === "upstash" ? ", or Upstash's backups in its console" : ""} (docs/backups-and-upgrades.md)`,
  );
}

/** Refusals of the sqlite copy become one line (exit 1). */
async function oneLine<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Error && error.name === "BackupRefusedError") throw new CliFailure(error.message);
    throw error;
  }
}

export const backupCommand = defineCommand({
  meta: { name: "backup", description: "Copy the sqlite store while the gateway serves (online backup)" },
  args: {
    config: {
      type: "string",
      valueHint: "file.ts|file.json",
      description: "Configuration file (default: zero-config)",
    },
    to: { type: "string", valueHint: "path", required: true, description: "The backup file to write (must not exist)" },
  },
  async run({ args }) {
    const store = await loadStoreConfig(args.config);
    if (store.driver !== "sqlite" && store.driver !== "disk") throw elsewhere(store, "backup");
    const { backupDatabase } = await import("../store/sqlite/backup-database.ts");
    const { describeVersion } = await import("../../src/store/store-version.ts");
    const to = resolve(args.to);
    const result = await oneLine(() => backupDatabase(store.dir, to));
    console.log(
      `backed up ${describeStore(store)} to ${to}: ${result.pages} pages, ${Math.ceil(result.bytes / 1024)} KiB, ${describeVersion(result.version)}, in ${Math.round(result.ms)} ms`,
    );
  },
});

export const restoreCommand = defineCommand({
  meta: { name: "restore", description: "Replace the sqlite store with a backup (no gateway may be running on it)" },
  args: {
    config: {
      type: "string",
      valueHint: "file.ts|file.json",
      description: "Configuration file (default: zero-config)",
    },
    from: { type: "string", valueHint: "path", required: true, description: "The backup file (from gateway backup)" },
  },
  async run({ args }) {
    const store = await loadStoreConfig(args.config);
    if (store.driver !== "sqlite" && store.driver !== "disk") throw elsewhere(store, "restore");
    const { describeRestored, restoreDatabase } = await import("../store/sqlite/backup-database.ts");
    const from = resolve(args.from);
    const result = await oneLine(() => restoreDatabase(store.dir, from));
    console.log(
      `restored ${from} into ${describeStore(store)} (${describeRestored(result.version)})${result.replaced ? `; the replaced database is kept as ${result.replaced}` : ""}`,
    );
  },
});
